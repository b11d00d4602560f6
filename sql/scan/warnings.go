package scan

import (
	"context"
	"strconv"
	"sync"
)

// Warnings collects what one query's answer is missing: the storage engine
// adds a warning when it leaves out data it cannot read (a damaged block
// set aside, a quarantined segment) that the query would otherwise have
// read, and the service that runs the query puts the warnings beside the
// result, so that an answer missing data says so.
//
// A Warnings is carried in the query's context (WithWarnings); the SQL
// executor passes the context through without knowing of it. It is safe
// for concurrent use: units are read on several goroutines.
type Warnings struct {
	mu      sync.Mutex
	list    []string
	seen    map[string]struct{}
	dropped int
}

// MaxWarnings bounds the warnings one answer lists; past it, one last
// warning counts the others.
const MaxWarnings = 100

// Add records msg once (repeats are ignored).
func (w *Warnings) Add(msg string) {
	if w == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, ok := w.seen[msg]; ok {
		return
	}
	if w.seen == nil {
		w.seen = map[string]struct{}{}
	}
	w.seen[msg] = struct{}{}
	if len(w.list) >= MaxWarnings {
		w.dropped++
		return
	}
	w.list = append(w.list, msg)
}

// List returns the warnings in the order they were first added (nil when
// there are none).
func (w *Warnings) List() []string {
	if w == nil {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.list) == 0 {
		return nil
	}
	out := append([]string(nil), w.list...)
	if w.dropped > 0 {
		out = append(out, strconv.Itoa(w.dropped)+" more warnings like these are not listed")
	}
	return out
}

type warningsKey struct{}

// WithWarnings returns a context that carries w to the scans of a query.
func WithWarnings(ctx context.Context, w *Warnings) context.Context {
	return context.WithValue(ctx, warningsKey{}, w)
}

// WarningsFrom returns the collector ctx carries, or nil. A scan that must
// leave data out and finds no collector fails instead: nothing is dropped
// without a word.
func WarningsFrom(ctx context.Context) *Warnings {
	w, _ := ctx.Value(warningsKey{}).(*Warnings)
	return w
}
