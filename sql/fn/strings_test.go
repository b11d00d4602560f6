package fn

import (
	"crypto/md5"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/sediment/sediment/internal/vec"
)

func TestStringFunctions(t *testing.T) {
	runCases(t, []fnCase{
		c("lower", "foo", "FoO"),
		c("lower", "äöü", "ÄÖÜ"),
		c("upper", "FOO", "foo"),
		c("upper", nil, nullOf(vec.String)),
		c("lower", errWant("No matching signature for function LOWER for argument types: INT64"), 1),
		c("lower", errWant("Number of arguments does not match for function LOWER"), "a", "b"),
		c("length", 5, "абвгд"),
		c("char_length", 5, "абвгд"),
		c("character_length", 0, ""),
		c("byte_length", 10, "абвгд"),
		c("starts_with", true, "bar", "b"),
		c("starts_with", false, "bar", "a"),
		c("starts_with", true, "bar", ""),
		c("ends_with", true, "apple", "e"),
		c("ends_with", nil, "apple", nil),
		c("strpos", 4, "foo@example.com", "@"),
		c("strpos", 0, "foo", "z"),
		c("strpos", 3, "абв", "в"),
		c("strpos", 1, "abc", ""),
		c("instr", 2, "banana", "an"),
		c("instr", 4, "banana", "an", 1, 2),
		c("instr", 0, "banana", "an", 1, 3),
		c("instr", 4, "banana", "an", 3, 1),
		c("instr", 4, "banana", "an", -1, 1),
		c("instr", 4, "banana", "an", -3, 1),
		c("instr", 2, "banana", "an", -3, 2),
		c("instr", 0, "banana", "ann", 1, 1),
		c("instr", 5, "helloooo", "oo", 1, 1),
		c("instr", 6, "helloooo", "oo", 1, 2),
		c("instr", 2, "αβγβ", "β"),
		c("instr", errWant("position"), "banana", "an", 0, 1),
		c("instr", errWant("occurrence"), "banana", "an", 1, 0),
		c("substr", "pple", "apple", 2),
		c("substr", "pp", "apple", 2, 2),
		c("substr", "le", "apple", -2),
		c("substr", "apple", "apple", 1, 123),
		c("substr", "", "apple", 123),
		c("substr", "apple", "apple", -123),
		c("substr", "apple", "apple", 0),
		c("substr", "", "apple", 2, 0),
		c("substring", "βγ", "αβγδ", 2, 2),
		c("substr", "δ", "αβγδ", -1),
		c("substr", errWant("cannot be negative"), "apple", 2, -1),
		c("concat", "abc", "a", "b", "c"),
		c("concat", nil, "a", nil),
		c("concat", "x1", "x", 1),
		c("concat", "x1.5true", "x", 1.5, true),
		c("concat", "d:2024-01-02", "d:", date("2024-01-02")),
		c("concat", "", ""),
		c("concat", errWant("No matching signature"), "a", arr(vec.Int64, 1)),
		c("||", "ab", "a", "b"),
		c("trim", "x", "  x \t\n"),
		c("trim", "apple", "***apple***", "*"),
		c("trim", "X", "abcbaXbca", "abc"),
		c("ltrim", "x  ", "  x  "),
		c("rtrim", "xxa", "xxaxx", "x"),
		c("rtrim", "  x", "  x  "),
		c("trim", "", ""),
		c("split", []any{"a", "b", "c"}, "a,b,c"),
		c("split", []any{"a", "b"}, "a b", " "),
		c("split", []any{""}, ""),
		c("split", []any{"a", "", "b"}, "a,,b", ","),
		c("split", []any{"a", "b", "c"}, "abc", ""),
		c("split", []any{"x", "y"}, "x::y", "::"),
		c("split", []any{"é", "ü"}, "éü", ""),
		c("split", nil, nullOf(vec.String)),
		c("replace", "aXXle Xie", "apple pie", "p", "X"),
		c("replace", "abc", "abc", "", "x"),
		c("replace", "ac", "abc", "b", ""),
		c("repeat", "ababab", "ab", 3),
		c("repeat", "", "ab", 0),
		c("repeat", "", "", 5),
		c("repeat", errWant("negative"), "a", -1),
		c("repeat", errWant("maximum size"), "abc", int64(1)<<40),
		safeC("repeat", nil, "a", -1),
		c("reverse", "cba", "abc"),
		c("reverse", "вба", "абв"),
		c("reverse", "", ""),
		c("left", "ban", "banana", 3),
		c("left", "абв", "абвгд", 3),
		c("left", "a", "a", 5),
		c("left", "", "abc", 0),
		c("left", errWant("negative"), "a", -1),
		c("right", "ple", "apple", 3),
		c("right", "гд", "абвгд", 2),
		c("right", "apple", "apple", 10),
		c("lpad", "    c", "c", 5),
		c("lpad", "aaaab", "b", 5, "a"),
		c("lpad", "ghdghdgabc", "abc", 10, "ghd"),
		c("lpad", "ab", "abc", 2, "d"),
		c("lpad", "  例子", "例子", 4),
		c("rpad", "abcghdghdg", "abc", 10, "ghd"),
		c("rpad", "c    ", "c", 5),
		c("rpad", "ab", "abc", 2),
		c("lpad", errWant("negative"), "abc", -1),
		c("lpad", errWant("pattern"), "abc", 5, ""),
		c("lpad", errWant("maximum size"), "abc", int64(1)<<40),
		c("initcap", "Hello World-Everyone!", "Hello world-everyone!"),
		c("initcap", "Apples1Oranges2Pears", "apples1oranges2pears", "12"),
		c("initcap", "Élan Vital", "éLAN VITAL"),
		c("to_hex", "616263", "abc"),
		c("to_base64", "YWJj", "abc"),
		c("from_base64", "abc", "YWJj"),
		c("from_hex", "\x0a\xbc", "abc"),
		c("from_hex", errWant("invalid hexadecimal"), "zz"),
		c("md5", string(md5sum("")), ""),
		c("contains_substr", true, "the blue house", "Blue house"),
		c("contains_substr", false, "the red house", "blue"),
		c("contains_substr", true, "ABC", ""),
		c("contains_substr", true, "Ärger", "äR"),
		c("contains_substr", true, 123, "23"),
		c("contains_substr", true, date("2024-01-02"), "01-0"),
		c("contains_substr", true, jsonV(`{"a":"Hello"}`), "hello"),
		c("contains_substr", false, jsonV(`{"hello":1}`), "hello"),
		c("contains_substr", true, jsonV(`{"hello":1}`), "hello", keep{"JSON_KEYS"}),
		c("contains_substr", true, jsonV(`{"a":[1,25]}`), "25"),
		c("contains_substr", true, refV(1), "/X"),
		c("contains_substr", false, refV(1), "metadata"),
		c("contains_substr", nil, nullOf(vec.String), "a"),
	})
}

func md5sum(s string) []byte {
	h := md5.Sum([]byte(s))
	return h[:]
}

func TestHashHex(t *testing.T) {
	got, err := evalShape("md5", false, shapeColumn, "")
	if err != nil {
		t.Fatal(err)
	}
	if hex.EncodeToString([]byte(got.(string))) != "d41d8cd98f00b204e9800998ecf8427e" {
		t.Errorf("md5('') = %x", got)
	}
	got, err = evalShape("sha256", false, shapeDict, "abc")
	if err != nil {
		t.Fatal(err)
	}
	if h := hex.EncodeToString([]byte(got.(string))); !strings.HasPrefix(h, "ba7816bf") {
		t.Errorf("sha256('abc') = %s", h)
	}
}

// A string function over a dictionary vector computes once per entry and
// returns a dictionary vector sharing the row codes.
func TestStringMapKeepsDictionary(t *testing.T) {
	f, _ := Lookup("upper")
	b, err := f.Bind([]Arg{{Type: vec.String}}, BindInfo{})
	if err != nil {
		t.Fatal(err)
	}
	col := buildVector(vec.String, []any{"get", "post", nil, "get"}, true)
	r, err := b.Eval(testEvalCtx(), []*vec.Vector{col}, nil, 4)
	if err != nil {
		t.Fatal(err)
	}
	if !r.IsDict() {
		t.Error("result is not dictionary encoded")
	}
	if len(r.Dict) != 3 {
		t.Errorf("result dictionary %q, want a filler and the 2 used entries", r.Dict)
	}
	for i, w := range []any{"GET", "POST", nil, "GET"} {
		if got := readValue(r, i); got != w {
			t.Errorf("row %d = %v, want %v", i, got, w)
		}
	}
}

// Splitting a dictionary vector gathers per-entry arrays into rows.
func TestSplitOnDictionary(t *testing.T) {
	f, _ := Lookup("split")
	b, err := f.Bind([]Arg{{Type: vec.String}}, BindInfo{})
	if err != nil {
		t.Fatal(err)
	}
	col := buildVector(vec.String, []any{"a,b", nil, "c", "a,b"}, true)
	r, err := b.Eval(testEvalCtx(), []*vec.Vector{col}, []int32{0, 1, 3}, 4)
	if err != nil {
		t.Fatal(err)
	}
	want := []any{[]any{"a", "b"}, nil, []any{}, []any{"a", "b"}}
	for _, i := range []int{0, 1, 3} {
		if got := readValue(r, i); !sameTestValue(got, want[i]) {
			t.Errorf("row %d = %#v, want %#v", i, got, want[i])
		}
	}
	if len(r.Offsets) != 5 {
		t.Errorf("offsets %v", r.Offsets)
	}
}
