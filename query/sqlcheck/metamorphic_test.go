package sqlcheck

import (
	"math/rand/v2"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// budget is how long TestMetamorphic generates queries: a few seconds by
// default, SEDIMENT_METAMORPHIC (a Go duration) when set.
func budget(t *testing.T) time.Duration {
	if v := os.Getenv("SEDIMENT_METAMORPHIC"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Fatalf("SEDIMENT_METAMORPHIC=%q: %v", v, err)
		}
		return d
	}
	if testing.Short() {
		return time.Second
	}
	return 3 * time.Second
}

func seed(t *testing.T) uint64 {
	if v := os.Getenv("SEDIMENT_METAMORPHIC_SEED"); v != "" {
		s, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("SEDIMENT_METAMORPHIC_SEED=%q: %v", v, err)
		}
		return s
	}
	return uint64(time.Now().UnixNano())
}

// TestMetamorphic generates queries for the time budget and checks each
// with TLP and NoREC (see the package comment). A failure prints the
// query, its parameters and the seed of the stream; add the query to
// regressions (regress_test.go) when fixing what it found.
func TestMetamorphic(t *testing.T) {
	db := openDB(t)
	s := seed(t)
	r := rand.New(rand.NewPCG(s, 0x5ed1))
	st := &checkStats{features: map[string]int{}}
	deadline := time.Now().Add(budget(t))
	var findings []finding
	for time.Now().Before(deadline) && len(findings) < 10 {
		findings = append(findings, db.check(generate(r, db), st)...)
	}
	t.Logf("seed %d: %d generated queries checked with %d runs; %d rejected by the validator, %d failing in every form",
		s, st.queries, st.runs, st.invalid, st.errored)
	var fs []string
	for f, n := range st.features {
		fs = append(fs, f+": "+strconv.Itoa(n))
	}
	sort.Strings(fs)
	t.Logf("features: %s", strings.Join(fs, ", "))
	if testing.Verbose() {
		for _, e := range st.examples {
			t.Logf("%s", e)
		}
	}
	for _, f := range findings {
		t.Errorf("seed %d:\n%s", s, f)
	}
	// The generator must mostly write queries that run: a high share of
	// rejected or failing ones means it tests little.
	if st.queries >= 50 && (st.invalid+st.errored)*5 > st.queries {
		t.Errorf("%d of %d generated queries did not run; examples:\n%s", st.invalid+st.errored, st.queries, strings.Join(st.examples, "\n\n"))
	}
}
