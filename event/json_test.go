package event

import (
	"encoding/binary"
	"errors"
	"math"
	"math/bits"
	"os"
	"strings"
	"testing"
	"unicode/utf8"
)

// obj and arr keep the expected trees in the tables readable.
func obj(kv ...any) Value {
	ms := make([]Value, 0, len(kv)/2)
	for i := 0; i < len(kv); i += 2 {
		ms = append(ms, Member(kv[i].(string), kv[i+1].(Value)))
	}
	return ObjectValue(ms...)
}

func arr(e ...Value) Value { return ArrayValue(e...) }
func str(s string) Value   { return StringValue(s) }
func num(i int64) Value    { return IntValue(i) }
func flt(f float64) Value  { return FloatValue(f) }

func TestParseValues(t *testing.T) {
	tests := []struct {
		in   string
		want Value
	}{
		{`null`, NullValue()},
		{` true `, BoolValue(true)},
		{"\t\r\nfalse\n", BoolValue(false)},
		{`0`, num(0)},
		{`-0`, num(0)},
		{`42`, num(42)},
		{`-17`, num(-17)},
		{`9223372036854775807`, num(math.MaxInt64)},
		{`-9223372036854775808`, num(math.MinInt64)},
		{`9223372036854775808`, flt(9223372036854775808)},
		{`-9223372036854775809`, flt(-9223372036854775809)},
		{`123456789012345678901234567890`, flt(1.2345678901234568e29)},
		{`1.5`, flt(1.5)},
		{`-0.25`, flt(-0.25)},
		{`1e3`, flt(1000)},
		{`1E+2`, flt(100)},
		{`2.5e-3`, flt(0.0025)},
		{`1.0`, flt(1)},
		{`""`, str("")},
		{`"plain"`, str("plain")},
		{`"a\"b\\c\/d\be\ff\ng\rh\ti"`, str("a\"b\\c/d\be\ff\ng\rh\ti")},
		{`"\u0041\u00e9\u4e2d"`, str("Aé中")},
		{`"\u0000"`, str("\x00")},
		{`"\ud83d\ude00"`, str("😀")},
		{`"\uD83D\uDE00x"`, str("😀x")},
		{`"\ud83d"`, str("\uFFFD")},                     // lone high surrogate
		{`"\ude00"`, str("\uFFFD")},                     // lone low surrogate
		{`"\ud83dx"`, str("\uFFFDx")},                   // high surrogate then a letter
		{`"\ud83d\u0041"`, str("\uFFFDA")},              // high surrogate then a non-surrogate escape
		{`"\ud83d\ud83d\ude00"`, str("\uFFFD😀")},        // two highs then a low
		{"\"caf\xc3\xa9 \xe2\x82\xac\"", str("café €")}, // valid UTF-8 is kept
		{"\"a\xffb\"", str("a\uFFFDb")},                 // invalid byte
		{"\"\xed\xa0\x80\"", str("\uFFFD\uFFFD\uFFFD")}, // UTF-8-encoded surrogate: 3 invalid bytes
		{"\"\xc3\"", str("\uFFFD")},                     // truncated sequence
		{`[]`, arr()},
		{`[1,"a",null,[true]]`, arr(num(1), str("a"), NullValue(), arr(BoolValue(true)))},
		{`{}`, obj()},
		{` { "a" : 1 , "b" : [ ] , "c" : { } } `, obj("a", num(1), "b", arr(), "c", obj())},
		{`{"a":1,"b":2,"a":3}`, obj("a", num(3), "b", num(2))}, // last wins, first position
		{`{"a":1,"a":{"x":[1]},"a":"s"}`, obj("a", str("s"))},
		{`{"k\u00e9y":1}`, obj("kéy", num(1))},
	}
	for _, tc := range tests {
		got, err := Parse([]byte(tc.in))
		if err != nil {
			t.Errorf("Parse(%q): %v", tc.in, err)
			continue
		}
		if !Equal(got, tc.want) {
			t.Errorf("Parse(%q) = %s, want %s", tc.in, AppendJSON(nil, got), AppendJSON(nil, tc.want))
		}
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		in     string
		offset int
		msg    string // substring of the message
	}{
		{``, 0, "expected a value"},
		{`   `, 3, "expected a value"},
		{`nul`, 0, "expected 'null'"},
		{`tru e`, 0, "expected 'true'"},
		{`01`, 1, "expected end of input"},
		{`1 2`, 2, "expected end of input"},
		{`-`, 1, "expected a digit"},
		{`-a`, 1, "expected a digit"},
		{`1.`, 2, "expected a digit after the decimal point"},
		{`1.e5`, 2, "expected a digit after the decimal point"},
		{`1e`, 2, "expected a digit in the exponent"},
		{`.5`, 0, "expected a value"},
		{`+1`, 0, "expected a value"},
		{`1e400`, 0, "out of float64 range"},
		{`NaN`, 0, "expected a value"},
		{`[1,]`, 3, "expected a value"},
		{`[1 2]`, 3, "expected ',' or ']'"},
		{`[1`, 2, "end of input"},
		{`{"a":1,}`, 7, "expected a string object key"},
		{`{"a" 1}`, 5, "expected ':'"},
		{`{a:1}`, 1, "expected a string object key"},
		{`{"a":1 "b":2}`, 7, "expected ',' or '}'"},
		{`{"a":1`, 6, "end of input"},
		{`"abc`, 4, "expected '\"' to close"},
		{`"ab\`, 4, "end of input in an escape"},
		{`"\x"`, 2, "invalid escape"},
		{`"\u12"`, 3, "expected 4 hex digits"},
		{`"\u12g4"`, 3, "expected 4 hex digits"},
		{"\"a\nb\"", 2, "control character"},
		{"\"a\x01\"", 2, "control character"},
		{"\"é\tb\"", 3, "control character"},
		{`'a'`, 0, "expected a value"},
		{"\xef\xbb\xbf{}", 0, "expected a value"}, // a BOM is not JSON whitespace
		{`{"a":1}}`, 7, "expected end of input"},
	}
	for _, tc := range tests {
		_, err := Parse([]byte(tc.in))
		var se *SyntaxError
		if !errors.As(err, &se) || !errors.Is(err, ErrSyntax) {
			t.Errorf("Parse(%q) error = %v, want a *SyntaxError", tc.in, err)
			continue
		}
		if se.Offset != tc.offset || !strings.Contains(se.Msg, tc.msg) {
			t.Errorf("Parse(%q) = offset %d %q, want offset %d containing %q", tc.in, se.Offset, se.Msg, tc.offset, tc.msg)
		}
	}
}

func TestParseDepthLimit(t *testing.T) {
	ok := strings.Repeat("[", MaxDepth) + strings.Repeat("]", MaxDepth)
	if _, err := Parse([]byte(ok)); err != nil {
		t.Fatalf("depth %d: %v", MaxDepth, err)
	}
	deep := strings.Repeat(`{"a":`, MaxDepth) + "[1]" + strings.Repeat("}", MaxDepth)
	_, err := Parse([]byte(deep))
	var se *SyntaxError
	if !errors.As(err, &se) || !strings.Contains(se.Msg, "nesting deeper") || se.Offset != 5*MaxDepth {
		t.Fatalf("depth %d: err = %v, want nesting error at offset %d", MaxDepth+1, err, 5*MaxDepth)
	}
	// Far deeper than the limit must fail fast, not exhaust the stack.
	if _, err := Parse([]byte(strings.Repeat("[", 1<<20))); !errors.Is(err, ErrSyntax) {
		t.Fatalf("1M brackets: err = %v", err)
	}
}

func TestParseLargeObjectDuplicates(t *testing.T) {
	var b strings.Builder
	b.WriteString("{")
	for i := range 200 {
		if i > 0 {
			b.WriteString(",")
		}
		// keys k0..k99 twice; the second round carries the winning values
		b.WriteString(`"k` + itoa(i%100) + `":` + itoa(i))
	}
	b.WriteString("}")
	v, err := Parse([]byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	if v.Len() != 100 {
		t.Fatalf("len = %d, want 100", v.Len())
	}
	for i := range 100 {
		m := v.Elem(i)
		if m.Key != "k"+itoa(i) || m.Int() != int64(i+100) {
			t.Fatalf("member %d = %s:%d, want k%d:%d", i, m.Key, m.Int(), i, i+100)
		}
	}
}

func itoa(i int) string { return string(AppendJSON(nil, num(int64(i)))) }

func TestParseNDJSON(t *testing.T) {
	in := "{\"a\":1}\n\n  \r\n[2]\r\n\"x\"  \n"
	vs, err := ParseNDJSON([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	want := []Value{obj("a", num(1)), arr(num(2)), str("x")}
	if len(vs) != len(want) {
		t.Fatalf("got %d values, want %d", len(vs), len(want))
	}
	for i := range want {
		if !Equal(vs[i], want[i]) {
			t.Errorf("value %d = %s, want %s", i, AppendJSON(nil, vs[i]), AppendJSON(nil, want[i]))
		}
	}

	bad := "{\"a\":1}\n{\"b\":2}\n\n{\"c\":}\n{\"d\":4}"
	vs, err = ParseNDJSON([]byte(bad))
	var se *SyntaxError
	if !errors.As(err, &se) {
		t.Fatalf("err = %v, want *SyntaxError", err)
	}
	if se.Line != 4 || se.Offset != strings.Index(bad, "}\n{\"d") {
		t.Errorf("error at line %d offset %d, want line 4 offset %d", se.Line, se.Offset, strings.Index(bad, "}\n{\"d"))
	}
	if !strings.Contains(se.Error(), "line 4") {
		t.Errorf("message %q does not name the line", se.Error())
	}
	if len(vs) != 2 {
		t.Errorf("values before the error = %d, want 2", len(vs))
	}
}

// TestParserReuse checks that one Parser yields correct trees across many
// documents, that Values stay intact until Reset, and that a warm Parser
// parses without allocating.
func TestParserReuse(t *testing.T) {
	docs := []string{
		`{"a":"x\ny","b":[1,2,{"c":"\u00e9"}]}`,
		`{"k":"v","n":{"m":[true,false,null]}}`,
		`["esc\"aped",{"deep":{"deeper":{"deepest":1.5}}}]`,
	}
	p := NewParser()
	var got []Value
	for range 50 {
		for _, d := range docs {
			v, err := p.Parse([]byte(d))
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, v)
		}
	}
	for i, v := range got {
		want, _ := Parse([]byte(docs[i%len(docs)]))
		if !Equal(v, want) {
			t.Fatalf("value %d corrupted: %s", i, AppendJSON(nil, v))
		}
	}
	p.Reset()
	data := []byte(docs[0] + docs[1])
	allocs := testing.AllocsPerRun(100, func() {
		p.Reset()
		if _, err := p.Parse(data[:len(docs[0])]); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("warm Parser allocates %.1f times per document, want 0", allocs)
	}
}

// TestParseAliasing documents which strings share the input's memory.
func TestParseAliasing(t *testing.T) {
	data := []byte(`{"plain":"abc","esc":"a\nb"}`)
	v, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	kept := v.Clone()
	copy(data[10:13], "XYZ") // overwrite "abc" in the input
	if got := v.Get("plain").Str; got != "XYZ" {
		t.Errorf("plain string = %q, expected it to alias the input", got)
	}
	if got := v.Get("esc").Str; got != "a\nb" {
		t.Errorf("escaped string = %q, want a private copy", got)
	}
	if got := kept.Get("plain").Str; got != "abc" {
		t.Errorf("cloned string = %q, want abc", got)
	}
}

func TestParseEdgeEvent(t *testing.T) {
	data, err := os.ReadFile("testdata/edge_event.json")
	if err != nil {
		t.Fatal(err)
	}
	v, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	if got := v.Path("metadata", "request", "cf", "asn"); got == nil || got.Kind != Int || got.Int() != 64496 {
		t.Errorf("metadata.request.cf.asn = %+v", got)
	}
	if got := v.Path("metadata", "request", "headers", "referer"); got == nil || got.Kind != Null {
		t.Errorf("referer = %+v, want null", got)
	}
	// Compact input re-encodes byte for byte.
	if out := AppendJSON(nil, v); string(out) != strings.TrimSpace(string(data)) {
		t.Errorf("re-encoding differs:\n%s\n%s", out, data)
	}
}

func TestAppendJSON(t *testing.T) {
	tests := []struct {
		v    Value
		want string
	}{
		{NullValue(), `null`},
		{BoolValue(true), `true`},
		{num(-12), `-12`},
		{flt(1), `1.0`},
		{flt(0), `0.0`},
		{flt(math.Copysign(0, -1)), `-0.0`},
		{flt(1.5), `1.5`},
		{flt(1e20), `100000000000000000000.0`},
		{flt(1e21), `1e+21`},
		{flt(1.5e-7), `1.5e-7`},
		{flt(1e-6), `0.000001`},
		{flt(123456789.125), `123456789.125`},
		{flt(math.NaN()), `null`},
		{flt(math.Inf(1)), `null`},
		{str("a\"b\\c\n\r\t\b\f\x01\x1f/<>&"), `"a\"b\\c\n\r\t\b\f\u0001\u001f/<>&"`},
		{str("é😀"), `"é😀"`},
		{str("a\xffb\xc3"), `"a\ufffdb\ufffd"`},
		{arr(), `[]`},
		{obj(), `{}`},
		{obj("z", num(1), "a", arr(str("x"), NullValue()), "m", obj("q\"", BoolValue(false))), `{"z":1,"a":["x",null],"m":{"q\"":false}}`},
		{Value{Kind: Kind(99)}, `null`},
	}
	for _, tc := range tests {
		if got := string(AppendJSON(nil, tc.v)); got != tc.want {
			t.Errorf("AppendJSON = %s, want %s", got, tc.want)
		}
	}
}

// TestFloatRoundTrip checks that every float re-parses as the same Float.
func TestFloatRoundTrip(t *testing.T) {
	for _, f := range []float64{0, 1, -1, 0.1, 1.0 / 3, 1e-300, 5e-324, math.MaxFloat64, 1e21, 1e20, 123e-9, 2.5e15, 9007199254740993} {
		text := AppendJSON(nil, flt(f))
		v, err := Parse(text)
		if err != nil || v.Kind != Float || v.Float() != f {
			t.Errorf("%v → %s → %+v, %v", f, text, v, err)
		}
	}
}

func TestAppendEventJSON(t *testing.T) {
	e := Event{
		ID:         "id-1",
		Timestamp:  1752148805123456,
		Message:    "hello \"world\"",
		HasMessage: true,
		Fields:     obj("metadata", obj("a", num(1)), "project", str("p"), "id", str("dup"), "timestamp", num(1)),
	}
	want := `{"event_message":"hello \"world\"","id":"id-1","metadata":{"a":1},"project":"p","timestamp":1752148805123456}`
	if got := string(AppendEventJSON(nil, e)); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	e = Event{ID: "x", Timestamp: -5, Fields: obj()}
	if got := string(AppendEventJSON(nil, e)); got != `{"id":"x","timestamp":-5}` {
		t.Errorf("no message: got %s", got)
	}
}

func FuzzParse(f *testing.F) {
	seeds := []string{`{"a":[1,2.5,"x\u00e9\ud83d\ude00",null,true,{"b":{}}]}`, `"\ud800"`, "\"\xff\"", `[1e400]`, `{"a":1,"a":2}`, `-0`, `1E-2`}
	if data, err := os.ReadFile("testdata/edge_event.json"); err == nil {
		seeds = append(seeds, string(data))
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	var p Parser
	f.Fuzz(func(t *testing.T, data []byte) {
		p.Reset()
		v, err := p.Parse(data)
		if err != nil {
			if !errors.Is(err, ErrSyntax) {
				t.Fatalf("error %v does not wrap ErrSyntax", err)
			}
			return
		}
		// What we parse, we write as valid JSON that parses to the same tree.
		out := AppendJSON(nil, v)
		if !utf8.Valid(out) {
			t.Fatalf("AppendJSON produced invalid UTF-8: %q", out)
		}
		v2, err := Parse(out)
		if err != nil {
			t.Fatalf("re-parse of %q: %v", out, err)
		}
		if !Equal(v, v2) {
			t.Fatalf("round trip differs: %q → %q", data, out)
		}
	})
}

func FuzzParseNDJSON(f *testing.F) {
	f.Add([]byte("{\"a\":1}\n[2]\r\n\n\"x\"\n"))
	f.Add([]byte("{\"a\":1}\n{bad\n"))
	var p Parser
	f.Fuzz(func(t *testing.T, data []byte) {
		p.Reset()
		vs, err := p.ParseNDJSON(data, nil)
		var se *SyntaxError
		if err != nil && (!errors.As(err, &se) || se.Line < 1 || se.Offset < 0 || se.Offset > len(data)) {
			t.Fatalf("bad error %v", err)
		}
		for _, v := range vs {
			AppendJSON(nil, v)
		}
	})
}

// TestSpecialInWordFindsFirstSpecialByte checks the string scanner's
// word test against a byte-by-byte one: for every byte value at every
// place of a word, among plain bytes or after another special byte, the
// lowest bit of the mask marks the first byte that is '"', '\\', a control
// character or not ASCII, and the mask is 0 when there is none.
func TestSpecialInWordFindsFirstSpecialByte(t *testing.T) {
	special := func(c byte) bool { return c == '"' || c == '\\' || c < 0x20 || c >= 0x80 }
	for _, fill := range []byte{'a', ' ', '~', '"', 0x1f, 0xff} {
		for pos := 0; pos < 8; pos++ {
			for c := 0; c < 256; c++ {
				var w [8]byte
				for k := range w {
					w[k] = 'x'
					if k > pos {
						w[k] = fill
					}
				}
				w[pos] = byte(c)
				first := 8
				for k, b := range w {
					if special(b) {
						first = k
						break
					}
				}
				m := specialInWord(binary.LittleEndian.Uint64(w[:]))
				got := 8
				if m != 0 {
					got = bits.TrailingZeros64(m) >> 3
				}
				if got != first {
					t.Fatalf("word %q: first special byte at %d, mask %#x says %d", w[:], first, m, got)
				}
			}
		}
	}
}
