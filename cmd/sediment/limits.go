package main

import (
	"flag"
	"fmt"
	"time"

	"github.com/sediment/sediment/httpapi"
)

// httpLimits are the serve flags that bound what clients can hold of the
// server: queries running and waiting, request bodies. Zero means the
// default (httpapi.Options documents each); the default of the in-flight
// body bytes follows --memory-limit.
type httpLimits struct {
	MaxConcurrentQueries int
	MaxQueuedQueries     int
	QueryQueueWait       time.Duration
	MaxInflightBodyBytes int64
	MaxBodyBytes         int64
}

// register adds the flags to fs; the returned function, called after
// fs.Parse, reads the sizes.
func (l *httpLimits) register(fs *flag.FlagSet) (parse func() error) {
	fs.IntVar(&l.MaxConcurrentQueries, "max-concurrent-queries", 0, "queries (endpoints, ad-hoc SQL, LQL searches) that run at once (default: the number of cores, at least 2)")
	fs.IntVar(&l.MaxQueuedQueries, "max-queued-queries", 0, "queries that wait for a slot when all are taken; past it a query gets 429 at once (default 8 per slot; -1: none)")
	fs.DurationVar(&l.QueryQueueWait, "query-queue-wait", 0, "how long a query waits for a slot before it gets 429 (default 10s)")
	inflight := fs.String("max-inflight-body-bytes", "", "request body bytes held in memory at once over all connections; past it a request gets 429 (default: a quarter of --memory-limit, at least 32MiB; 256MiB without a memory limit)")
	body := fs.String("max-body-bytes", "", "largest request body, before and after decompression; past it 413 (default 12000000, Logflare's limit)")
	return func() error {
		for _, f := range []struct {
			name string
			text string
			dst  *int64
		}{{"max-inflight-body-bytes", *inflight, &l.MaxInflightBodyBytes}, {"max-body-bytes", *body, &l.MaxBodyBytes}} {
			if f.text == "" {
				continue
			}
			n, err := parseBytes(f.text)
			if err != nil || n > 1<<40 {
				return fmt.Errorf("--%s: invalid size %q", f.name, f.text)
			}
			*f.dst = n
		}
		if l.MaxConcurrentQueries < 0 || l.QueryQueueWait < 0 {
			return fmt.Errorf("--max-concurrent-queries and --query-queue-wait must not be negative")
		}
		return nil
	}
}

// apply sets the limits on the HTTP server's options; memoryLimit is
// --memory-limit (0: none).
func (l httpLimits) apply(o *httpapi.Options, memoryLimit int64) {
	o.MaxConcurrentQueries = l.MaxConcurrentQueries
	o.MaxQueuedQueries = l.MaxQueuedQueries
	o.QueryQueueWait = l.QueryQueueWait
	o.MaxBodyBytes = int(l.MaxBodyBytes)
	o.MaxInflightBodyBytes = l.MaxInflightBodyBytes
	if o.MaxInflightBodyBytes == 0 {
		o.MaxInflightBodyBytes = defaultInflightBodyBytes(memoryLimit)
	}
}

// defaultInflightBodyBytes sizes the bytes of request bodies held at once
// from the memory limit: a quarter of it (64 MiB at the default 256 MiB,
// five bodies of Logflare's largest size), never below 32 MiB so that two
// of the largest bodies fit; without a limit, httpapi's default.
func defaultInflightBodyBytes(memoryLimit int64) int64 {
	if memoryLimit <= 0 {
		return httpapi.DefaultMaxInflightBodyBytes
	}
	return max(memoryLimit/4, 32<<20)
}
