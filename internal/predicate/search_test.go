package predicate

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/sediment/sediment/internal/bytesearch"
)

// packValues lays values end to end as a column page does.
func packValues(vals []string) ([]byte, []uint32) {
	var data []byte
	offs := []uint32{0}
	for _, v := range vals {
		data = append(data, v...)
		offs = append(offs, uint32(len(data)))
	}
	return data, offs
}

// searchRows is what the engine does with a Searcher: the rows it finds,
// each confirmed by the pattern unless the literals decide.
func searchRows(s *Searcher, exact bool, match func(string) bool, data []byte, offs []uint32) ([]int32, bool) {
	rows, ok := s.AppendRows(nil, data, offs)
	if !ok || exact {
		return rows, ok
	}
	kept := rows[:0]
	for _, r := range rows {
		if match(string(data[offs[r]:offs[r+1]])) {
			kept = append(kept, r)
		}
	}
	return kept, true
}

// wantRows is the answer value by value.
func wantRows(vals []string, match func(string) bool) []int32 {
	var out []int32
	for i, v := range vals {
		if match(v) {
			out = append(out, int32(i))
		}
	}
	return out
}

// searchTexts are values that put needles at value boundaries, across
// them, repeated and partial: a hit that spans two values is no hit.
var searchTexts = []string{"auth/v1/to", "ken", "auth/v1/token", "", "xauth/v1/user", "auth/v1/", "user",
	"auth/v1/auth/v1/user", "aaaa", "a", "auth/v1/tokenauth/v1/user", "GET /auth/v1/user HTTP/1.1", "auth/v1/use", "r",
	"POST | 200", "post /x", "Dart/3.4", "python-httpx/0.25", "status=203", "timeout", "x rpc", "/rest/v1/todos", "\xffx",
	"a t137 b", "FAILED", "error", "fail", "é\xffb", "αβγ"}

// TestSearcherAgreesWithRegexp: for every pattern with a Searcher, the
// rows found over values laid end to end (in several orders, so that
// every pair of values meets) are those Go's regexp matches one by one.
func TestSearcherAgreesWithRegexp(t *testing.T) {
	vals := slices.Concat(searchTexts, regexTexts)
	searched := 0
	for _, pat := range regexPatterns {
		r := MustCompileRegex(t, pat)
		s, exact := r.Searcher()
		if s == nil {
			continue
		}
		searched++
		re := regexp.MustCompile(pat)
		for shift := 0; shift < len(vals); shift += 7 {
			order := slices.Concat(vals[shift:], vals[:shift])
			data, offs := packValues(order)
			got, ok := searchRows(s, exact, r.Match, data, offs)
			if !ok {
				t.Fatalf("%q: offsets refused", pat)
			}
			if want := wantRows(order, re.MatchString); !slices.Equal(got, want) {
				t.Errorf("%q (shift %d): rows %v, regexp says %v", pat, shift, got, want)
			}
		}
	}
	if searched < 5 {
		t.Fatalf("only %d patterns have a Searcher", searched)
	}
}

// TestSearcherEveryPair: whichever pair of bytes of a needle a sweep
// compares (Anchored picks it on a sample that may not resemble the
// values), the rows found are the same: those holding one of the literals.
func TestSearcherEveryPair(t *testing.T) {
	vals := slices.Concat(searchTexts, regexTexts)
	for _, lits := range [][]string{{"auth/v1/token", "auth/v1/user"}, {"POST"}, {"a"}, {"python-httpx", "Dart"},
		{"ken"}, {"é\xff"}, {"aaa"}} {
		s := NewSearcher(lits)
		if s == nil {
			t.Fatalf("%q: no Searcher", lits)
		}
		for shift := 0; shift < len(vals); shift += 5 {
			order := slices.Concat(vals[shift:], vals[:shift])
			data, offs := packValues(order)
			want := wantRows(order, func(v string) bool {
				return slices.ContainsFunc(lits, func(l string) bool { return strings.Contains(v, l) })
			})
			for k := 0; k < len(s.needles[0].text); k++ {
				for o := 0; o < len(s.needles[0].text); o++ {
					a := &Searcher{needles: slices.Clone(s.needles)}
					for i := range a.needles {
						text := a.needles[i].text
						rare, other := min(k, len(text)-1), min(o, len(text)-1)
						if rare == other && len(text) > 1 {
							continue
						}
						f := bytesearch.NewFinderPair(text, rare, other)
						a.needles[i].finder = &f
					}
					if got, _ := a.AppendRows(nil, data, offs); !slices.Equal(got, want) {
						t.Errorf("%q with pair %d, %d (shift %d): rows %v, want %v", lits, k, o, shift, got, want)
					}
				}
			}
		}
	}
}

// TestNextRowFindsTheValue: from any value, the value holding a later
// byte position, across empty values and runs of every length.
func TestNextRowFindsTheValue(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for round := 0; round < 200; round++ {
		offs := []uint32{0}
		for i := r.IntN(300); i >= 0; i-- {
			size := uint32(r.IntN(5)) // empty values too
			offs = append(offs, offs[len(offs)-1]+size)
		}
		n := len(offs) - 1
		for at := 0; at < int(offs[n]); at++ {
			want := 0
			for int(offs[want+1]) <= at {
				want++
			}
			for row := 0; row < want; row++ {
				if int(offs[row+1]) > at {
					continue // nextRow is asked only past the value's end
				}
				if got := nextRow(offs, row, at); got != want {
					t.Fatalf("offs %v, from %d, byte %d: value %d, want %d", offs, row, at, got, want)
				}
			}
		}
	}
}

// TestSearcherLiterals: a Searcher gives back the literals it finds,
// whether swept one by one or by their shared prefix.
func TestSearcherLiterals(t *testing.T) {
	for _, lits := range [][]string{{"auth/v1/token", "auth/v1/user"}, {"POST"}, {"python-httpx", "Dart"}} {
		if got := NewSearcher(lits).Literals(); !slices.Equal(got, lits) {
			t.Errorf("%q: literals %q", lits, got)
		}
	}
}

// TestSearcherShapes: which patterns are searched over many values, and
// which of those the literals decide alone.
func TestSearcherShapes(t *testing.T) {
	for pat, want := range map[string]string{
		"auth/v1/(token|user)":          "exact",
		"POST":                          "exact",
		"python-httpx|Dart":             "exact",
		`status=20[34]|timeout`:         "exact",
		`\| 5\d\d \|`:                   "confirm",
		"(?i)post":                      "none", // folded: value by value
		"^GET":                          "none", // a prefix test is cheap on one value
		"rpc$":                          "none",
		`^https://[a-z]+[.]supabase[.]`: "none", // the prefix test rejects first
		"[a-z]":                         "none", // 26 one-byte literals
		"":                              "none",
	} {
		s, exact := MustCompileRegex(t, pat).Searcher()
		got := "none"
		if s != nil {
			got = "confirm"
			if exact {
				got = "exact"
			}
		}
		if got != want {
			t.Errorf("%q: %s, want %s", pat, got, want)
		}
	}
}

// TestSearcherLike: LIKE patterns over values laid end to end agree with
// matching each value.
func TestSearcherLike(t *testing.T) {
	vals := slices.Concat(searchTexts, regexTexts)
	for _, pat := range []string{"%auth/v1/%", "%auth/v1/%r", "%ken", "%v1/t%n%", "%a%", "%/v1/_%", "auth%", "%"} {
		l, err := CompileLike(pat)
		if err != nil {
			t.Fatal(err)
		}
		s, exact := l.Searcher()
		if s == nil {
			continue
		}
		data, offs := packValues(vals)
		got, _ := searchRows(s, exact, l.Match, data, offs)
		if want := wantRows(vals, l.Match); !slices.Equal(got, want) {
			t.Errorf("LIKE %q: rows %v, want %v", pat, got, want)
		}
	}
}

// TestSearcherOffsets: offsets that do not describe values within the
// buffer are refused, not followed; a buffer with leading bytes before
// the first value is searched from the first value.
func TestSearcherOffsets(t *testing.T) {
	s := NewSearcher([]string{"ab"})
	for _, offs := range [][]uint32{nil, {0, 5}, {2, 1}, {0, 2, 1, 3}} {
		if _, ok := s.AppendRows(nil, []byte("abab"), offs); ok {
			t.Errorf("offsets %v accepted", offs)
		}
	}
	got, ok := s.AppendRows(nil, []byte("xabxb.ab"), []uint32{1, 3, 6, 8})
	if !ok || !slices.Equal(got, []int32{0, 2}) {
		t.Errorf("rows %v %v, want [0 2]", got, ok)
	}
}

// FuzzSearchRows: for any pattern and values (text cut at '\n'), the rows
// a Searcher finds and the regex confirms are those Go's regexp matches.
func FuzzSearchRows(f *testing.F) {
	for _, p := range regexPatterns {
		f.Add(p, strings.Join(searchTexts[:12], "\n"))
	}
	f.Add("auth/v1/(token|user)", "auth/v1/to\nken\nauth/v1/token\n\nauth/v1/user")
	f.Fuzz(func(t *testing.T, pattern, text string) {
		if len(pattern) > 256 || len(text) > maxFuzzInput {
			return
		}
		r, err := CompileRegex(pattern)
		if err != nil {
			return
		}
		vals := strings.Split(text, "\n")
		data, offs := packValues(vals)
		want := wantRows(vals, r.Regexp().MatchString)
		if s, exact := r.Searcher(); s != nil {
			got, ok := searchRows(s, exact, r.Match, data, offs)
			if !ok || !slices.Equal(got, want) {
				t.Fatalf("%q over %q: rows %v, regexp says %v", pattern, vals, got, want)
			}
			// Anchored on a sample unlike the values (the pattern's text).
			got, ok = searchRows(s.Anchored([]byte(pattern)), exact, r.Match, data, offs)
			if !ok || !slices.Equal(got, want) {
				t.Fatalf("%q over %q anchored on the pattern: rows %v, regexp says %v", pattern, vals, got, want)
			}
		}
		// Literals taken from the pattern's text, searched as they are.
		lits := strings.FieldsFunc(pattern, func(c rune) bool { return c == '|' })
		if s := NewSearcher(lits); s != nil {
			got, _ := s.AppendRows(nil, data, offs)
			want := wantRows(vals, func(v string) bool {
				for _, l := range lits {
					if strings.Contains(v, l) {
						return true
					}
				}
				return false
			})
			if !slices.Equal(got, want) {
				t.Fatalf("literals %q over %q: rows %v, want %v", lits, vals, got, want)
			}
		}
	})
}

// accessLines are n access log lines shaped as Kong's (the regexp count
// Studio runs finds auth/v1/token or auth/v1/user in 12% of them; the
// words auth, v1, token are far more common).
func accessLines(n int) []string {
	r := rand.New(rand.NewPCG(14, 14))
	paths := []string{"/rest/v1/todos?select=*&id=eq.", "/rest/v1/rpc/get_user_profile?x=", "/auth/v1/token?grant_type=password&n=",
		"/auth/v1/user?n=", "/auth/v1/logout?scope=global&n=", "/storage/v1/object/public/avatars/", "/realtime/v1/websocket?vsn=1.0.0&n="}
	weights := []int{45, 15, 7, 5, 2, 20, 6}
	agents := []string{`"Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:127.0) Gecko/20100101 Firefox/127.0"`,
		`"Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1"`,
		`"node"`, `"Deno/1.45.2 (variant; SupabaseEdgeRuntime/1.58.3)"`, `"supabase-js/2.45.0"`}
	out := make([]string, n)
	for i := range out {
		w := r.IntN(100)
		k := 0
		for w >= weights[k] {
			w -= weights[k]
			k++
		}
		out[i] = fmt.Sprintf(`172.18.0.%d - - [10/Jul/2025:12:%02d:%02d +0000] "%s %s%d HTTP/1.1" %d %d "-" %s`,
			r.IntN(250), r.IntN(60), r.IntN(60), []string{"GET", "POST", "PATCH"}[r.IntN(3)], paths[k], r.IntN(100000),
			[]int{200, 200, 201, 204, 400, 401, 404, 500}[r.IntN(8)], r.IntN(9000), agents[r.IntN(len(agents))])
	}
	return out
}

// BenchmarkRegexCount: Studio's regexp count over access log lines laid
// end to end, value by value (Match) and by one sweep (Searcher). bytes/s
// is the text searched. Two more take the sweep apart: floor reads the
// text once (bytes.IndexByte of a byte it lacks: what the caches or memory
// cost), stops runs the sweep's pair search alone, from each needle
// found to the next (floor plus the cost of the search's stops; the
// searcher adds mapping hits to rows and checking the literals' ends, and
// resumes at the next row). SEDIMENT_BENCH_LINES sets the
// lines (default 20,000, about 4 MB; 300,000 is a head of Kong lines, out
// of the caches).
func BenchmarkRegexCount(b *testing.B) {
	n := 20000
	if v, err := strconv.Atoi(os.Getenv("SEDIMENT_BENCH_LINES")); err == nil && v > 0 {
		n = v
	}
	lines := accessLines(n)
	data, offs := packValues(lines)
	r := MustCompileRegex(b, "auth/v1/(token|user)")
	want := len(wantRows(lines, r.Regexp().MatchString))
	b.Run("values", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		defer reportCPU(b)()
		for b.Loop() {
			n := 0
			for i := 0; i+1 < len(offs); i++ {
				v := data[offs[i]:offs[i+1]]
				if r.Match(unsafe.String(unsafe.SliceData(v), len(v))) {
					n++
				}
			}
			if n != want {
				b.Fatalf("%d rows, want %d", n, want)
			}
		}
	})
	b.Run("searcher", func(b *testing.B) {
		s, exact := r.Searcher()
		if !exact {
			b.Fatal("not exact")
		}
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		var rows []int32
		defer reportCPU(b)()
		for b.Loop() {
			rows, _ = s.AppendRows(rows[:0], data, offs)
			if len(rows) != want {
				b.Fatalf("%d rows, want %d", len(rows), want)
			}
		}
	})
	b.Run("floor", func(b *testing.B) {
		if bytes.IndexByte(data, 0) >= 0 {
			b.Fatal("the lines hold a NUL")
		}
		b.SetBytes(int64(len(data)))
		defer reportCPU(b)()
		for b.Loop() {
			bytes.IndexByte(data, 0)
		}
	})
	b.Run("stops", func(b *testing.B) {
		s, _ := r.Searcher()
		f := s.Anchored(data).needles[0].finder
		b.SetBytes(int64(len(data)))
		stops := 0
		defer reportCPU(b)()
		for b.Loop() {
			stops = 0
			for p := 0; ; stops++ {
				j := f.Index(data[p:])
				if j < 0 {
					break
				}
				p += j + 1
			}
		}
		b.ReportMetric(float64(stops)/float64(len(lines)), "stops/line")
	})

}

// reportCPU starts counting the process's CPU time; the function it
// returns reports it per iteration as cpu-ns/op, steadier than wall time
// on a shared machine.
func reportCPU(b *testing.B) func() {
	start := processCPU()
	return func() { b.ReportMetric(float64(processCPU()-start)/float64(b.N), "cpu-ns/op") }
}

// processCPU returns the CPU time the process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
