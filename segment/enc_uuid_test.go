package segment

import (
	"bytes"
	"encoding/hex"
	"math/rand/v2"
	"strings"
	"testing"
)

// uuidByDefinition is isCanonicalUUID written from the definition: 36
// bytes, dashes at 8, 13, 18 and 23, lower-case hex digits elsewhere.
func uuidByDefinition(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if i == 8 || i == 13 || i == 18 || i == 23 {
			if s[i] != '-' {
				return false
			}
		} else if !strings.ContainsRune(hexDigits, rune(s[i])) {
			return false
		}
	}
	return true
}

// TestCanonicalUUID checks the classification and the 16 bytes of UUIDs
// against the definition: every byte value at every position of a valid
// UUID, and UUIDs of random digits.
func TestCanonicalUUID(t *testing.T) {
	const valid = "0f8c2d1e-9a7b-4c5d-8e3f-a1b2c3d4e5f6"
	check := func(s string) {
		t.Helper()
		want := uuidByDefinition(s)
		if got := isCanonicalUUID(s); got != want {
			t.Fatalf("isCanonicalUUID(%q) = %v, want %v", s, got, want)
		}
		if !want {
			return
		}
		raw, err := hex.DecodeString(strings.ReplaceAll(s, "-", ""))
		if err != nil {
			t.Fatal(err)
		}
		if got := appendUUIDBytes([]byte("x"), s); !bytes.Equal(got, append([]byte("x"), raw...)) {
			t.Fatalf("appendUUIDBytes(%q) = %x, want x%x", s, got, raw)
		}
		if back := string(appendUUIDText(nil, raw)); back != s {
			t.Fatalf("appendUUIDText of %q's bytes = %q", s, back)
		}
	}
	for _, s := range []string{"", valid, valid[:35], valid + "0", strings.ToUpper(valid),
		strings.ReplaceAll(valid, "-", "0") + "0000", "00000000-0000-0000-0000-000000000000",
		"ffffffff-ffff-ffff-ffff-ffffffffffff", "00000000_0000-0000-0000-000000000000"} {
		check(s)
	}
	for at := range len(valid) {
		for c := range 256 {
			b := []byte(valid)
			b[at] = byte(c)
			check(string(b))
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 1000 {
		var raw [16]byte
		for i := range raw {
			raw[i] = byte(rng.Uint32())
		}
		check(string(appendUUIDText(nil, raw[:])))
	}
}

// BenchmarkUUIDEncode classifies and encodes 4096 random UUIDs, the work
// a writer does on every value of a column of ids (textShape.add, then
// appendUUIDValues).
func BenchmarkUUIDEncode(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 4))
	ids := make([]string, 4096)
	for i := range ids {
		var raw [16]byte
		for k := range raw {
			raw[k] = byte(rng.Uint32())
		}
		ids[i] = string(appendUUIDText(nil, raw[:]))
	}
	var dst []byte
	b.ReportAllocs()
	for b.Loop() {
		dst = dst[:0]
		for _, s := range ids {
			if !isCanonicalUUID(s) {
				b.Fatal("not a UUID:", s)
			}
			dst = appendUUIDBytes(dst, s)
		}
	}
}
