package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"time"
)

func init() {
	commands["health"] = command{summary: "probe a running server's /health (exit 0 when it answers ok): the container healthcheck", run: runHealth}
}

// runHealth is `sediment health`: GET /health of the server on this
// machine and exit 0 only for 200 {"status":"ok"}. It is the container
// image's healthcheck, since a distroless image has no wget or curl. With
// no --url it finds the port the way `sediment serve` does
// (SEDIMENT_LISTEN, else PHX_HTTP_PORT, else 4000) and dials loopback.
func runHealth(args []string, stdout, stderr io.Writer) int {
	return probeHealth(args, os.Getenv, stdout, stderr)
}

func probeHealth(args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("health", flag.ContinueOnError)
	fs.SetOutput(stderr)
	url := fs.String("url", "", "the server's base URL (default http://127.0.0.1:<port of SEDIMENT_LISTEN or PHX_HTTP_PORT, else 4000>)")
	timeout := fs.Duration("timeout", 5*time.Second, "how long to wait for the answer")
	quiet := fs.Bool("quiet", false, "print nothing; the exit status says it all")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: sediment health [--url URL] [--timeout 5s] [--quiet]")
		fmt.Fprintln(stderr, "Exits 0 when GET /health answers 200 {\"status\":\"ok\"}, 1 otherwise.")
		printFlags(stderr, fs, false)
	}
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return 2
	}
	base := *url
	if base == "" {
		base = "http://" + localServerAddr(getenv)
	}
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(base, "/")+"/health", nil)
	if err != nil {
		fmt.Fprintln(stderr, "sediment health:", err)
		return 2
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		if !*quiet {
			fmt.Fprintln(stderr, "sediment health:", err)
		}
		return 1
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(res.Body, 64<<10))
	var h struct {
		Status string `json:"status"`
	}
	ok := res.StatusCode == http.StatusOK && json.Unmarshal(body, &h) == nil && h.Status == "ok"
	if !*quiet {
		w := stdout
		if !ok {
			w = stderr
		}
		fmt.Fprintf(w, "%d %s\n", res.StatusCode, strings.TrimSpace(string(body)))
	}
	if !ok {
		return 1
	}
	return 0
}

// localServerAddr is the host:port of the server `sediment serve` would
// run with this environment, as seen from the same machine.
func localServerAddr(getenv func(string) string) string {
	listen := strings.TrimSpace(getenv(flagEnvName("listen")))
	if listen == "" {
		port := strings.TrimSpace(getenv("PHX_HTTP_PORT"))
		if port == "" {
			port = "4000"
		}
		listen = ":" + port
	}
	host, port, err := net.SplitHostPort(listen)
	if err != nil {
		return listen
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port)
}
