package segment

import (
	"fmt"
	"math/rand/v2"
	"net/netip"
	"strings"
	"testing"

	"github.com/sediment/sediment/internal/vec"
	"github.com/sediment/sediment/internal/vfs"
)

// textCases are columns of every shape the binary text encodings meet,
// with the encoding each may get: values that fit get it when it stores
// them smaller than plain bytes (sure, for those marked must), the rest
// stay plain bytes; every value reads back byte for byte.
func textCases() []struct {
	name string
	enc  Encoding
	must bool
	vals func(i int, rng *rand.Rand) string
} {
	hex := func(rng *rand.Rand, n int, digits string) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = digits[rng.IntN(16)]
		}
		return string(b)
	}
	colos := []string{"SJC", "IAD", "FRA", "NRT", "GRU"}
	return []struct {
		name string
		enc  Encoding
		must bool
		vals func(i int, rng *rand.Rand) string
	}{
		{"cf-ray with colo", encHex, true, func(i int, rng *rand.Rand) string {
			return hex(rng, 16, hexDigits) + "-" + colos[rng.IntN(len(colos))]
		}},
		{"pure hex", encHex, false, func(i int, rng *rand.Rand) string { return hex(rng, 16, hexDigits) }},
		{"sha256", encHex, false, func(i int, rng *rand.Rand) string { return hex(rng, 64, hexDigits) }},
		{"upper hex", encHex, false, func(i int, rng *rand.Rand) string { return hex(rng, 20, hexDigitsUpper) + "Z" }},
		{"odd hex length", encHex, false, func(i int, rng *rand.Rand) string { return hex(rng, 17, hexDigits) }},
		{"hex of varying length", encHex, false, func(i int, rng *rand.Rand) string { return hex(rng, 10+rng.IntN(20), hexDigits) }},
		{"hex then hex-looking suffix", encHex, false, func(i int, rng *rand.Rand) string {
			return hex(rng, 12, hexDigits) + strings.Repeat("a", rng.IntN(3))
		}},
		{"mixed case hex", encBytes, true, func(i int, rng *rand.Rand) string {
			if i%2 == 0 {
				return hex(rng, 16, hexDigits)
			}
			return hex(rng, 16, hexDigitsUpper)
		}},
		{"decimal digits", encBytes, true, func(i int, rng *rand.Rand) string { return fmt.Sprintf("%012d", rng.Int64N(1e12)) }},
		{"short hex", encBytes, true, func(i int, rng *rand.Rand) string { return hex(rng, 6, hexDigits) + "-x" }},
		{"one value not hex", encBytes, true, func(i int, rng *rand.Rand) string {
			if i == 77 {
				return "not-hex"
			}
			return hex(rng, 16, hexDigits)
		}},
		{"ipv4", encIP, true, func(i int, rng *rand.Rand) string {
			return netip.AddrFrom4([4]byte{byte(rng.IntN(256)), byte(rng.IntN(256)), byte(rng.IntN(256)), byte(rng.IntN(256))}).String()
		}},
		{"ipv4 and ipv6", encIP, true, func(i int, rng *rand.Rand) string {
			switch i % 4 {
			case 0:
				return "2001:db8::" + fmt.Sprintf("%x", rng.IntN(65536))
			case 1:
				var b [16]byte
				for k := range b {
					b[k] = byte(rng.IntN(256))
				}
				return netip.AddrFrom16(b).String()
			case 2:
				return "::ffff:10.0.0." + fmt.Sprint(rng.IntN(256))
			}
			return fmt.Sprintf("10.%d.%d.%d", rng.IntN(256), rng.IntN(256), rng.IntN(256))
		}},
		{"ipv4 with leading zero", encBytes, true, func(i int, rng *rand.Rand) string {
			if i == 5 {
				return "10.0.0.01"
			}
			return fmt.Sprintf("10.%d.%d.%d", rng.IntN(256), rng.IntN(256), rng.IntN(256))
		}},
		{"upper-case ipv6", encBytes, true, func(i int, rng *rand.Rand) string { return fmt.Sprintf("2001:DB8::%X", rng.IntN(65536)+10) }},
		{"ipv6 with zone", encBytes, true, func(i int, rng *rand.Rand) string { return fmt.Sprintf("fe80::%x%%eth0", rng.IntN(65536)+1) }},
		{"uuid", encUUID, true, func(i int, rng *rand.Rand) string {
			return fmt.Sprintf("%08x-%04x-4%03x-8%03x-%012x", rng.Uint32(), rng.IntN(1<<16), rng.IntN(1<<12), rng.IntN(1<<12), rng.Int64N(1<<48))
		}},
		{"upper-case uuid", encHex, false, func(i int, rng *rand.Rand) string {
			return strings.ToUpper(fmt.Sprintf("%08x-%04x-4%03x-8%03x-%012x", rng.Uint32(), rng.IntN(1<<16), rng.IntN(1<<12), rng.IntN(1<<12), rng.Int64N(1<<48))) + ""
		}},
	}
}

func TestTextEncodingsRoundTrip(t *testing.T) {
	for _, tc := range textCases() {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, 2))
			const n = 3000
			col := testColumn{desc: ColumnDesc{Path: "v", Type: TypeString}}
			ts := testColumn{desc: ColumnDesc{Path: "timestamp", Type: TypeTimestamp}}
			for i := 0; i < n; i++ {
				ts.vals = append(ts.vals, int64(1_700_000_000_000_000+i))
				if i%7 == 3 {
					col.vals = append(col.vals, nil)
				} else {
					col.vals = append(col.vals, tc.vals(i, rng))
				}
			}
			for _, v := range []uint8{FormatV1, FormatV2} {
				fs := vfs.NewMemFS()
				fs.MkdirAll("/d")
				writeSegment(t, fs, "/d/s.seg", []testColumn{ts, col}, 1000, &WriterOptions{PageBytes: 2048, FormatVersion: v})
				r := openSegment(t, fs, "/d/s.seg")
				want := tc.enc
				if v == FormatV1 && want != encUUID {
					want = encBytes
				}
				if got := r.testChunk(0, 1).enc; got != want && (tc.must || got != encBytes) {
					t.Fatalf("version %d: encoding %d, want %d", v, got, want)
				}
				checkAllValues(t, r, []testColumn{ts, col})
				if err := r.Check(); err != nil {
					t.Fatal(err)
				}
				r.Close()
			}
		})
	}
}

// TestTextEncodingsFromCodes: values given as dictionary codes that do not
// pay as a dictionary get the binary forms too.
func TestTextEncodingsFromCodes(t *testing.T) {
	const n = 2000
	d := &ColumnData{Dict: make([]string, n), Codes: make([]uint32, n)}
	ts := &ColumnData{Ints: make([]int64, n)}
	for i := 0; i < n; i++ {
		d.Dict[i] = fmt.Sprintf("%016x-SJC", uint64(i)*0x9e3779b97f4a7c15)
		d.Codes[i] = uint32(n - 1 - i)
		ts.Ints[i] = int64(i)
	}
	fs := vfs.NewMemFS()
	fs.MkdirAll("/d")
	f, _ := fs.Create("/d/s.seg")
	w, err := NewWriter(f, []ColumnDesc{{Path: "timestamp", Type: TypeTimestamp}, {Path: "ray", Type: TypeString}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WriteBlock(n, []*ColumnData{ts, d}); err != nil {
		t.Fatal(err)
	}
	if err := w.Finish(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	r := openSegment(t, fs, "/d/s.seg")
	defer r.Close()
	if got := r.testChunk(0, 1).enc; got != encHex {
		t.Fatalf("encoding %d, want encHex", got)
	}
	var v vec.Vector
	if err := r.ReadColumn(0, 1, 0, n, &v); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		if got, want := v.StringAt(i), d.Dict[d.Codes[i]]; got != want {
			t.Fatalf("row %d: %q, want %q", i, got, want)
		}
	}
}

// FuzzTextValues: the encHex and encIP value decoders on any bytes never
// panic, and values the encoders wrote decode to themselves (UUIDs too).
func FuzzTextValues(f *testing.F) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, tc := range textCases() {
		var vals []string
		for i := 0; i < 5; i++ {
			vals = append(vals, tc.vals(i, rng))
		}
		f.Add(strings.Join(vals, "\n"))
	}
	f.Add("\x00\x01\x02")
	f.Fuzz(func(t *testing.T, in string) {
		vals := strings.Split(in, "\n")
		shape := newTextShape()
		for _, s := range vals {
			shape.add(s)
		}
		value := func(k int) string { return vals[k] }
		enc, w := shape.choice()
		var page []byte
		switch enc {
		case encUUID:
			for k, s := range vals {
				page = appendUUIDBytes(page[:0], s)
				if got := string(appendUUIDText(nil, page)); got != s {
					t.Fatalf("encUUID value %d: %q, want %q", k, got, s)
				}
			}
		case encHex:
			page = appendHexValues(nil, w, len(vals), value)
			hv, err := parseHex(page, w, len(vals), nil)
			if err != nil {
				t.Fatalf("encHex page of %q: %v", vals, err)
			}
			for k, s := range vals {
				if got := string(hv.appendValue(nil, k)); got != s {
					t.Fatalf("encHex value %d: %q, want %q", k, got, s)
				}
			}
		case encIP:
			page = appendIPValues(nil, len(vals), value)
			iv, err := parseIP(page, len(vals), nil)
			if err != nil {
				t.Fatalf("encIP page of %q: %v", vals, err)
			}
			for k, s := range vals {
				if got := string(iv.appendValue(nil, k)); got != s {
					t.Fatalf("encIP value %d: %q, want %q", k, got, s)
				}
			}
		}
		// Any bytes as a page of any count: errors, never a panic.
		raw := []byte(in)
		for _, n := range []int{0, 1, 3, len(raw)} {
			if hv, err := parseHex(raw, byte(len(raw)%40), n, nil); err == nil {
				for k := 0; k < n; k++ {
					hv.appendValue(nil, k)
				}
			}
			if iv, err := parseIP(raw, n, nil); err == nil {
				for k := 0; k < n; k++ {
					iv.appendValue(nil, k)
				}
			}
			if p, err := parseDictPage(raw, n); err == nil {
				for k := 0; k < n; k++ {
					p.entry(k)
				}
			}
			var d dictData
			d.appendPage(raw, TypeString, n)
			d.appendPage(raw, TypeInt64, n)
		}
	})
}

// TestAppendIPv4: an encIP page's IPv4 addresses read back as netip
// renders them, for every octet value in every position.
func TestAppendIPv4(t *testing.T) {
	for b := 0; b < 256; b++ {
		for pos := 0; pos < 4; pos++ {
			a := [4]byte{1, 22, 133, 4}
			a[pos] = byte(b)
			want := netip.AddrFrom4(a).String()
			if got := string(appendIPv4([]byte("x"), a)); got != "x"+want {
				t.Fatalf("%v: got %q, want %q", a, got, "x"+want)
			}
		}
	}
}

// TestHexRuns: hexRuns measures the leading lower-case and upper-case
// hex digit runs of any string (capped at 2*maxHexBytes) and whether
// each holds a letter, as a plain reading of the definition does.
func TestHexRuns(t *testing.T) {
	ref := func(s string) (lo, up int, loLetter, upLetter bool) {
		lim := min(len(s), 2*maxHexBytes)
		for lo < lim && strings.IndexByte("0123456789abcdef", s[lo]) >= 0 {
			loLetter = loLetter || s[lo] >= 'a'
			lo++
		}
		for up < lim && strings.IndexByte("0123456789ABCDEF", s[up]) >= 0 {
			upLetter = upLetter || s[up] >= 'A'
			up++
		}
		return lo, up, loLetter, upLetter
	}
	cases := []string{"", "8f4c2d1e9a7b6c5d-SJC", "8F4C2D1E9A7B6C5D-SJC", "0123456789", "abcdefABCDEF",
		"ABCdef", "12ab34CD", "ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff", "g123", "-"}
	rng := rand.New(rand.NewPCG(7, 7))
	const alphabet = "0189afAFgz-\x00\xff"
	for i := 0; i < 2000; i++ {
		b := make([]byte, rng.IntN(2*maxHexBytes+8))
		for j := range b {
			b[j] = alphabet[rng.IntN(len(alphabet))]
		}
		cases = append(cases, string(b))
	}
	for _, s := range cases {
		lo, up, ll, ul := hexRuns(s)
		rlo, rup, rll, rul := ref(s)
		if lo != rlo || up != rup || ll != rll || ul != rul {
			t.Fatalf("hexRuns(%q) = %d %d %v %v, want %d %d %v %v", s, lo, up, ll, ul, rlo, rup, rll, rul)
		}
	}
}

// TestHexPageWithoutSuffixes: a page of ray ids that are hex digits alone
// (every suffix length 0, no suffix bytes) reads back each value; a length
// that is not 0 where no suffix bytes follow is refused.
func TestHexPageWithoutSuffixes(t *testing.T) {
	vals := []string{"bd9c74f396fd8683", "0123456789abcdef", "ffffffffffffffff", "0000000000000000", "8e1f0a2b3c4d5e6f",
		"a1b2c3d4e5f60718", "1122334455667788", "99aabbccddeeff00", "abcdefabcdefabcd"}
	shape := newTextShape()
	for _, s := range vals {
		shape.add(s)
	}
	enc, w := shape.choice()
	if enc != encHex {
		t.Fatalf("encoding %d, want encHex", enc)
	}
	page := appendHexValues(nil, w, len(vals), func(k int) string { return vals[k] })
	hv, err := parseHex(page, w, len(vals), nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, s := range vals {
		if got := string(hv.appendValue([]byte("x"), k)); got != "x"+s {
			t.Fatalf("value %d: %q, want %q", k, got, "x"+s)
		}
	}
	bad := append([]byte(nil), page...)
	bad[len(bad)-1] = 1 // the last value's suffix length, with no byte for it
	if _, err := parseHex(bad, w, len(vals), nil); err == nil {
		t.Fatal("a suffix length without its bytes was accepted")
	}
}
