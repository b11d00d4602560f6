package fn

import (
	"testing"

	"github.com/sediment/sediment/internal/vec"
)

func TestRegexpFunctions(t *testing.T) {
	const hello = "Hello Helloo and Hellooo"
	runCases(t, []fnCase{
		c("regexp_contains", true, "foo@example.com", `@[a-zA-Z0-9-]+\.[a-zA-Z0-9-.]+`),
		c("regexp_contains", false, "www.example.net", `@[a-zA-Z0-9-]+\.[a-zA-Z0-9-.]+`),
		c("regexp_contains", true, "hello", "ell"),
		c("regexp_contains", true, "hello", "^he"),
		c("regexp_contains", false, "hello", "^el"),
		c("regexp_contains", true, "hello", "lo$"),
		c("regexp_contains", false, "hello\n", "lo$"),
		c("regexp_contains", true, "hello", "^hello$"),
		c("regexp_contains", false, "hello!", "^hello$"),
		c("regexp_contains", true, "hello", ""),
		c("regexp_contains", true, "he.llo", `\.`),
		c("regexp_contains", false, "hello", `\.`),
		c("regexp_contains", true, "HeLLo", "(?i)hello"),
		c("regexp_contains", true, "error: x", "error|warn"),
		c("regexp_contains", true, "a  b", `a\s{2}b`),
		c("regexp_contains", true, "naïve", "ï"),
		c("regexp_contains", errWant(`REGEXP_CONTAINS: invalid regular expression "("`), "x", "("),
		c("regexp_contains", nil, nullOf(vec.String), "x"),
		c("regexp_contains", nil, "x", nullOf(vec.String)),
		c("regexp_extract", "foo", "foo@example.com", `^[a-zA-Z0-9_.+-]+`),
		c("regexp_extract", "foo", "foo@example.com", `^([a-zA-Z0-9_.+-]+)@`),
		c("regexp_extract", nil, "abc", "x"),
		c("regexp_extract", nil, "abc", "x(y)?|abc"),
		c("regexp_extract", errWant("more than 1 capturing group"), "abc", "(a)(b)"),
		c("regexp_extract", "Hello", hello, "H?ello+", 1, 1),
		c("regexp_extract", "Helloo", hello, "H?ello+", 1, 2),
		c("regexp_extract", "Hellooo", hello, "H?ello+", 1, 3),
		c("regexp_extract", nil, hello, "H?ello+", 1, 4),
		c("regexp_extract", "ello", hello, "H?ello+", 2, 1),
		c("regexp_extract", "Helloo", hello, "H?ello+", 3, 1),
		c("regexp_extract", nil, hello, "H?ello+", 20, 1),
		c("regexp_extract", errWant("position"), hello, "H?ello+", 0, 1),
		c("regexp_extract", errWant("occurrence"), hello, "H?ello+", 1, 0),
		c("regexp_substr", "b", "abc", "b"),
		c("regexp_extract_all", []any{"func(x)", "func(y)"}, "Try `func(x)` or `func(y)`", "`(.+?)`"),
		c("regexp_extract_all", []any{}, "abc", "x"),
		c("regexp_extract_all", []any{"1", "2"}, "a1b2", "[0-9]"),
		c("regexp_extract_all", errWant("capturing group"), "abc", "(a)(b)"),
		c("regexp_replace", "<h1>Heading</h1>", "# Heading", `^# ([a-zA-Z0-9\s]+$)`, `<h1>\1</h1>`),
		c("regexp_replace", `a\c`, "abc", "b", `\\`),
		c("regexp_replace", "xaxbxcx", "abc", "", "x"),
		c("regexp_replace", "bbbbbb", "aaa", "a", "bb"),
		c("regexp_replace", "[abc]", "abc", "abc", `[\0]`),
		c("regexp_replace", "abc", "abc", "x", "y"),
		c("regexp_replace", errWant("capturing group"), "abc", "b", `\2`),
		c("regexp_replace", errWant("invalid escape"), "abc", "b", `\q`),
		c("regexp_instr", 3, "ab@cd-ef", "@[^-]*"),
		c("regexp_instr", 6, "ab@cd-ef", "@[^-]*", 1, 1, 1),
		c("regexp_instr", 0, "abc", "x"),
		c("regexp_instr", 4, "a1a2", "[0-9]", 1, 2),
	})
}

// The pattern of a column is compiled once per distinct value; a bad one is
// an error, or NULL under SAFE.
func TestRegexpColumnPattern(t *testing.T) {
	for _, safe := range []bool{false, true} {
		f, _ := Lookup("regexp_contains")
		b, err := f.Bind([]Arg{{Type: vec.String}, {Type: vec.String}}, BindInfo{Safe: safe})
		if err != nil {
			t.Fatal(err)
		}
		s := buildVector(vec.String, []any{"abc", "abc", "abc"}, false)
		p := buildVector(vec.String, []any{"b", "(", "^a"}, false)
		r, err := b.Eval(testEvalCtx(), []*vec.Vector{s, p}, nil, 3)
		if !safe {
			if err == nil {
				t.Error("bad pattern in a column: no error")
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if readValue(r, 0) != true || readValue(r, 1) != nil || readValue(r, 2) != true {
			t.Errorf("got %v %v %v", readValue(r, 0), readValue(r, 1), readValue(r, 2))
		}
	}
}
