//go:build soak && linux

package soak

import (
	"fmt"
	"sort"
	"sync"
	"time"
)

// failures collects what the run found wrong, from every goroutine. A
// kind of failure that repeats is counted and its first few instances
// kept, so that a server bug seen ten thousand times does not drown the
// others.
type failures struct {
	start time.Time
	mu    sync.Mutex
	kinds map[string]*failureKind
	order []string
}

type failureKind struct {
	count    int
	examples []string
}

const examplesPerKind = 5

func newFailures(start time.Time) *failures {
	return &failures{start: start, kinds: map[string]*failureKind{}}
}

// add records one failure of kind, described by the formatted detail.
func (f *failures) add(kind, format string, args ...any) {
	detail := fmt.Sprintf("[%s] %s", time.Since(f.start).Round(time.Second), fmt.Sprintf(format, args...))
	f.mu.Lock()
	defer f.mu.Unlock()
	k := f.kinds[kind]
	if k == nil {
		k = &failureKind{}
		f.kinds[kind] = k
		f.order = append(f.order, kind)
	}
	k.count++
	if len(k.examples) < examplesPerKind {
		k.examples = append(k.examples, detail)
	}
}

// count returns the number of failures of kind.
func (f *failures) count(kind string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	if k := f.kinds[kind]; k != nil {
		return k.count
	}
	return 0
}

// report returns every kind with its count and examples, in the order
// they were first seen.
func (f *failures) report() []failureReport {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]failureReport, 0, len(f.order))
	for _, name := range f.order {
		k := f.kinds[name]
		out = append(out, failureReport{Kind: name, Count: k.count, Examples: append([]string(nil), k.examples...)})
	}
	return out
}

// failureReport is one kind of failure in the summary.
type failureReport struct {
	Kind     string   `json:"kind"`
	Count    int      `json:"count"`
	Examples []string `json:"examples"`
}

// counter counts occurrences of strings (log messages, error texts).
type counter struct {
	mu sync.Mutex
	m  map[string]int
}

func (c *counter) add(s string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[string]int{}
	}
	c.m[s]++
}

// top returns up to n entries, most frequent first.
func (c *counter) top(n int) []countedText {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]countedText, 0, len(c.m))
	for s, k := range c.m {
		out = append(out, countedText{Text: s, Count: k})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Count != out[j].Count {
			return out[i].Count > out[j].Count
		}
		return out[i].Text < out[j].Text
	})
	if len(out) > n {
		out = out[:n]
	}
	return out
}

// countedText is a text and how often it was seen.
type countedText struct {
	Text  string `json:"text"`
	Count int    `json:"count"`
}
