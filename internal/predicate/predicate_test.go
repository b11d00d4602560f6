package predicate

import (
	"math"
	"regexp"
	"strings"
	"testing"
)

func TestHolds(t *testing.T) {
	nan := math.NaN()
	for _, tc := range []struct {
		op   Op
		x, y float64
		want bool
	}{
		{Eq, 1, 1, true}, {Ne, 1, 1, false}, {Lt, 1, 2, true}, {Le, 2, 2, true}, {Gt, 2, 1, true}, {Ge, 1, 2, false},
		// NaN: unordered, only != holds (IEEE 754, BigQuery's comparisons).
		{Eq, nan, nan, false}, {Ne, nan, nan, true}, {Lt, nan, 1, false}, {Le, 1, nan, false},
		{Gt, nan, 1, false}, {Ge, nan, 1, false}, {Ne, nan, 1, true},
	} {
		if got := Holds(tc.op, tc.x, tc.y); got != tc.want {
			t.Errorf("Holds(%v %s %v) = %v", tc.x, tc.op, tc.y, got)
		}
		if got := HoldsOrder(tc.op, CompareFloat(tc.x, tc.y)); got != tc.want {
			t.Errorf("HoldsOrder(%v %s %v) = %v", tc.x, tc.op, tc.y, got)
		}
		if got := Holds(tc.op.Flip(), tc.y, tc.x); got != tc.want {
			t.Errorf("flipped %v %s %v = %v", tc.y, tc.op.Flip(), tc.x, got)
		}
	}
	if !Holds(Lt, "a", "b") || Holds(Gt, int64(1), 2) {
		t.Error("strings or ints misordered")
	}
}

func TestLike(t *testing.T) {
	for _, tc := range []struct {
		pat, s string
		want   bool
	}{
		{"%", "", true}, {"a%", "abc", true}, {"%c", "abc", true}, {"a_c", "abc", true},
		{"a_c", "abbc", false}, {"%b%", "abc", true}, {"%x%", "abc", false}, {`50\%`, "50%", true},
		{"é_", "éa", true}, {"", "", true}, {"", "a", false}, {"%a%b%", "xaybz", true},
		{"%ab%c", "abxabc", true}, {"a%b_c", "aXXbYc", true}, {"a%b_c", "aXXbc", false},
		{"%%a", "ba", true}, {"_%_", "ab", true}, {"_%_", "a", false}, {"%aaa%b", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaac", false},
		{"%_a%_", "xay", true}, {`a\_c`, "a_c", true}, {`a\_c`, "abc", false}, {"_", "é", true}, {"__", "é", false},
		{"\xff%", "\xffa", true}, {"\xff%", "\ufffd", false},
	} {
		l, err := CompileLike(tc.pat)
		if err != nil {
			t.Fatalf("%q: %v", tc.pat, err)
		}
		if got := l.Match(tc.s); got != tc.want {
			t.Errorf("%q LIKE %q = %v", tc.s, tc.pat, got)
		}
	}
	if _, err := CompileLike(`ab\`); err == nil {
		t.Error("a trailing backslash compiled")
	}
}

func TestLikeRequired(t *testing.T) {
	for _, tc := range []struct {
		pat, lit string
		exact    bool
	}{
		{"%error%", "error", true}, {"error%", "error", false}, {"%a%bcd%", "bcd", false}, {"_", "", false}, {`%50\%%`, "50%", true},
	} {
		l, _ := CompileLike(tc.pat)
		if lit, exact := l.Required(); lit != tc.lit || exact != tc.exact {
			t.Errorf("%q: (%q, %v), want (%q, %v)", tc.pat, lit, exact, tc.lit, tc.exact)
		}
	}
}

func TestContainsFold(t *testing.T) {
	for _, tc := range []struct {
		s, sub string
		want   bool
	}{
		{"Hello World", "world", true}, {"Hello", "hellp", false},
		{"", "", true}, {"ab", "abc", false}, {"xxAbC", "abc", true}, {"aXbXc", "abc", false},
		{"\u212Aelvin", "kelvin", true}, {"ÉTÉ", "été", true}, {"straße", "STRASSE", false},
	} {
		if got := ContainsFold(tc.s, strings.ToLower(tc.sub)); got != tc.want {
			t.Errorf("%q in %q: %v", tc.sub, tc.s, got)
		}
	}
}

func TestRegexRequired(t *testing.T) {
	for _, tc := range []struct {
		re    string
		lits  string // literals joined by |, folded ones marked ~
		exact bool
	}{
		{"/rest", "/rest", true},
		{"error", "error", true},
		{`connection refused \d+`, "connection refused ", false},
		{`(?i)error`, "~error", true},
		{`(?i)x`, "~x", true},
		{`a|b`, "a|b", true},
		{`python-httpx|Dart`, "python-httpx|Dart", true},
		{`(timeout|refused)`, "timeout|refused", true},
		{`^GET`, "GET", false},
		{`GET|.*`, "", false},
		{`\| 5\d\d \|`, "| 5", false},
		{`(?i)straße`, "", false},
		{`x+y`, "x", false},
		{`[ab]c`, "ac|bc", true},
		{`auth/v1/(token|user)`, "auth/v1/token|auth/v1/user", true},
		{`(GET|POST) /rest/v1/`, "GET /rest/v1/|POST /rest/v1/", true},
		{`(?i)xy(ab|cd)`, "~xyab|~xycd", true},
		{`(?i:x)(a|b)`, "~x", false}, // one case rule per combination
		{`[a-z]+x`, "x", false},
		{``, "", false},
		{`status=20[34]|timeout`, "status=203|status=204|timeout", true},
		{`(?i)error|fail`, "~error|~fail", true},
		{`foo\d+barbaz`, "barbaz", false},
		{`(abc)+x`, "abc", false},
		{`a.*b`, "a", false},
		{`x?yz`, "yz", false},
		{`^GET $`, "GET ", false},
		{`^/rest/v\d+/`, "/rest/v", false}, // searched as a prefix, still the index's literal
	} {
		lits, exact := MustCompileRegex(t, tc.re).Required()
		var parts []string
		for _, l := range lits {
			if l.Fold {
				parts = append(parts, "~"+l.S)
			} else {
				parts = append(parts, l.S)
			}
		}
		if got := strings.Join(parts, "|"); got != tc.lits || (got != "" && exact != tc.exact) {
			t.Errorf("%q: (%q, %v), want (%q, %v)", tc.re, got, exact, tc.lits, tc.exact)
		}
	}
}

func MustCompileRegex(t testing.TB, pattern string) *Regex {
	t.Helper()
	r, err := CompileRegex(pattern)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestRegexShape(t *testing.T) {
	for _, tc := range []struct {
		pattern string
		shape   regexShape
		lit     string
	}{
		{"error", regexContains, "error"},
		{"^GET ", regexPrefix, "GET "},
		{`\.json$`, regexSuffix, ".json"},
		{"^exact$", regexEqual, "exact"},
		{"", regexAlways, ""},
		{`a\+b`, regexContains, "a+b"},
		{"a.b", regexGeneral, ""},
		{"(?i)abc", regexGeneral, ""},
		{"a|b", regexGeneral, ""},
		{"(?m)^x", regexGeneral, ""},
	} {
		r := MustCompileRegex(t, tc.pattern)
		if r.shape != tc.shape || r.lit != tc.lit {
			t.Errorf("%q: shape %d %q, want %d %q", tc.pattern, r.shape, r.lit, tc.shape, tc.lit)
		}
	}
}

// regexPatterns and regexTexts exercise every fast path; they seed the
// fuzz target too.
var regexPatterns = []string{"POST", "(?i)post", "python-httpx|Dart", `(?i)(get|post) \|`, `\| 5\d\d \|`, "^GET", "rpc$", "^x$", "a|",
	"(?i)ÉTÉ", "auth/v1/(token|user)", "(GET|POST) /rest", "[Pp]ost", "(?i)x(a|b)", "(?i)kelvin", "(?i)s", `^GET |rpc$`,
	`status=20[34]|timeout`, "(?i)error|fail", "", `t1[0-9]7 `, `(?m)^x`, `\xff`, `^/rest/v\d+/`, `^https://[a-z]+[.]supabase[.]co/`,
	`^https://[a-z]{20}[.]supabase[.]co/(rest|storage|auth|realtime)/`, `^(a|ab)c`, `^(rest|realtime)/v1$`, `^.é.\n`, `^(?s:.)x`,
	`^[^a-z]{2}`, `^\x{FFFD}`, `^[\x{FFFD}]x`, `^(a|b)(c|d)(e|f)$`, `^(?i)ab`, `^(|x)y`, `^a$|^b`, `^[α-ω]{3}`}

var regexTexts = []string{"", "POST | 200", "post /x", "GET | 503 | x", "Dart/3.4", "python-httpx/0.25", "x rpc", "Post", "été", "ÉTÉ",
	"pOsT", "GET /auth/v1/user HTTP", "auth/v1/tok auth/v1/token", "auth/v1/auth/v1/use", "auth/v1/users", "GET /rest/v1",
	"PUT /rest", "XA", "xb", "\u212Aelvin", "ſ", "status=203", "FAILED", "a t137 b", "y\nx", "x", "\xff", "/rest/v1/todos", "x/rest/v1/", "/rest/vx/",
	"https://abc.supabase.co/rest", "https://abc.example.co/", "https://abcdefghijklmnopqrst.supabase.co/rest/v1/x",
	"https://abcdefghijklmnopqrst.supabase.co/realtime/", "https://abcdefghijklmnopqrsT.supabase.co/auth/", "https://abcdefghijklmnopqrs.supabase.co/auth/",
	"abc", "ac", "rest/v1", "realtime/v1", "aé\n", "\nx", "xé\nz", "\xffx", "\xff\xfe", "é\xffb", "ace", "bdf", "adf\n", "y", "xy", "b", "αβγ", "αβ"}

// TestRegexAgreesWithRegexp: the fast paths give the answers of Go's
// regexp (RE2, BigQuery's engine) on every pattern.
func TestRegexAgreesWithRegexp(t *testing.T) {
	for _, pat := range regexPatterns {
		r := MustCompileRegex(t, pat)
		re := regexp.MustCompile(pat)
		for _, s := range regexTexts {
			if got, want := r.Match(s), re.MatchString(s); got != want {
				t.Errorf("%q on %q: %v, regexp says %v", pat, s, got, want)
			}
		}
	}
}

// TestRegexAnchoredShape: the patterns walked without the regex engine
// are those anchored.go takes, and no others.
func TestRegexAnchoredShape(t *testing.T) {
	for pat, want := range map[string]bool{
		`^https://[a-z]{20}[.]supabase[.]co/(rest|storage|auth|realtime)/`: true,
		`^(a|ab)c`: true, `^.x$`: true,
		`^a+b`: false, `(?m)^ab.`: false, `^(?i)ab.`: false, `a.b`: false, `^a\bb`: false, `^(ab|cd){7}`: false,
	} {
		if got := MustCompileRegex(t, pat).anchored != nil; got != want {
			t.Errorf("%q: walked %v, want %v", pat, got, want)
		}
	}
}

// likeRegexp translates a LIKE pattern into an equivalent regexp (the
// reference the matcher is checked against).
func likeRegexp(toks []likeTok) string {
	var b strings.Builder
	b.WriteString("^")
	for _, t := range toks {
		switch t.kind {
		case '%':
			b.WriteString("(?s:.*)")
		case '_':
			b.WriteString("(?s:.)")
		default:
			b.WriteString(regexp.QuoteMeta(t.lit))
		}
	}
	b.WriteString("$")
	return b.String()
}

const maxFuzzInput = 4096

func FuzzLike(f *testing.F) {
	for _, p := range [][2]string{{"a%", "abc"}, {"%b%", "abc"}, {"a_c", "abc"}, {`a\%c`, "a%c"}, {"α_γ", "αβγ"},
		{"a%bc", "abcbc"}, {"%a%ab", "xaaab"}, {"/api/%/users/%", "/api/v1/users/42"}, {`\`, "x"}, {"", ""}} {
		f.Add(p[0], p[1])
	}
	f.Fuzz(func(t *testing.T, pattern, s string) {
		if len(pattern) > 256 || len(s) > maxFuzzInput {
			return
		}
		l, err := CompileLike(pattern)
		if err != nil {
			return
		}
		re, err := regexp.Compile(likeRegexp(l.toks))
		if err != nil {
			return
		}
		if got, want := l.Match(s), re.MatchString(s); got != want {
			t.Fatalf("LIKE %q on %q = %v, regexp says %v", pattern, s, got, want)
		}
	})
}

func FuzzRegex(f *testing.F) {
	for _, p := range regexPatterns {
		for _, s := range regexTexts[:4] {
			f.Add(p, s)
		}
	}
	f.Fuzz(func(t *testing.T, pattern, s string) {
		if len(pattern) > 256 || len(s) > maxFuzzInput {
			return
		}
		r, err := CompileRegex(pattern)
		if err != nil {
			return
		}
		if got, want := r.Match(s), r.Regexp().MatchString(s); got != want {
			t.Fatalf("%q on %q: %v, regexp %v", pattern, s, got, want)
		}
	})
}

func FuzzContainsFold(f *testing.F) {
	for _, p := range [][2]string{{"Hello", "ell"}, {"\u212Aelvin", "k"}, {"ÉTÉ", "été"}, {"", ""}} {
		f.Add(p[0], p[1])
	}
	f.Fuzz(func(t *testing.T, s, sub string) {
		if len(s) > maxFuzzInput || len(sub) > 256 {
			return
		}
		needle := strings.ToLower(sub)
		if got, want := ContainsFold(s, needle), strings.Contains(strings.ToLower(s), needle); got != want {
			t.Fatalf("%q in %q: %v, lower-cased says %v", needle, s, got, want)
		}
	})
}

// BenchmarkRegexAnchored: Q3's URL filter on a URL it matches, walked and
// through Go's regexp.
func BenchmarkRegexAnchored(b *testing.B) {
	const pat = `^https://[a-z]{20}[.]supabase[.]co/(rest|storage|auth|realtime)/`
	url := "https://abcdefghijklmnopqrst.supabase.co/storage/v1/object/public/avatars/u1.png?width=200"
	for _, tc := range []struct {
		name  string
		match func(string) bool
	}{{"walked", MustCompileRegex(b, pat).Match}, {"regexp", regexp.MustCompile(pat).MatchString}} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if !tc.match(url) {
					b.Fatal("no match")
				}
			}
		})
	}
}
