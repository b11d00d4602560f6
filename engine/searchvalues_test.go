package engine

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"

	"github.com/sediment/sediment/event"
	"github.com/sediment/sediment/internal/predicate"
	"github.com/sediment/sediment/internal/vec"
	"github.com/sediment/sediment/internal/vfs"
	"github.com/sediment/sediment/sql/scan"
)

// Text tests with a Searcher run as one sweep over a column's values laid
// end to end (a page, or a head chunk where it lies); these tests check
// that it returns the rows Go's regexp (or strings, or LIKE value by
// value) returns, in segments and in heads, negated, with NULL rows, and
// after another filter has narrowed the rows (densely and sparsely).

// searchShard stores msgs (a nil entry: an event without a message) with
// k = i % 10, in a segment or in a head of chunks of chunkRows rows.
func searchShard(t *testing.T, msgs []*string, flush bool, chunkRows int) (*Engine, *Shard) {
	t.Helper()
	fs := vfs.NewMemFS()
	opts := testOptions(fs)
	opts.HeadChunkRows = chunkRows
	e := openTestEngine(t, fs, opts)
	s, _ := e.Shard(shardID)
	evs := make([]event.Event, len(msgs))
	for i, m := range msgs {
		// p is one value in every row (a project filter every row
		// passes), q the same but missing from every 13th row.
		members := []event.Value{event.Member("k", event.IntValue(int64(i%10))), event.Member("p", event.StringValue("default"))}
		if i%13 != 0 {
			members = append(members, event.Member("q", event.StringValue("default")))
		}
		evs[i] = event.Event{ID: fmt.Sprintf("%08x-0000-4000-8000-%012x", i, i), Timestamp: 1_700_000_000_000_000 + int64(i),
			Fields: event.ObjectValue(members...)}
		if m != nil {
			evs[i].Message, evs[i].HasMessage = *m, true
		}
	}
	if err := s.Append(ctx, evs); err != nil {
		t.Fatal(err)
	}
	if flush {
		if err := s.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	return e, s
}

// TestSearchValuesMatchScan compares, per predicate and narrowing filter,
// the rows a scan returns with those found message by message.
func TestSearchValuesMatchScan(t *testing.T) { testSearchValuesMatchScan(t) }

// TestSearchValuesMatchScanSmallSlots: the same with head slots of 128
// bytes, so that a chunk's values lie in many slots (searched slot by
// slot) and some values are longer than a slot.
func TestSearchValuesMatchScanSmallSlots(t *testing.T) {
	old := headSlotShift
	headSlotShift = 7
	t.Cleanup(func() { headSlotShift = old })
	testSearchValuesMatchScan(t)
}

func testSearchValuesMatchScan(t *testing.T) {
	r := rand.New(rand.NewPCG(14, 11))
	type text struct {
		op  scan.Op
		arg string
		fn  func(string) bool
	}
	var texts []text
	for _, pat := range []string{"auth/v1/(token|user)", "token", "v1/user", `(GET|POST) /rest`, "[Tt]oken", `user\w*`, "auth|rest|deadbeef|日本|é"} {
		texts = append(texts, text{scan.Regex, pat, regexp.MustCompile(pat).MatchString})
	}
	for _, sub := range []string{"auth/v1/token", "v1", "é"} {
		texts = append(texts, text{scan.Contains, sub, func(s string) bool { return strings.Contains(s, sub) }})
	}
	for _, pat := range []string{"%auth/v1/%", "%v1/_s%", "%token"} {
		l, err := predicate.CompileLike(pat)
		if err != nil {
			t.Fatal(err)
		}
		texts = append(texts, text{scan.Like, pat, l.Match})
	}
	narrowings := []struct {
		name string
		p    *scan.Predicate
		keep func(k int) bool
	}{
		{"all", nil, func(int) bool { return true }},
		{"k<7", &scan.Predicate{Path: "k", Type: vec.Int64, Op: scan.Lt, Args: []scan.Const{{Type: vec.Int64, Int: 7}}}, func(i int) bool { return i%10 < 7 }},
		{"k=3", &scan.Predicate{Path: "k", Type: vec.Int64, Op: scan.Eq, Args: []scan.Const{{Type: vec.Int64, Int: 3}}}, func(i int) bool { return i%10 == 3 }},
		{"p=default", &scan.Predicate{Path: "p", Type: vec.String, Op: scan.Eq, Args: []scan.Const{str("default")}}, func(int) bool { return true }},
		{"p!=default", &scan.Predicate{Path: "p", Type: vec.String, Op: scan.Ne, Args: []scan.Const{str("default")}}, func(int) bool { return false }},
		{"q=default", &scan.Predicate{Path: "q", Type: vec.String, Op: scan.Eq, Args: []scan.Const{str("default")}}, func(i int) bool { return i%13 != 0 }},
		{"q like def%", &scan.Predicate{Path: "q", Type: vec.String, Op: scan.Like, Args: []scan.Const{str("def%")}}, func(i int) bool { return i%13 != 0 }},
	}
	for _, nulls := range []bool{false, true} {
		msgs := make([]*string, 1200)
		for i := range msgs {
			if nulls && r.IntN(7) == 0 {
				continue
			}
			m := regexIndexMessage(r)
			msgs[i] = &m
		}
		for _, where := range []struct {
			flush     bool
			chunkRows int
		}{{true, 64}, {false, 64}, {false, 1024}} {
			name := fmt.Sprintf("nulls=%v/segment=%v/chunk=%d", nulls, where.flush, where.chunkRows)
			t.Run(name, func(t *testing.T) {
				e, s := searchShard(t, msgs, where.flush, where.chunkRows)
				defer e.Close()
				sn := s.Snapshot()
				defer sn.Release()
				for _, tx := range texts {
					for _, not := range []bool{false, true} {
						for _, nw := range narrowings {
							want := map[string]bool{}
							for i, m := range msgs {
								if m != nil && tx.fn(*m) != not && nw.keep(i) {
									want[fmt.Sprintf("%08x-0000-4000-8000-%012x", i, i)] = true
								}
							}
							filters := []scan.Predicate{{Path: "event_message", Type: vec.String, Op: tx.op, Not: not, Args: []scan.Const{str(tx.arg)}}}
							if nw.p != nil {
								filters = append([]scan.Predicate{*nw.p}, filters...)
							}
							for _, noIndex := range []bool{false, true} {
								req := &scan.Request{Columns: []scan.Column{{Path: "id", Type: vec.String}}, Filters: filters,
									TimeMin: scan.MinTime, TimeMax: scan.MaxTime, NoIndex: noIndex}
								got := runScan(t, sn.Table("test"), req)
								if len(got) != len(want) {
									t.Fatalf("%v %q not=%v %s noIndex=%v: %d rows, want %d", tx.op, tx.arg, not, nw.name, noIndex, len(got), len(want))
								}
								for id := range want {
									if _, ok := got[id]; !ok {
										t.Fatalf("%v %q not=%v %s noIndex=%v: row %s missing", tx.op, tx.arg, not, nw.name, noIndex, id)
									}
								}
							}
						}
					}
				}
			})
		}
	}
}

// TestPackedRunsCoverValues: the runs a head column's values are searched
// in give back every value, in order, whatever lies where: values that
// fill a slot to its end, that start a new one, longer than a slot, and
// empty ones.
func TestPackedRunsCoverValues(t *testing.T) {
	old := headSlotShift
	headSlotShift = 7
	t.Cleanup(func() { headSlotShift = old })
	r := rand.New(rand.NewPCG(3, 4))
	var p packedBytes
	offs := []uint32{0}
	var vals []string
	for i := range 2000 {
		var v string
		switch r.IntN(10) {
		case 0:
		case 1:
			v = strings.Repeat("L", 100+r.IntN(300)) // longer than a slot, often
		default:
			v = fmt.Sprintf("v%d-%s", i, strings.Repeat("x", r.IntN(60)))
		}
		vals = append(vals, v)
		offs = append(offs, p.add(v))
	}
	n := len(p.slots)
	for _, from := range []int{0, 1, 7, 999} {
		var got []string
		packedRunsOf(p.slots[:n-1:n-1], p.slots[n-1], offs[from:], nil, func(data []byte, o []uint32, first int) {
			if first != len(got) {
				t.Fatalf("from %d: a run starts at value %d after %d values", from, first, len(got))
			}
			for i := 0; i+1 < len(o); i++ {
				got = append(got, string(data[o[i]:o[i+1]]))
			}
		})
		if len(got) != len(vals)-from {
			t.Fatalf("from %d: %d values, want %d", from, len(got), len(vals)-from)
		}
		for j, v := range got {
			if v != vals[from+j] {
				t.Fatalf("from %d: value %d is %q, want %q", from, from+j, v, vals[from+j])
			}
		}
	}
}
