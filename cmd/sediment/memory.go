package main

import (
	"context"
	"fmt"
	"math"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/sediment/sediment/engine"
)

// defaultMemoryLimit is the soft memory target of `sediment serve`: Go's
// garbage collector works harder as the heap nears it, and the engine's
// head budget is sized from it. It is soft: a query that needs more gets
// it (its own budget is QueryMemory) at the cost of more collection.
const defaultMemoryLimit = 256 << 20

// queryBudgets returns the memory one query may hold and all queries
// together, from the flags or, when not given, from the memory limit: a
// query a quarter of it and all queries half (64 MiB and 128 MiB at the
// default 256 MiB). The engine's heads and caches take up to 10/16 of the
// limit (heads a quarter, pages and segment block directories an eighth
// each, dictionaries and predicate results a sixteenth each) once queries
// have filled the caches: with the queries' half on top the process can
// pass its (soft) limit by an eighth at the most, when every cache is full
// and queries hold all they may at once; two queries of
// the largest size, or any number of small ones, run at once. Without a
// memory limit a query may hold 512 MiB and all queries four times that.
// A total smaller than the one-query figure is raised to it.
func queryBudgets(cfg serveConfig) (perQuery, total int64) {
	perQuery, total = cfg.QueryMemory, cfg.QueryMemoryTotal
	if perQuery <= 0 {
		perQuery = 512 << 20
		if cfg.MemoryLimit > 0 {
			perQuery = max(cfg.MemoryLimit/4, 4<<20)
		}
	}
	if total <= 0 {
		total = 4 * perQuery
		if cfg.MemoryLimit > 0 {
			total = max(cfg.MemoryLimit/2, perQuery)
		}
	}
	return perQuery, max(total, perQuery)
}

// parseBytes reads a size such as 256MiB, 1GiB, 300MB or 268435456.
func parseBytes(s string) (int64, error) {
	t := strings.TrimSpace(s)
	units := []struct {
		suffix string
		mult   int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40}, {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12}, {"B", 1}}
	mult := int64(1)
	for _, u := range units {
		if strings.HasSuffix(t, u.suffix) {
			t, mult = strings.TrimSpace(strings.TrimSuffix(t, u.suffix)), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil || n < 0 || n > math.MaxInt64/mult {
		return 0, fmt.Errorf("invalid size %q (e.g. 256MiB, 1GiB)", s)
	}
	return n * mult, nil
}

// memoryOptions sizes the engine's in-memory heads and caches from the
// memory limit: all heads together a quarter of it, one head a twelfth
// (21 MiB at 256 MiB), never below 4 MiB per head; the page cache an
// eighth, the block directory cache of segment footers an eighth (what a
// query reading every block of 10M edge events needs), the dictionary
// cache and the predicate cache a sixteenth each.
//
// A busy source holds its head and the heads being written out (up to
// two, Options.MaxFrozenHeads), and a head that filled up passes its
// sizes to the next, which reserves them (plus an eighth) while its
// predecessor is written: at a twelfth, a source's heads fit the quarter.
// At an eighth (the default until issue 14) they held 2.2 times it (72
// MB measured at 256 MiB: a head, one being written, the reservation) and
// 3.3 times with two waiting, more than the quarter; segments of a third
// fewer rows cost flushes and compaction a little more.
func memoryOptions(limit int64, o *engine.Options) {
	if limit <= 0 {
		return
	}
	o.HeadMemoryBudget = max(limit/4, 8<<20)
	o.HeadMaxBytes = int(max(limit/12, 4<<20))
	o.DictCacheBytes = max(limit/16, 1<<20)
	o.PageCacheBytes = max(limit/8, 1<<20)
	o.FooterCacheBytes = max(limit/8, 1<<20)
	o.PredicateCacheBytes = max(limit/16, 1<<20)
}

// setMemoryLimit applies the limit to the Go runtime unless GOMEMLIMIT is
// set (the runtime has read it already, and the operator's word wins).
func setMemoryLimit(limit int64, getenv func(string) string) {
	if limit > 0 && getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(limit)
	}
}

// releaseIdleMemory empties the segment caches and the engine's pool of
// head slots, calls release (the HTTP server's ReleaseIdleMemory: its
// ingest buffers) and returns freed memory to the operating system once
// ingest has gone quiet and the heads have been written out. Go hands memory back only gradually; a log server that
// is idle most of the day should not keep the footprint of its busiest
// minute.
func releaseIdleMemory(ctx context.Context, eng *engine.Engine, release func(), every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	released := false
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if _, heads := eng.HeadMemory(); heads > 2<<20 {
			released = false
			continue
		}
		if !released {
			engine.DropCaches()
			eng.ReleaseIdleMemory()
			if release != nil {
				release()
			}
			debug.FreeOSMemory()
			released = true
		}
	}
}
