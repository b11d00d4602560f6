// Package httpapi is Sediment's HTTP API on fasthttp: Logflare's ingest
// routes, query endpoint routes, management API and health checks
// (docs/compat/logflare.md; docs/compat/supabase.md for what Vector,
// Studio and pino-logflare send).
//
// Files, one concern each:
//
//	server.go     Options, Server, lifecycle (Serve, SetReady, Shutdown)
//	router.go     method + path → handler, the /analytics/v1 prefix,
//	              Expect: 100-continue
//	body.go       request bodies: read after auth, size and in-flight caps
//	framing.go    Content-Length with Transfer-Encoding refused
//	admission.go  query slots and queue (429 past them)
//	clientgone.go cancelling the query of a client that went away
//	peek_*.go     a non-blocking look at a connection
//	conns.go      connection states, for a shutdown that does not wait
//	              on idle connections
//	drops.go      per-source ingest counts and dropped events by reason
//	auth.go       API key extraction and checks
//	cors.go       CORS headers and preflight answers
//	respond.go    JSON bodies and status helpers
//	health.go     /health and /ready
//	ingest.go     the ingest handler and its per-worker state
//	rules.go      per-source ingest rules (drop LQL, custom message keys)
//	recent.go     the last events of each source, for /recent
//	sources.go    /api/sources management
//	endpoints.go  /api/endpoints management
//	schema.go     /api/sources/:token/schema rendering
//	repair.go     /api/sources/:token/repair-wal (a damaged log, repaired live)
//	query.go      query endpoint routes and the QueryRunner interface
//	params.go     query endpoint parameter collection
//	accesslog.go  request logging
//	ui.go         the web explorer at / and /ui/ (files from package ui)
//	access.go     /api/access: what a key may do and reach
//	event.go      /api/sources/:source/event: one stored event whole
//	lqlerror.go   search errors that name the LQL clause
//	runinfo.go    cache and timing headers of query endpoint answers
//
// Query execution is not here: handlers call a QueryRunner.
package httpapi
