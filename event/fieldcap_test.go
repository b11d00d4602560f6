package event

import "testing"

func TestCountFields(t *testing.T) {
	for in, want := range map[string]int{
		`{}`:                                  0,
		`{"a":1}`:                             1,
		`{"a":{"b":1,"c":[{"d":2},{"e":3}]}}`: 3,
		`{"a":[1,2,3],"b":{"c":{"d":{}}}}`:    4,
	} {
		v, err := Parse([]byte(in))
		if err != nil {
			t.Fatal(err)
		}
		if got := CountFields(v); got != want {
			t.Errorf("CountFields(%s) = %d, want %d", in, got, want)
		}
	}
}

// TestCapFields: the first fields in the order the JSON text has them are
// kept, objects emptied by the cut go too, and the input is not changed.
func TestCapFields(t *testing.T) {
	const in = `{"a":1,"b":{"c":2,"d":{"e":3,"f":4},"g":5},"h":[{"x":1}],"i":6}`
	cases := []struct {
		max     int
		want    string
		dropped int
	}{
		{100, in, 0},
		{9, in, 0},
		{8, `{"a":1,"b":{"c":2,"d":{"e":3,"f":4},"g":5},"h":[{"x":1}]}`, 1},
		{7, `{"a":1,"b":{"c":2,"d":{"e":3,"f":4},"g":5}}`, 2},
		{6, `{"a":1,"b":{"c":2,"d":{"e":3,"f":4}}}`, 3},
		{5, `{"a":1,"b":{"c":2,"d":{"e":3}}}`, 4},
		{4, `{"a":1,"b":{"c":2}}`, 6}, // d would be empty: left out
		{2, `{"a":1}`, 8},             // b would be empty
		{1, `{"a":1}`, 8},
		{0, `{}`, 9},
		{-3, `{}`, 9},
	}
	for _, tc := range cases {
		v, err := Parse([]byte(in))
		if err != nil {
			t.Fatal(err)
		}
		before := string(AppendJSON(nil, v))
		got, dropped := CapFields(v, tc.max)
		if s := string(AppendJSON(nil, got)); s != tc.want || dropped != tc.dropped {
			t.Errorf("max %d: got %s (%d dropped), want %s (%d dropped)", tc.max, s, dropped, tc.want, tc.dropped)
		}
		if after := string(AppendJSON(nil, v)); after != before {
			t.Errorf("max %d: the input changed: %s", tc.max, after)
		}
		if kept := CountFields(got); kept > max(tc.max, 0) || kept+dropped != 9 {
			t.Errorf("max %d: kept %d, dropped %d", tc.max, kept, dropped)
		}
	}
}

// FuzzCapFields: on any JSON object, CapFields keeps at most max fields,
// counts exactly the ones it left out, keeps a prefix of the depth-first
// order, leaves no empty object it made, and does not touch its input.
func FuzzCapFields(f *testing.F) {
	f.Add([]byte(`{"a":1,"b":{"c":2,"d":{"e":3,"f":4},"g":5},"h":[{"x":1}],"i":6}`), 4)
	f.Add([]byte(`{"a":{"b":{"c":{"d":{}}}}}`), 2)
	f.Add([]byte(`{"m":{"k1":1,"k2":2,"k3":3}}`), 0)
	f.Fuzz(func(t *testing.T, data []byte, n int) {
		v, err := Parse(data)
		if err != nil || v.Kind != Object {
			return
		}
		before := string(AppendJSON(nil, v))
		total := CountFields(v)
		got, dropped := CapFields(v, n)
		if string(AppendJSON(nil, v)) != before {
			t.Fatal("input changed")
		}
		kept := CountFields(got)
		if kept+dropped != total || kept > max(n, 0) {
			t.Fatalf("max %d: kept %d + dropped %d != %d", n, kept, dropped, total)
		}
		if dropped == 0 && string(AppendJSON(nil, got)) != before {
			t.Fatal("changed without dropping")
		}
		// The kept fields are a prefix of the input's depth-first order
		// (less the objects the cut emptied).
		var in, out []string
		walkPaths(v, "", &in)
		walkPaths(got, "", &out)
		j := 0
		for _, p := range out {
			for j < len(in) && in[j] != p {
				j++
			}
			if j == len(in) {
				t.Fatalf("kept %q out of order", p)
			}
		}
		if !hasEmptyMember(v) && hasEmptyMember(got) {
			t.Fatalf("cut left an empty object: %s", AppendJSON(nil, got))
		}
	})
}

// hasEmptyMember reports an object member with no members of its own.
func hasEmptyMember(v Value) bool {
	for i := range v.Kids {
		if v.Kids[i].Kind == Object && (len(v.Kids[i].Kids) == 0 || hasEmptyMember(v.Kids[i])) {
			return true
		}
	}
	return false
}

func walkPaths(v Value, prefix string, out *[]string) {
	for i := range v.Kids {
		p := prefix + "\x00" + v.Kids[i].Key
		*out = append(*out, p)
		if v.Kids[i].Kind == Object {
			walkPaths(v.Kids[i], p, out)
		}
	}
}
