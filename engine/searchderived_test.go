package engine

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/sediment/sediment/event"
	"github.com/sediment/sediment/internal/vec"
	"github.com/sediment/sediment/internal/vfs"
	"github.com/sediment/sediment/segment"
	"github.com/sediment/sediment/sql/scan"
)

// derivedPiece is a piece of a message template: a literal, or the
// value of one of the event's fields.
type derivedPiece struct {
	lit   string
	field string // "" for a literal
}

// randomTemplate returns a message template of the event's fields
// (method, status, path, agent) in a random order, between random
// separators, some of them pieces of the needles searched for ("auth",
// "/v1", "token"), so that a match can span a literal and a value.
func randomTemplate(r *rand.Rand) []derivedPiece {
	seps := []string{" | ", " ", `"`, " auth", "auth/", "/v1", "token ", " - ", "/", ""}
	fields := []string{"method", "status", "path", "agent"}
	r.Shuffle(len(fields), func(i, j int) { fields[i], fields[j] = fields[j], fields[i] })
	var tpl []derivedPiece
	if r.IntN(2) == 0 {
		tpl = append(tpl, derivedPiece{lit: seps[r.IntN(len(seps))]})
	}
	for i, f := range fields {
		if i > 0 {
			tpl = append(tpl, derivedPiece{lit: seps[r.IntN(len(seps))]})
		}
		tpl = append(tpl, derivedPiece{field: f})
	}
	if r.IntN(2) == 0 {
		tpl = append(tpl, derivedPiece{lit: seps[r.IntN(len(seps))]})
	}
	return tpl
}

// TestTextFiltersOverDerivedText: regex, substring and LIKE filters over
// a message stored as derived text (built from the event's fields by a
// few random templates, some messages by none) return the rows Go's
// regexp and strings return over the messages, in segments (each block's
// message chunk derived, checked) and in the head, negated or not.
func TestTextFiltersOverDerivedText(t *testing.T) {
	for seed := uint64(1); seed <= 6; seed++ {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) { testTextFiltersOverDerivedText(t, seed) })
	}
}

func testTextFiltersOverDerivedText(t *testing.T, seed uint64) {
	r := rand.New(rand.NewPCG(seed, 14))
	tpls := make([][]derivedPiece, 3)
	for i := range tpls {
		tpls[i] = randomTemplate(r)
	}
	if seed%2 == 0 {
		// Values that meet with nothing between them.
		tpls[0] = []derivedPiece{{field: "method"}, {field: "path"}, {lit: " | "}, {field: "status"}, {field: "agent"}}
	}
	paths := []string{"/auth/v1/token?grant_type=password", "/auth/v1/user", "/rest/v1/todos?select=*", "auth/v1/tokens",
		"/v1/token", "/storage/v1/object/avatars/a.png", "token", "/auth/v2/user", "/realtime/v1/websocket?vsn=1.0.0"}
	agents := []string{"Mozilla/5.0 (X11; Linux x86_64)", "node-fetch/1.0", "supabase-js/2.45.0", "Deno/1.45.2 auth/v1"}
	const n = 1500
	msgs := make([]string, n)
	evs := make([]event.Event, n)
	for i := range evs {
		vals := map[string]string{"method": []string{"GET", "POST", "PATCH"}[r.IntN(3)],
			"status": strconv.Itoa([]int{200, 201, 401, 404, 500}[r.IntN(5)]),
			"path":   paths[r.IntN(len(paths))] + strconv.Itoa(r.IntN(1000)), "agent": agents[r.IntN(len(agents))]}
		var b strings.Builder
		if r.IntN(10) == 0 {
			b.WriteString("free text auth/v1/user " + strconv.Itoa(r.IntN(1<<20))) // fits no template
		} else {
			for _, p := range tpls[r.IntN(len(tpls))] {
				if p.field == "" {
					b.WriteString(p.lit)
				} else {
					b.WriteString(vals[p.field])
				}
			}
		}
		msgs[i] = b.String()
		status, _ := strconv.Atoi(vals["status"])
		evs[i] = event.Event{ID: fmt.Sprintf("%08x-0000-4000-8000-%012x", i, i), Timestamp: 1_700_000_000_000_000 + int64(i),
			Message: msgs[i], HasMessage: true,
			Fields: event.ObjectValue(event.Member("method", event.StringValue(vals["method"])),
				event.Member("status", event.IntValue(int64(status))), event.Member("path", event.StringValue(vals["path"])),
				event.Member("agent", event.StringValue(vals["agent"])))}
	}
	type filter struct {
		op  scan.Op
		arg string
		fn  func(string) bool
	}
	var filters []filter
	for _, pat := range []string{"auth/v1/(token|user)", "auth/v1/", "v1/token", `token \d`, "(GET|POST) ", "auth", "n/v", `\| 5\d\d`} {
		filters = append(filters, filter{scan.Regex, pat, regexp.MustCompile(pat).MatchString})
	}
	// Some only across two values that meet (a method and a path, a
	// status and a path).
	for _, sub := range []string{"auth/v1/token", "/v1", "token 4", "GET/auth", "201token", "POST/v1/token", "201Deno", "0Mo", "40"} {
		filters = append(filters, filter{scan.Contains, sub, func(s string) bool { return strings.Contains(s, sub) }})
	}
	for _, flush := range []bool{true, false} {
		fs := vfs.NewMemFS()
		e := openTestEngine(t, fs, testOptions(fs))
		s, _ := e.Shard(shardID)
		if err := s.Append(ctx, evs); err != nil {
			t.Fatal(err)
		}
		if flush {
			if err := s.Flush(); err != nil {
				t.Fatal(err)
			}
		}
		sn := s.Snapshot()
		if flush {
			derived, blocks := 0, 0
			for _, p := range sn.partList() {
				if p.seg == nil {
					continue
				}
				rd := p.seg.r
				col := rd.Column("event_message", segment.TypeString)
				for b := 0; b < rd.NumBlocks(); b++ {
					if ci, ok := rd.Chunk(b, col); ok {
						blocks++
						if ci.Derived {
							derived++
						}
					}
				}
			}
			// Most blocks (of 64 rows) fit the templates; some may not.
			if blocks == 0 || derived*2 < blocks {
				t.Fatalf("%d of %d message chunks derived", derived, blocks)
			}
		}
		for _, f := range filters {
			for _, not := range []bool{false, true} {
				want := 0
				for _, m := range msgs {
					if f.fn(m) != not {
						want++
					}
				}
				req := &scan.Request{Columns: []scan.Column{{Path: "id", Type: vec.String}},
					Filters: []scan.Predicate{{Path: "event_message", Type: vec.String, Op: f.op, Not: not, Args: []scan.Const{str(f.arg)}}},
					TimeMin: scan.MinTime, TimeMax: scan.MaxTime}
				got := runScan(t, sn.Table("test"), req)
				if len(got) != want {
					t.Errorf("flush=%v %v %q not=%v: %d rows, want %d", flush, f.op, f.arg, not, len(got), want)
					continue
				}
				for i, m := range msgs {
					id := fmt.Sprintf("%08x-0000-4000-8000-%012x", i, i)
					if _, ok := got[id]; ok != (f.fn(m) != not) {
						t.Errorf("flush=%v %v %q not=%v: row %d (%q) passed=%v", flush, f.op, f.arg, not, i, m, ok)
						break
					}
				}
			}
		}
		sn.Release()
		e.Close()
	}
}
