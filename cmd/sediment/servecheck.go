package main

import (
	"flag"
	"fmt"
	"io"
	"log/slog"
	"time"
)

// serveUsage is `sediment serve --help`.
func serveUsage(w io.Writer, fs *flag.FlagSet) {
	fmt.Fprintln(w, "usage: sediment serve [flags]")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Every flag can also be set by the environment variable shown under it.")
	fmt.Fprintln(w, "Precedence: the command line, then SEDIMENT_*, then Logflare's variables")
	fmt.Fprintln(w, "(LOGFLARE_SUPABASE_MODE, LOGFLARE_LOG_LEVEL, PHX_HTTP_PORT), then the default.")
	fmt.Fprintln(w, "Keys come from LOGFLARE_PUBLIC_ACCESS_TOKEN (or LOGFLARE_API_KEY) and")
	fmt.Fprintln(w, "LOGFLARE_PRIVATE_ACCESS_TOKEN; with neither, keys are generated into")
	fmt.Fprintln(w, "<data-dir>/generated-keys.json.")
	fmt.Fprintln(w)
	printFlags(w, fs, true)
}

// intRange is the valid range of a numeric flag; 0 is always accepted and
// means the default.
type intRange struct {
	flag     string
	value    int64
	min, max int64
	zero     string // what 0 means
}

func (r intRange) check() error {
	if r.value == 0 || (r.value >= r.min && r.value <= r.max) {
		return nil
	}
	return fmt.Errorf("--%s %d: must be from %d to %d (or 0: %s)", r.flag, r.value, r.min, r.max, r.zero)
}

// checkServeRanges refuses numeric settings outside the range the server
// works in, naming the flag and the range: a block of 10 rows or a
// memory limit of a few bytes would be accepted and then run badly.
func checkServeRanges(cfg serveConfig) error {
	ranges := []intRange{
		// Blocks below a few hundred rows make headers and per-block work
		// dominate; the engine refuses more than 2^20.
		{"block-rows", int64(cfg.BlockRows), 256, 1 << 20, "the default, 65536"},
		{"segment-rows", int64(cfg.SegmentRows), 1024, 1 << 30, "the default, 2097152"},
		{"page-bytes", int64(cfg.PageBytes), 4 << 10, 256 << 20, "the default, 128KiB"},
		// Below 32 MiB the heads' budget (a quarter) leaves too little to
		// batch a flush.
		{"memory-limit", cfg.MemoryLimit, 32 << 20, 1 << 50, "no limit"},
		{"syslog-max-message", int64(cfg.Syslog.MaxMessageBytes), 480, 16 << 20, "the default, 65536"},
	}
	for _, r := range ranges {
		if err := r.check(); err != nil {
			return err
		}
	}
	durations := []struct {
		flag     string
		value    time.Duration
		min, max time.Duration
	}{
		{"drain-delay", cfg.DrainDelay, 0, time.Hour},
		{"shutdown-timeout", cfg.ShutdownTimeout, time.Second, 24 * time.Hour},
	}
	for _, d := range durations {
		if d.value < d.min || d.value > d.max {
			return fmt.Errorf("--%s %s: must be from %s to %s", d.flag, d.value, d.min, d.max)
		}
	}
	if cfg.BlockRows > 0 && cfg.SegmentRows > 0 && cfg.SegmentRows < cfg.BlockRows {
		return fmt.Errorf("--segment-rows %d is below --block-rows %d: a segment holds at least one block", cfg.SegmentRows, cfg.BlockRows)
	}
	return nil
}

// newLogger returns the server's logger: slog's text or JSON handler on w.
func newLogger(w io.Writer, format string, level slog.Level) *slog.Logger {
	opts := &slog.HandlerOptions{Level: level}
	if format == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}
