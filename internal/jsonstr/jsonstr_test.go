package jsonstr

import (
	"encoding/json"
	"strings"
	"testing"
)

// Every string, valid UTF-8 or not, is written as JSON that decodes to the
// same value encoding/json's own encoding decodes to (invalid bytes become
// U+FFFD in both), and the text carries no raw control character or
// U+2028/U+2029.
func TestAppendDecodesAsEncodingJSON(t *testing.T) {
	cases := []string{"", "plain", `quote " and \ backslash`, "tab\tnl\ncr\rbs\bff\f", "\x00\x01\x1f\x7f",
		"héllo wörld ✓ 😀", "bad \xff\xfe byte", "cut \xe2\x82", "line\u2028para\u2029end", "</script>&"}
	for c := 0; c < 256; c++ {
		cases = append(cases, "a"+string(rune(c))+"b", "a"+string([]byte{byte(c)})+"b")
	}
	for _, s := range cases {
		got := Append(nil, s)
		var dec string
		if err := json.Unmarshal(got, &dec); err != nil {
			t.Fatalf("%q: output %s is not JSON: %v", s, got, err)
		}
		want, _ := json.Marshal(s)
		var wantDec string
		if err := json.Unmarshal(want, &wantDec); err != nil {
			t.Fatal(err)
		}
		if dec != wantDec {
			t.Errorf("%q: decodes to %q, encoding/json's to %q", s, dec, wantDec)
		}
		for _, b := range got {
			if b < 0x20 {
				t.Errorf("%q: raw control byte %#x in %s", s, b, got)
			}
		}
		if strings.ContainsAny(string(got), "\u2028\u2029") {
			t.Errorf("%q: raw U+2028/U+2029 in %s", s, got)
		}
	}
	if got := string(Append([]byte("x="), "a\"b")); got != `x="a\"b"` {
		t.Errorf("appends to dst: %s", got)
	}
}

func BenchmarkAppend(b *testing.B) {
	s := `172.18.0.1 - - [22/Nov/2026:11:35:26 +0000] "GET /rest/v1/subscriptions?select=*&id=eq.47 HTTP/1.1" 502 203 "-" "Dart/3.4 (dart:io)"`
	buf := make([]byte, 0, 256)
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		buf = Append(buf[:0], s)
	}
}
