package httpapi

import (
	"bufio"
	"context"
	"io"
	"net"
	"testing"
	"time"

	"github.com/valyala/fasthttp"
)

// TestShutdownFinishesInFlight: a request running when shutdown starts is
// answered normally, and Shutdown waits for it.
func TestShutdownFinishesInFlight(t *testing.T) {
	ts := startServer(t, serverConfig{})
	ts.runner.block = make(chan struct{})
	ts.runner.started = make(chan struct{}, 1)

	got := make(chan response, 1)
	go func() {
		got <- ts.do("GET", "/api/endpoints/query/logs.all", nil, withKey(privKey)...)
	}()
	<-ts.runner.started

	shutdownDone := make(chan error, 1)
	go func() { shutdownDone <- ts.srv.Shutdown(context.Background()) }()
	// Give Shutdown time to close the listener; it must still be waiting.
	time.Sleep(300 * time.Millisecond)
	select {
	case err := <-shutdownDone:
		t.Fatalf("Shutdown returned with a request in flight: %v", err)
	default:
	}
	if !ts.srv.draining.Load() {
		t.Fatal("not draining")
	}
	close(ts.runner.block)
	got1 := <-got
	got1.expect(t, 200, logsAllResult)
	if err := <-shutdownDone; err != nil {
		t.Fatal(err)
	}
	if _, err := ts.client.Get(ts.base + "/health"); err == nil {
		t.Fatal("server still accepting after shutdown")
	}
}

// TestReadyDuringDrain: with a drain delay, /ready answers 503 while the
// server still accepts requests, then the listener closes.
func TestReadyDuringDrain(t *testing.T) {
	ts := startServer(t, serverConfig{opts: Options{DrainDelay: time.Second}})
	ts.do("GET", "/ready", nil).expect(t, 200, `{"status":"ok"}`)
	ts.do("POST", "/api/logs?source_name=postgres.logs", []byte(`{"message":"before"}`), withKey(pubKey, jsonCT...)...).expect(t, 200, logged)

	done := make(chan error, 1)
	go func() { done <- ts.srv.Shutdown(context.Background()) }()
	for !ts.srv.draining.Load() {
		time.Sleep(time.Millisecond)
	}
	ts.do("GET", "/ready", nil).expect(t, 503, `{"status":"not_ready"}`)
	ts.do("GET", "/health", nil).expect(t, 200, `{"status":"ok"}`)
	// Ingest still works while draining.
	ts.do("POST", "/api/logs?source_name=postgres.logs", []byte(`{"message":"during drain"}`), withKey(pubKey, jsonCT...)...).expect(t, 200, logged)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if _, err := ts.client.Get(ts.base + "/health"); err == nil {
		t.Fatal("server still accepting after shutdown")
	}
	if n := len(ts.events("postgres.logs")); n != 2 {
		t.Fatalf("%d events", n)
	}
}

// TestShutdownClosesIdleConnections: connections with no request in
// flight (one that connected and sent nothing, one kept alive after a
// request) do not hold shutdown: it returns nil within a 3 s budget, where
// it used to wait for the new connection 5 s (fasthttp) or until the
// shutdown timeout (fasthttp before v1.78: `context deadline exceeded`,
// exit status 1). Nothing in the server's path waits: both connections are
// closed when shutdown starts, and fasthttp notices within its 100 ms poll,
// so the budget is 30 polls of slack on a loaded machine.
func TestShutdownClosesIdleConnections(t *testing.T) {
	ts := startServer(t, serverConfig{})
	silent := dialServer(t, ts)
	keptAlive := dialServer(t, ts)
	io.WriteString(keptAlive, "GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
	br := bufio.NewReader(keptAlive)
	if res, _ := readResponse(t, keptAlive, br); res.StatusCode != 200 || res.Close {
		t.Fatalf("%d close=%v", res.StatusCode, res.Close)
	}
	// Both connections are open and known to the server.
	waitFor(t, "two connections", func() bool {
		ts.srv.conns.mu.Lock()
		defer ts.srv.conns.mu.Unlock()
		return len(ts.srv.conns.conns) == 2
	})

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if err := ts.srv.Shutdown(ctx); err != nil {
		t.Fatalf("shutdown with idle connections: %v", err)
	}
	if err := <-ts.served; err != nil {
		t.Fatalf("serve: %v", err)
	}
	ts.served <- nil // for the cleanup's stop
	for _, c := range []net.Conn{silent, keptAlive} {
		_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
		if n, err := c.Read(make([]byte, 1)); err == nil {
			t.Fatalf("connection still open after shutdown (%d bytes read)", n)
		}
	}
}

// TestRequestOnConnectionClosedByShutdown: a request read from a
// connection that shutdown closed (it arrived in the instant between the
// server seeing the connection silent and closing it) is dropped without
// doing anything, so that nothing is done for a client that cannot be
// answered.
func TestRequestOnConnectionClosedByShutdown(t *testing.T) {
	ts := startServer(t, serverConfig{})
	server, client := net.Pipe()
	defer client.Close()
	ts.srv.conns.hook(server, fasthttp.StateNew)
	ts.srv.conns.closeSilent()
	ts.srv.conns.hook(server, fasthttp.StateActive) // the request's first byte, read just before the close

	var ctx fasthttp.RequestCtx
	ctx.Init2(server, nil, false)
	ctx.Request.Header.SetMethod("POST")
	ctx.Request.SetRequestURI("/api/logs?source_name=postgres.logs")
	ctx.Request.Header.Set("X-API-KEY", pubKey)
	ctx.Request.Header.SetContentType("application/json")
	ctx.Request.SetBodyString(`{"message":"never"}`)
	ts.srv.handle(&ctx)
	if n := len(ts.events("postgres.logs")); n != 0 {
		t.Fatalf("%d events stored from a request on a connection closed by shutdown", n)
	}
	ts.srv.conns.hook(server, fasthttp.StateClosed)
}

// TestShutdownBeforeServeStarts: a Shutdown that runs before Serve's
// goroutine has started (a signal right at startup, a loaded machine) still
// ends Serve; fasthttp alone would not know the listener yet and Serve
// would run for good.
func TestShutdownBeforeServeStarts(t *testing.T) {
	ts := startServer(t, serverConfig{})
	ts.do("GET", "/health", nil).expect(t, 200, `{"status":"ok"}`)
	srv, err := New(Options{Engine: ts.srv.opts.Engine, Catalog: ts.srv.opts.Catalog})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err := <-served:
		if err != nil {
			t.Fatalf("serve: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Serve still running after Shutdown")
	}
	if c, err := net.Dial("tcp", ln.Addr().String()); err == nil {
		c.Close()
		t.Fatal("the listener still accepts")
	}
}
