package jsonstr

import (
	"encoding/json"
	"testing"
)

func TestAppendEscaped(t *testing.T) {
	for _, tc := range []struct {
		in     string
		out    string
		n      int
		badHex bool
	}{
		{`\n`, "\n", 2, false}, {`\/x`, "/", 2, false}, {`\u00e9`, "é", 6, false}, {`\ud83d\ude00`, "😀", 12, false},
		{`\ud83d`, "\ufffd", 6, false}, {`\ude00`, "\ufffd", 6, false}, {`\ud83d\u0041`, "\ufffd", 6, false},
		{`\x`, "", 0, false}, {`\`, "", 0, false}, {`\u12`, "", 0, true}, {`\u12g4`, "", 0, true},
	} {
		out, n, badHex := AppendEscaped(nil, tc.in, 0)
		if string(out) != tc.out || n != tc.n || badHex != tc.badHex {
			t.Errorf("%s: (%q, %d, %v), want (%q, %d, %v)", tc.in, out, n, badHex, tc.out, tc.n, tc.badHex)
		}
	}
}

// FuzzAppendEscaped: an escape sequence decodes as encoding/json decodes
// it, and whatever encoding/json reads as a string starting with an escape
// is one.
func FuzzAppendEscaped(f *testing.F) {
	for _, s := range []string{`\n`, `\u00e9`, `\ud83d\ude00`, `\ud83d`, `\x`, `\u12`, `\"abc`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if len(s) > 64 || len(s) == 0 || s[0] != '\\' {
			return
		}
		out, n, _ := AppendEscaped(nil, s, 0)
		if n < 0 || n > len(s) {
			t.Fatalf("%q: length %d", s, n)
		}
		if n > 0 {
			var want string
			if err := json.Unmarshal([]byte(`"`+s[:n]+`"`), &want); err != nil {
				t.Fatalf("%q: decoded %d bytes that encoding/json rejects: %v", s, n, err)
			}
			if string(out) != want {
				t.Fatalf("%q: %q, encoding/json says %q", s, out, want)
			}
		}
		var whole string
		if json.Unmarshal([]byte(`"`+s+`"`), &whole) == nil && n == 0 {
			t.Fatalf("%q: valid for encoding/json, rejected here", s)
		}
	})
}
