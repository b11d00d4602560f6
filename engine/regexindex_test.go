package engine

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"

	"github.com/sediment/sediment/event"
	"github.com/sediment/sediment/internal/vec"
	"github.com/sediment/sediment/internal/vfs"
	"github.com/sediment/sediment/sql/scan"
)

// Regexes, LIKE patterns and substrings go to the token index through
// their literals; these tests check that the rows the index picks (and
// those it says need no check) are exactly the rows a full scan finds,
// on text made to trip it: Unicode case folding (ſ folds to s but
// lower-cases to itself; İ lower-cases to i but does not fold to it; K,
// the Kelvin sign, does both), hex runs the index leaves out, tokens past
// the longest indexed, literals cut mid-token, and common words.

// regexIndexWords are the pieces adversarial messages are made of.
var regexIndexWords = []string{"auth", "v1", "token", "user", "users", "AUTH", "Token", "ſecret", "secret", "SECRET",
	"\u212Aelvin", "kelvin", "İstanbul", "istanbul", "ıI", "deadbeef", "deadbeefcafe", "0123456789abcdef0123",
	strings.Repeat("long", 20), "/", "/", " ", " ", "?", "=", "-", "_", ".", "é", "日本", "x", "GET", "POST", "rest"}

// regexIndexPatterns are searched for in them.
var regexIndexPatterns = []string{"auth/v1/(token|user)", "(?i)secret", "(?i)kelvin", "(?i)i", "(?i)istanbul", "(?i)st",
	"(?i)auth/v1", "token", "user", "v1/user", "ecret", "deadbeef", "beefcafe", "(?i)DEADBEEF", strings.Repeat("long", 17),
	"^auth", "user$", "^GET /rest", "(GET|POST) /rest", "[Tt]oken", "(?i)k", "ſ", "İ", "日本", "é", `\d`, "s.c", "(?i)(token|ſecret)"}

func regexIndexMessage(r *rand.Rand) string {
	var b strings.Builder
	for n := 1 + r.IntN(12); n > 0; n-- {
		b.WriteString(regexIndexWords[r.IntN(len(regexIndexWords))])
	}
	return b.String()
}

// regexIndexShard stores msgs as events (in a segment with its index, or
// in the head) and returns the shard.
func regexIndexShard(t testing.TB, msgs []string, flush bool) (*Engine, *Shard) {
	t.Helper()
	fs := vfs.NewMemFS()
	opts := testOptions(fs)
	opts.HeadChunkRows = 64
	e := openTestEngine(t, fs, opts)
	s, _ := e.Shard(shardID)
	evs := make([]event.Event, len(msgs))
	for i, m := range msgs {
		evs[i] = event.Event{ID: fmt.Sprintf("%08x-0000-4000-8000-%012x", i, i), Timestamp: 1_700_000_000_000_000 + int64(i),
			Message: m, HasMessage: true, Fields: event.ObjectValue(event.Member("project", event.StringValue("p")))}
	}
	if len(evs) > 0 {
		if err := s.Append(ctx, evs); err != nil {
			t.Fatal(err)
		}
	}
	if flush {
		if err := s.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	return e, s
}

// regexIndexCheck compares, for one predicate, the rows found with the
// index, without it, and by Go's regexp (or strings) on each message.
func regexIndexCheck(t testing.TB, s *Shard, msgs []string, p scan.Predicate) {
	t.Helper()
	want := map[string]bool{}
	for i, m := range msgs {
		var ok bool
		switch p.Op {
		case scan.Regex:
			ok = regexp.MustCompile(p.Args[0].Str).MatchString(m)
		case scan.Contains:
			ok = strings.Contains(m, p.Args[0].Str)
		}
		if ok != p.Not {
			want[fmt.Sprintf("%08x-0000-4000-8000-%012x", i, i)] = true
		}
	}
	sn := s.Snapshot()
	defer sn.Release()
	for _, noIndex := range []bool{false, true} {
		for range 2 { // the second time from the predicate cache
			req := &scan.Request{Columns: []scan.Column{{Path: "id", Type: vec.String}}, Filters: []scan.Predicate{p},
				TimeMin: scan.MinTime, TimeMax: scan.MaxTime, NoIndex: noIndex}
			got := runScan(t.(*testing.T), sn.Table("test"), req)
			if len(got) != len(want) {
				t.Fatalf("%v %q (noIndex %v): %d rows, want %d", p.Op, p.Args[0].Str, noIndex, len(got), len(want))
			}
			for id := range want {
				if _, ok := got[id]; !ok {
					t.Fatalf("%v %q (noIndex %v): row %s missing", p.Op, p.Args[0].Str, noIndex, id)
				}
			}
		}
	}
}

// TestRegexIndexMatchesScan: on adversarial messages, in segments and in
// the head, each pattern finds the rows Go's regexp finds, with the index
// and without.
func TestRegexIndexMatchesScan(t *testing.T) {
	r := rand.New(rand.NewPCG(14, 3))
	msgs := make([]string, 1500)
	for i := range msgs {
		msgs[i] = regexIndexMessage(r)
	}
	for _, flush := range []bool{true, false} {
		t.Run(fmt.Sprintf("segment=%v", flush), func(t *testing.T) {
			e, s := regexIndexShard(t, msgs, flush)
			defer e.Close()
			for _, pat := range regexIndexPatterns {
				regexIndexCheck(t, s, msgs, scan.Predicate{Path: "event_message", Type: vec.String, Op: scan.Regex, Args: []scan.Const{str(pat)}})
			}
			for _, sub := range []string{"auth/v1/token", "ecret", "deadbeef", "İ", "kelvin", "v1"} {
				regexIndexCheck(t, s, msgs, scan.Predicate{Path: "event_message", Type: vec.String, Op: scan.Contains, Args: []scan.Const{str(sub)}})
			}
		})
	}
}

// FuzzRegexIndex: a pattern over messages (one a line) stored in a
// segment finds, with the token index, the rows Go's regexp finds.
func FuzzRegexIndex(f *testing.F) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, pat := range regexIndexPatterns {
		var msgs []string
		for range 8 {
			msgs = append(msgs, regexIndexMessage(r))
		}
		f.Add(pat, strings.Join(msgs, "\n"))
	}
	f.Fuzz(func(t *testing.T, pattern, text string) {
		if len(pattern) > 64 || len(text) > 4096 {
			return
		}
		if _, err := regexp.Compile(pattern); err != nil {
			return
		}
		msgs := strings.Split(text, "\n")
		if len(msgs) > 64 {
			return
		}
		e, s := regexIndexShard(t, msgs, true)
		defer e.Close()
		regexIndexCheck(t, s, msgs, scan.Predicate{Path: "event_message", Type: vec.String, Op: scan.Regex, Args: []scan.Const{str(pattern)}})
	})
}
