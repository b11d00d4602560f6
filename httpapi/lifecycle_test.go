package httpapi

import (
	"context"
	"testing"
	"time"
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
