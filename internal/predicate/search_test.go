package predicate

import (
	"regexp"
	"slices"
	"strings"
	"testing"
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
