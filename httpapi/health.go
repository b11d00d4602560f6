package httpapi

import (
	"time"

	"github.com/valyala/fasthttp"
)

// handleHealth answers GET /health: 503 {"status":"coming_up"} until
// SetReady (in Supabase mode, until seeding is done), then 200
// {"status":"ok"} (docs/compat/logflare.md §10), with "version" and "commit"
// when Options set them. Docker's healthcheck polls it.
// It reads two flags and nothing else, so that it never waits behind
// queries or ingest.
func (s *Server) handleHealth(ctx *fasthttp.RequestCtx) {
	if !s.ready.Load() {
		sendStatic(ctx, fasthttp.StatusServiceUnavailable, bodyComingUp)
		return
	}
	if s.opts.Version == "" && s.opts.Commit == "" {
		sendStatic(ctx, fasthttp.StatusOK, bodyHealthOK)
		return
	}
	// Fields besides status are Sediment's; Studio and Docker's healthcheck
	// read the status (and the code) only.
	sendJSON(ctx, fasthttp.StatusOK, struct {
		Status  string `json:"status"`
		Version string `json:"version,omitempty"`
		Commit  string `json:"commit,omitempty"`
	}{"ok", s.opts.Version, s.opts.Commit})
}

// handleReady answers GET /ready: 503 {"status":"not_ready"} while
// starting and while draining for shutdown; otherwise 200, with
// {"status":"ok"} when every source is healthy and
// {"status":"degraded","sources":[...]} naming each degraded source and
// what is wrong with it (a full disk, a damaged write-ahead log,
// quarantined data, failing background work). A degraded source does not
// make the server unready: the other sources keep serving, and taking the
// server out of a load balancer would stop them too.
func (s *Server) handleReady(ctx *fasthttp.RequestCtx) {
	if !s.ready.Load() || s.draining.Load() {
		sendStatic(ctx, fasthttp.StatusServiceUnavailable, bodyNotReady)
		return
	}
	conds := s.eng.Conditions()
	var server []ServerCondition
	if s.opts.ServerConditions != nil {
		server = s.opts.ServerConditions()
	}
	if len(conds) == 0 && len(server) == 0 {
		sendStatic(ctx, fasthttp.StatusOK, bodyHealthOK)
		return
	}
	type condition struct {
		Kind          string `json:"kind"`
		RefusesIngest bool   `json:"refuses_ingest"`
		Detail        string `json:"detail"`
		Since         string `json:"since"`
		Count         int64  `json:"count"`
	}
	type source struct {
		Name       string      `json:"name"`
		Token      string      `json:"token"`
		Conditions []condition `json:"conditions"`
	}
	var out []source
	for _, c := range conds {
		if len(out) == 0 || out[len(out)-1].Token != c.Shard {
			name := ""
			if src := s.cat.SourceByToken(c.Shard); src != nil {
				name = src.Name
			}
			out = append(out, source{Name: name, Token: c.Shard})
		}
		last := &out[len(out)-1]
		last.Conditions = append(last.Conditions, condition{Kind: string(c.Kind), RefusesIngest: c.RefusesIngest,
			Detail: c.Detail, Since: c.Since.UTC().Format(time.RFC3339), Count: c.Count})
	}
	if out == nil {
		out = []source{}
	}
	sendJSON(ctx, fasthttp.StatusOK, struct {
		Status  string            `json:"status"`
		Sources []source          `json:"sources"`
		Server  []ServerCondition `json:"server,omitempty"`
	}{"degraded", out, server})
}
