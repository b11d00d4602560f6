package main

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"runtime"
	"testing"
)

// TestDebugRuntimeMetrics: the debug listener answers the runtime's CPU
// classes as JSON, the figures `sediment bench` reads the GC share from.
func TestDebugRuntimeMetrics(t *testing.T) {
	ln, err := startDebugListener("127.0.0.1:0", slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	runtime.GC() // the CPU classes are brought up to date by a collection
	res, err := http.Get("http://" + ln.Addr().String() + "/debug/runtime-metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var m map[string]float64
	if err := json.NewDecoder(res.Body).Decode(&m); err != nil {
		t.Fatal(err)
	}
	if ct := res.Header.Get("Content-Type"); res.StatusCode != http.StatusOK || ct != "application/json" {
		t.Fatalf("status %d, content type %q", res.StatusCode, ct)
	}
	gc, total, idle := m["/cpu/classes/gc/total:cpu-seconds"], m["/cpu/classes/total:cpu-seconds"], m["/cpu/classes/idle:cpu-seconds"]
	if !(total > 0 && gc > 0 && gc+idle <= total) || m["/gc/cycles/total:gc-cycles"] < 1 {
		t.Fatalf("gc %v idle %v total %v cycles %v", gc, idle, total, m["/gc/cycles/total:gc-cycles"])
	}
	if _, ok := m["/gc/heap/allocs:bytes"]; !ok {
		t.Fatal("no /gc/heap/allocs:bytes")
	}
}
