package main

import (
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
)

// startDebugListener serves Go's profiler on its own listener, apart from
// the API: it exposes internals, so it is off unless --debug-listen is set
// and belongs on a loopback address.
func startDebugListener(addr string, log *slog.Logger) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	go func() {
		if err := http.Serve(ln, mux); err != nil {
			log.Debug("debug listener stopped", "err", err)
		}
	}()
	log.Info("debug listener", "addr", ln.Addr().String())
	return ln, nil
}
