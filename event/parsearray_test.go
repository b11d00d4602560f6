package event

import (
	"errors"
	"os"
	"strings"
	"testing"
)

// parseArrayAll runs ParseArray and returns clones of the elements it
// handed out (they are valid only during the callback).
func parseArrayAll(p *Parser, data []byte) ([]Value, error) {
	var out []Value
	err := p.ParseArray(data, func(i int, v Value) error {
		if i != len(out) {
			return errors.New("element index out of order")
		}
		out = append(out, v.Clone())
		return nil
	})
	return out, err
}

// TestParseArrayMatchesParse: element by element, ParseArray gives what
// Parse gives for the whole array, and the same error for a malformed one.
func TestParseArrayMatchesParse(t *testing.T) {
	edge, err := os.ReadFile("testdata/edge_event.json")
	if err != nil {
		t.Fatal(err)
	}
	inputs := []string{
		`[]`, ` [ ] `, `[1]`, `[{"a":1},{"b":"x\u00e9"},null,[1,[2]],"s"]`,
		"[" + string(edge) + "," + string(edge) + "]",
		`[{"a":1,"a":2}]`,
		// Malformed: the same error as Parse, at the same offset.
		`[`, `[1,]`, `[1 2]`, `[1`, `[{"a":}]`, `[1]x`, `[1] 2`, `["\x"]`, `[1,{"a":1`,
	}
	var p Parser
	for _, in := range inputs {
		want, werr := Parse([]byte(in))
		got, gerr := parseArrayAll(&p, []byte(in))
		if (werr == nil) != (gerr == nil) || (werr != nil && werr.Error() != gerr.Error()) {
			t.Errorf("%q: ParseArray error %v, Parse error %v", in, gerr, werr)
			continue
		}
		if werr != nil {
			continue
		}
		if len(got) != len(want.Kids) {
			t.Errorf("%q: %d elements, want %d", in, len(got), len(want.Kids))
			continue
		}
		for i := range got {
			if !Equal(got[i], want.Kids[i]) {
				t.Errorf("%q: element %d = %s, want %s", in, i, AppendJSON(nil, got[i]), AppendJSON(nil, want.Kids[i]))
			}
		}
	}
}

func TestParseArrayNotAnArray(t *testing.T) {
	var p Parser
	for _, in := range []string{``, `  `, `{}`, `1`, `"[1]"`} {
		err := p.ParseArray([]byte(in), func(int, Value) error { return nil })
		var se *SyntaxError
		if !errors.As(err, &se) || !strings.Contains(se.Msg, "'['") {
			t.Errorf("%q: error %v, want a *SyntaxError expecting '['", in, err)
		}
	}
}

// TestParseArrayStopsOnCallbackError: fn's error comes back as it is, and
// no later element is parsed.
func TestParseArrayStopsOnCallbackError(t *testing.T) {
	stop := errors.New("stop")
	var p Parser
	calls := 0
	err := p.ParseArray([]byte(`[1,2,3,bad`), func(i int, v Value) error {
		calls++
		if i == 1 {
			return stop
		}
		return nil
	})
	if err != stop || calls != 2 {
		t.Errorf("got %v after %d calls, want the callback's error after 2", err, calls)
	}
}

// TestParseArrayReusesMemory: a warm Parser parses an array of any length
// without allocating, because each element's memory is reused for the
// next (escaped strings included).
func TestParseArrayReusesMemory(t *testing.T) {
	edge, err := os.ReadFile("testdata/edge_event.json")
	if err != nil {
		t.Fatal(err)
	}
	elem := strings.Replace(string(edge), `"GET`, `"\u0047ET`, 1) // one escaped string per element
	body := []byte("[" + strings.Repeat(elem+",", 999) + elem + "]")
	var p Parser
	count := func(int, Value) error { return nil }
	if err := p.ParseArray(body, count); err != nil {
		t.Fatal(err)
	}
	allocs := testing.AllocsPerRun(5, func() {
		if err := p.ParseArray(body, count); err != nil {
			t.Fatal(err)
		}
	})
	if allocs > 0 {
		t.Errorf("warm ParseArray of 1000 elements allocated %.0f times", allocs)
	}
}

func FuzzParseArray(f *testing.F) {
	seeds := []string{`[]`, `[1,{"a":[2,{"b":"\u00e9"}]},null]`, `[1,]`, `[{"a":1,"a":2},"x"]`, `[[[[`, `[1]x`}
	if data, err := os.ReadFile("testdata/edge_event.json"); err == nil {
		seeds = append(seeds, "["+string(data)+","+string(data)+"]")
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	var p Parser
	f.Fuzz(func(t *testing.T, data []byte) {
		got, gerr := parseArrayAll(&p, data)
		want, werr := Parse(data)
		if werr == nil && want.Kind != Array {
			if gerr == nil {
				t.Fatalf("ParseArray accepted a %v document", want.Kind)
			}
			return
		}
		if gerr != nil && !errors.Is(gerr, ErrSyntax) {
			t.Fatalf("error %v does not wrap ErrSyntax", gerr)
		}
		if werr != nil {
			// Not an array at all, or a malformed one: the latter must fail
			// exactly as Parse fails.
			if gerr == nil {
				t.Fatalf("ParseArray accepted what Parse refuses (%v)", werr)
			}
			if se := (*SyntaxError)(nil); errors.As(gerr, &se) && !strings.Contains(se.Msg, "'['") && gerr.Error() != werr.Error() {
				t.Fatalf("ParseArray error %q, Parse error %q", gerr, werr)
			}
			return
		}
		if gerr != nil {
			t.Fatalf("ParseArray failed (%v) where Parse succeeded", gerr)
		}
		if len(got) != len(want.Kids) {
			t.Fatalf("%d elements, want %d", len(got), len(want.Kids))
		}
		for i := range got {
			if !Equal(got[i], want.Kids[i]) {
				t.Fatalf("element %d differs", i)
			}
		}
	})
}
