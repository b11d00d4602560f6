package parser

import (
	"strings"
	"testing"
)

func TestKeywordLookup(t *testing.T) {
	for k := kwNone + 1; k < numKeywords; k++ {
		name := keywordNames[k]
		for _, spelling := range []string{name, strings.ToLower(name), strings.ToLower(name[:1]) + name[1:]} {
			if got := lookupKeyword(spelling); got != k {
				t.Errorf("lookupKeyword(%q) = %v, want %v", spelling, got, k)
			}
		}
	}
	for _, w := range []string{"", "a", "selec", "selects", "timestamp", "count", "level", "_select", "s3lect", "SELECT_", "intersects", "ÜNION", "union\x00"} {
		if k := lookupKeyword(w); k != kwNone {
			t.Errorf("lookupKeyword(%q) = %s, want none", w, keywordNames[k])
		}
	}
}

// tokenTexts lexes src and returns each token's kind-tagged text.
func tokenTexts(t *testing.T, src string) []string {
	t.Helper()
	lx, err := lex(src, new(scratch))
	if err != nil {
		t.Fatalf("lex(%q): %v", src, err)
	}
	var out []string
	for _, tk := range lx.toks {
		if tk.kind == tEOF {
			break
		}
		out = append(out, src[tk.off:tk.end])
	}
	return out
}

func TestLexTokens(t *testing.T) {
	cases := []struct {
		src  string
		want string // tokens joined by " | "
	}{
		{"select a,b from t", "select | a | , | b | from | t"},
		{"a<=b<>c!=d>=e<<f>>g||h|i", "a | <= | b | <> | c | != | d | >= | e | << | f | >> | g | || | h | | | i"},
		{"x::text", "x | :: | text"},
		{"a -- comment ; select\nb", "a | b"},
		{"a # comment\nb", "a | b"},
		{"a /* block\n comment */ b", "a | b"},
		{"a--b", "a"},
		{"1.5e3 .5 7. 0x1F 1E-2", "1.5e3 | .5 | 7. | 0x1F | 1E-2"},
		{"@p_1 @P", "@p_1 | @P"},
		{"`a b`.`c`", "`a b` | . | `c`"},
		{"r'\\'' b\"x\" rb'y' BR\"z\"", "r'\\'' | b\"x\" | rb'y' | BR\"z\""},
		{"rx 'y'", "rx | 'y'"},
		{"'a''b' ''", "'a''b' | ''"},
		{"'''x''y''' \"\"\"q\"\"\"", "'''x''y''' | \"\"\"q\"\"\""},
		{"é.naïve", "é | . | naïve"},
		{"a;b", "a | ; | b"},
		{"$ ? !", "$ | ? | !"},
		{"@@x", "@@x"},
	}
	for _, tc := range cases {
		got := strings.Join(tokenTexts(t, tc.src), " | ")
		if got != tc.want {
			t.Errorf("lex(%q)\n got %s\nwant %s", tc.src, got, tc.want)
		}
	}
}

func TestLexPositions(t *testing.T) {
	src := "select 'a\nb', `é`,\n\t\"x\"\n/* c\n */ y"
	lx, err := lex(src, new(scratch))
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		text      string
		line, col int
	}{
		{"select", 1, 1}, {"'a\nb'", 1, 8}, {",", 2, 3}, {"`é`", 2, 5}, {",", 2, 8},
		{`"x"`, 3, 2}, {"y", 5, 5},
	}
	var got []token
	for _, tk := range lx.toks {
		if tk.kind != tEOF {
			got = append(got, tk)
		}
	}
	if len(got) != len(want) {
		t.Fatalf("%d tokens, want %d", len(got), len(want))
	}
	for i, w := range want {
		tk := got[i]
		p := lx.pos(int(tk.off))
		if src[tk.off:tk.end] != w.text || p.Line != w.line || p.Col != w.col {
			t.Errorf("token %d = %q at %d:%d, want %q at %d:%d", i, src[tk.off:tk.end], p.Line, p.Col, w.text, w.line, w.col)
		}
	}
	// Positions may be asked for out of order.
	if p := lx.pos(0); p.Line != 1 || p.Col != 1 {
		t.Errorf("pos(0) = %+v", p)
	}
	if p := lx.pos(len(src)); p.Line != 5 || p.Col != 6 {
		t.Errorf("pos(end) = %+v", p)
	}

	// Backwards on a line with multi-byte characters (a statement's start
	// is revisited after its body is parsed).
	line := "select 'éé', 'ü'; with a as (select 'ö') select x from a"
	lx, err = lex(line, new(scratch))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ off, col int }{{50, 47}, {21, 19}, {10, 10}, {40, 38}, {15, 14}, {8, 9}, {0, 1}} {
		if p := lx.pos(c.off); p.Col != c.col || p.Line != 1 {
			t.Errorf("pos(%d) = %+v, want column %d", c.off, p, c.col)
		}
	}
	stmts, perr := ParseStatements(line)
	if perr != nil {
		t.Fatal(perr)
	}
	if p := stmts[1].Pos(); p.Col != 19 || p.Offset != 21 {
		t.Errorf("second statement at %+v, want column 19", p)
	}
}
