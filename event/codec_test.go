package event

import (
	"bytes"
	"encoding/hex"
	"errors"
	"math"
	"strings"
	"testing"
)

func codecSamples() []Value {
	big := make([]Value, 100_000)
	for i := range big {
		big[i] = IntValue(int64(i) * 7919)
	}
	deep := NullValue()
	for range MaxDepth {
		deep = arr(deep)
	}
	return []Value{
		NullValue(),
		BoolValue(false),
		BoolValue(true),
		num(0), num(1), num(-1), num(math.MaxInt64), num(math.MinInt64),
		flt(0), flt(math.Copysign(0, -1)), flt(1.5), flt(-1e300), flt(math.Inf(1)), flt(math.NaN()), flt(5e-324),
		str(""), str("plain"), str("é中😀\u0000\xff"), str(strings.Repeat("x", 1<<20)),
		arr(), obj(),
		arr(NullValue(), BoolValue(true), num(3), flt(2.5), str("s"), arr(arr()), obj("k", obj())),
		obj("", num(1), "ключ", str("значение"), "nested", obj("a", arr(obj("b", NullValue())))),
		ArrayValue(big...),
		deep,
	}
}

func TestCodecRoundTrip(t *testing.T) {
	for i, v := range codecSamples() {
		enc := AppendValue([]byte("prefix"), v)[len("prefix"):]
		enc = append(enc, "rest"...)
		got, rest, err := DecodeValue(enc)
		if err != nil {
			t.Fatalf("sample %d: %v", i, err)
		}
		if !Equal(got, v) {
			t.Errorf("sample %d: round trip differs", i)
		}
		if string(rest) != "rest" {
			t.Errorf("sample %d: rest = %q", i, rest)
		}
	}
}

// TestCodecLayout pins the on-disk bytes: the tags are a file format.
func TestCodecLayout(t *testing.T) {
	tests := []struct {
		v    Value
		want string // hex
	}{
		{NullValue(), "00"},
		{BoolValue(false), "01"},
		{BoolValue(true), "02"},
		{num(-2), "03" + "03"}, // zigzag(-2) = 3
		{num(300), "03" + "d804"},
		{flt(1), "04" + "000000000000f03f"},
		{str("hé"), "05" + "03" + "68c3a9"},
		{arr(num(1), NullValue()), "06" + "02" + "0302" + "00"},
		{obj("a", BoolValue(true)), "07" + "01" + "0161" + "02"},
	}
	for _, tc := range tests {
		if got := hex.EncodeToString(AppendValue(nil, tc.v)); got != tc.want {
			t.Errorf("%s: got %s, want %s", AppendJSON(nil, tc.v), got, tc.want)
		}
	}
	e := Event{ID: "i", Timestamp: 1, Message: "m", HasMessage: true, Fields: obj()}
	if got := hex.EncodeToString(AppendEvent(nil, e)); got != "01"+"0169"+"02"+"01"+"016d"+"0700" {
		t.Errorf("event layout: %s", got)
	}
}

func TestEventRoundTrip(t *testing.T) {
	events := []Event{
		{},
		{ID: "2f1c8e4a-9b7d-4c3e-8f2a-1d6b5e9c0a7f", Timestamp: 1752148805123456, Fields: obj("metadata", obj("a", num(1)))},
		{ID: "x", Timestamp: -1, Message: "", HasMessage: true, Fields: obj()},
		{ID: "ü", Timestamp: math.MinInt64, Message: strings.Repeat("m", 70000), HasMessage: true, Fields: obj("p", str("q"))},
		{ID: "y", Timestamp: math.MaxInt64, Fields: obj("z", arr(flt(1.25), BoolValue(false)))},
	}
	for i, e := range events {
		enc := AppendEvent(nil, e)
		got, rest, err := DecodeEvent(append(enc, 0xAA))
		if err != nil {
			t.Fatalf("event %d: %v", i, err)
		}
		if got.ID != e.ID || got.Timestamp != e.Timestamp || got.Message != e.Message ||
			got.HasMessage != e.HasMessage || !Equal(got.Fields, e.Fields) {
			t.Errorf("event %d: got %+v, want %+v", i, got, e)
		}
		if !bytes.Equal(rest, []byte{0xAA}) {
			t.Errorf("event %d: rest = %x", i, rest)
		}
	}
}

// TestDecodeDoesNotAlias checks that decoded strings survive reuse of the
// source buffer (the WAL reader reuses its buffers).
func TestDecodeDoesNotAlias(t *testing.T) {
	e := Event{ID: "id", Message: "msg", HasMessage: true, Fields: obj("k", str("value"))}
	enc := AppendEvent(nil, e)
	got, _, err := DecodeEvent(enc)
	if err != nil {
		t.Fatal(err)
	}
	for i := range enc {
		enc[i] = 0
	}
	if got.ID != "id" || got.Message != "msg" || got.Fields.Get("k").Str != "value" {
		t.Errorf("decoded event changed with its source: %+v", got)
	}
}

func TestDecodeCorrupt(t *testing.T) {
	valid := AppendValue(nil, obj("a", arr(num(1), str("xyz"), flt(2)), "b", obj("c", BoolValue(true))))
	// Every strict prefix of a valid encoding is truncated.
	for n := range len(valid) {
		if _, _, err := DecodeValue(valid[:n]); !errors.Is(err, ErrCorrupt) {
			t.Errorf("prefix %d: err = %v, want ErrCorrupt", n, err)
		}
	}
	deep := bytes.Repeat([]byte{tagArray, 1}, MaxDepth+1)
	deep = append(deep, tagNull)
	tests := []struct {
		name string
		in   []byte
		msg  string
	}{
		{"unknown tag", []byte{0x08}, "unknown value tag"},
		{"bad int varint", []byte{tagInt, 0x80, 0x80}, "bad int varint"},
		{"overlong uvarint", append([]byte{tagString}, bytes.Repeat([]byte{0xff}, 11)...), "bad string length"},
		{"string past end", []byte{tagString, 5, 'a'}, "exceeds remaining"},
		{"string over max", append([]byte{tagString}, 0x81, 0x80, 0x80, 0x80, 0x08), "exceeds maximum"},
		{"array count past end", []byte{tagArray, 3, tagNull, tagNull}, "exceeds what the remaining"},
		{"object count past end", []byte{tagObject, 2, 0, tagNull}, "exceeds what the remaining"},
		{"huge count", []byte{tagArray, 0xff, 0xff, 0xff, 0xff, 0x0f}, "exceeds maximum"},
		{"too deep", deep, "nesting deeper"},
		{"empty", nil, "truncated"},
	}
	for _, tc := range tests {
		_, _, err := DecodeValue(tc.in)
		if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s: err = %v, want ErrCorrupt with %q", tc.name, err, tc.msg)
		}
	}

	ev := AppendEvent(nil, Event{ID: "a", HasMessage: true, Message: "m", Fields: obj()})
	for n := range len(ev) {
		if _, _, err := DecodeEvent(ev[:n]); !errors.Is(err, ErrCorrupt) {
			t.Errorf("event prefix %d: err = %v, want ErrCorrupt", n, err)
		}
	}
	badVersion := append([]byte{0x02}, ev[1:]...)
	if _, _, err := DecodeEvent(badVersion); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "version 2") {
		t.Errorf("bad version: %v", err)
	}
	badFlags := bytes.Clone(ev)
	badFlags[4] = 0x03 // version, idlen, 'a', ts(0) → flags at index 4
	if _, _, err := DecodeEvent(badFlags); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "flags") {
		t.Errorf("bad flags: %v", err)
	}
}

func FuzzDecodeValue(f *testing.F) {
	for _, v := range codecSamples() {
		if enc := AppendValue(nil, v); len(enc) < 4096 {
			f.Add(enc)
		}
	}
	f.Add([]byte{tagArray, 0xff, 0xff, 0xff, 0xff, 0x0f})
	f.Fuzz(func(t *testing.T, data []byte) {
		v, rest, err := DecodeValue(data)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error %v does not wrap ErrCorrupt", err)
			}
			return
		}
		if len(rest) > len(data) {
			t.Fatal("rest longer than input")
		}
		again, rest2, err := DecodeValue(AppendValue(nil, v))
		if err != nil || len(rest2) != 0 || !Equal(v, again) {
			t.Fatalf("re-encode round trip failed: %v", err)
		}
	})
}

// TestEventDecoder: a reused EventDecoder decodes what DecodeEvent
// decodes, aliasing its input, and allocates nothing once warm.
func TestEventDecoder(t *testing.T) {
	events := []Event{
		{ID: "2f1c8e4a", Timestamp: 1752148805123456, Fields: obj("metadata", obj("a", num(1), "b", arr(str("x"), obj("c", flt(0.5)))))},
		{},
		{ID: "x", Timestamp: -1, Message: "m", HasMessage: true, Fields: obj("p", str("q"))},
	}
	var enc []byte
	for _, e := range events {
		enc = AppendEvent(enc, e)
	}
	var d EventDecoder
	rest := enc
	for i, e := range events {
		got, r, err := d.Decode(rest)
		if err != nil {
			t.Fatalf("event %d: %v", i, err)
		}
		if got.ID != e.ID || got.Timestamp != e.Timestamp || got.Message != e.Message ||
			got.HasMessage != e.HasMessage || !Equal(got.Fields, e.Fields) {
			t.Errorf("event %d: got %+v, want %+v", i, got, e)
		}
		rest = r
	}
	if len(rest) != 0 {
		t.Errorf("%d bytes left", len(rest))
	}
	// Strings alias the input.
	got, _, _ := d.Decode(enc)
	enc[2] = 'X' // version, id length, then the id's first byte
	if got.ID[0] != 'X' {
		t.Errorf("decoded id %q does not alias its input", got.ID)
	}
	if allocs := testing.AllocsPerRun(10, func() { d.Decode(enc) }); allocs > 0 {
		t.Errorf("warm Decode allocated %.0f times", allocs)
	}
	if _, _, err := d.Decode(enc[:len(enc)/3]); !errors.Is(err, ErrCorrupt) {
		t.Errorf("truncated input: %v, want ErrCorrupt", err)
	}
}

func FuzzDecodeEvent(f *testing.F) {
	f.Add(AppendEvent(nil, Event{ID: "id", Timestamp: 1752148805123456, Message: "m", HasMessage: true, Fields: obj("a", arr(num(1)))}))
	f.Add(AppendEvent(nil, Event{}))
	var d EventDecoder
	f.Fuzz(func(t *testing.T, data []byte) {
		e, _, err := DecodeEvent(data)
		re, rrest, rerr := d.Decode(data)
		if (err == nil) != (rerr == nil) {
			t.Fatalf("DecodeEvent error %v, EventDecoder error %v", err, rerr)
		}
		if err != nil {
			if !errors.Is(err, ErrCorrupt) || !errors.Is(rerr, ErrCorrupt) {
				t.Fatalf("errors %v, %v do not wrap ErrCorrupt", err, rerr)
			}
			return
		}
		if re.ID != e.ID || re.Timestamp != e.Timestamp || re.Message != e.Message ||
			re.HasMessage != e.HasMessage || !Equal(re.Fields, e.Fields) || len(rrest) > len(data) {
			t.Fatal("EventDecoder and DecodeEvent disagree")
		}
		again, rest, err := DecodeEvent(AppendEvent(nil, e))
		if err != nil || len(rest) != 0 || again.ID != e.ID || again.Timestamp != e.Timestamp ||
			again.Message != e.Message || again.HasMessage != e.HasMessage || !Equal(again.Fields, e.Fields) {
			t.Fatalf("re-encode round trip failed: %v", err)
		}
	})
}
