package httpapi

import (
	"github.com/valyala/fasthttp"

	"github.com/sediment/sediment/catalog"
	"github.com/sediment/sediment/engine"
)

// GET /api/access tells the caller what its key may do and lists what it
// may reach, so that a client (the web explorer) shows only that. It is
// Sediment's own route: Logflare has none like it. Any known key gets 200;
// no key or an unknown one gets 401 {"error":"Unauthorized"}.
//
//	{
//	  "scopes": ["query"],
//	  "manage": false,   // the management API (/api/sources, /api/endpoints, /api/query)
//	  "search": true,    // search and live tail of every source
//	  "sources": [       // when search: every source, with what it holds
//	    {"token": "...", "name": "cloudflare.logs.prod", "event_count": 1200,
//	     "oldest_event_timestamp": 1752148800000000, "newest_event_timestamp": 1752152399000000,
//	     "storage_bytes": 48213, "unflushed_event_count": 200}
//	  ],
//	  "endpoints": [     // the query endpoints the key may run
//	    {"token": "...", "name": "logs.all", "description": null, "language": "bq_sql",
//	     "query": "select ...", "parameters": ["project", "sql"], "sandboxable": true,
//	     "cache_duration_seconds": 0, "max_limit": 1000, "enable_auth": true}
//	  ]
//	}
//
// event_count counts events stored and in memory; the timestamps are unix
// microseconds (null for an empty source); storage_bytes is the size of
// the source's segment files, and unflushed_event_count the events not in
// them yet (in memory and in the write-ahead log, queryable already). An endpoint's query is shown to keys
// that may search every source (scopes private and query); a key scoped
// to one endpoint (query:endpoint:<id>) gets null, since the query may
// name sources it may not read.

type accessView struct {
	Scopes    []string         `json:"scopes"`
	Manage    bool             `json:"manage"`
	Search    bool             `json:"search"`
	Sources   []accessSource   `json:"sources"`
	Endpoints []accessEndpoint `json:"endpoints"`
}

type accessSource struct {
	Token                string `json:"token"`
	Name                 string `json:"name"`
	EventCount           int64  `json:"event_count"`
	OldestEventTimestamp *int64 `json:"oldest_event_timestamp"`
	NewestEventTimestamp *int64 `json:"newest_event_timestamp"`
	StorageBytes         int64  `json:"storage_bytes"`
	UnflushedEventCount  int64  `json:"unflushed_event_count"`
}

type accessEndpoint struct {
	Token                string   `json:"token"`
	Name                 string   `json:"name"`
	Description          *string  `json:"description"`
	Language             string   `json:"language"`
	Query                *string  `json:"query"`
	Parameters           []string `json:"parameters"`
	Sandboxable          bool     `json:"sandboxable"`
	CacheDurationSeconds int      `json:"cache_duration_seconds"`
	MaxLimit             int      `json:"max_limit"`
	EnableAuth           bool     `json:"enable_auth"`
}

// endpointDescriber is implemented by a QueryRunner that can list an
// endpoint's declared parameters (query/endpoints.Service does).
type endpointDescriber interface {
	EndpointParameters(ep *catalog.Endpoint) []string
}

// mayReadEverything reports whether tok may search every source: scope
// private or query.
func mayReadEverything(tok *catalog.AccessToken) bool {
	return tok.HasScope(catalog.ScopePrivate) || tok.HasScope(catalog.ScopeQuery)
}

// handleAccess answers GET /api/access.
func (s *Server) handleAccess(ctx *fasthttp.RequestCtx) {
	tok := s.authenticate(ctx)
	if tok == nil {
		sendStatic(ctx, fasthttp.StatusUnauthorized, bodyUnauthorized)
		return
	}
	v := accessView{
		Scopes: append([]string{}, tok.Scopes...), Manage: tok.CanManage(), Search: mayReadEverything(tok),
		Sources: []accessSource{}, Endpoints: []accessEndpoint{},
	}
	if v.Search {
		shards := map[string]*engine.Shard{}
		for _, sh := range s.eng.Shards() {
			shards[sh.ID()] = sh
		}
		for _, src := range s.cat.Sources() {
			v.Sources = append(v.Sources, sourceStats(src, shards[src.Token]))
		}
	}
	describer, _ := s.queryRunner().(endpointDescriber)
	for _, ep := range s.cat.Endpoints() {
		if !tok.CanQuery(ep.ID) {
			continue
		}
		e := accessEndpoint{
			Token: ep.Token, Name: ep.Name, Description: nullable(ep.Description), Language: ep.Language,
			Parameters: []string{}, Sandboxable: ep.Sandboxable, CacheDurationSeconds: ep.CacheDurationSeconds,
			MaxLimit: ep.MaxLimit, EnableAuth: ep.EnableAuth,
		}
		if v.Search {
			q := ep.Query
			e.Query = &q
		}
		if describer != nil {
			if p := describer.EndpointParameters(ep); p != nil {
				e.Parameters = p
			}
		}
		v.Endpoints = append(v.Endpoints, e)
	}
	sendJSON(ctx, fasthttp.StatusOK, v)
}

// sourceStats describes what a source holds; sh is nil for a source no
// event was ever written to (its shard is not open, and is not opened
// here).
func sourceStats(src *catalog.Source, sh *engine.Shard) accessSource {
	out := accessSource{Token: src.Token, Name: src.Name}
	if sh == nil {
		return out
	}
	in := sh.Info()
	out.EventCount = int64(in.SegmentRows) + int64(in.HeadRows)
	out.StorageBytes = in.SegmentBytes
	out.UnflushedEventCount = int64(in.HeadRows)
	if out.EventCount > 0 {
		lo, hi := in.MinTime, in.MaxTime
		out.OldestEventTimestamp, out.NewestEventTimestamp = &lo, &hi
	}
	return out
}
