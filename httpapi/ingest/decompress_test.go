package ingest

import (
	"bytes"
	"errors"
	"runtime"
	"strings"
	"testing"

	"github.com/klauspost/compress/flate"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zlib"
	"github.com/klauspost/compress/zstd"
)

func gzipBytes(t testing.TB, b []byte) []byte {
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	w.Write(b)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func zlibBytes(t testing.TB, b []byte) []byte {
	var buf bytes.Buffer
	w := zlib.NewWriter(&buf)
	w.Write(b)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func flateBytes(t testing.TB, b []byte) []byte {
	var buf bytes.Buffer
	w, _ := flate.NewWriter(&buf, flate.BestCompression)
	w.Write(b)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func zstdBytes(t testing.TB, b []byte) []byte {
	enc, err := zstd.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer enc.Close()
	return enc.EncodeAll(b, nil)
}

// zstdStream compresses without declaring the content size in the frame
// header, so the decoder only learns the size by decoding.
func zstdStream(t testing.TB, b []byte) []byte {
	var buf bytes.Buffer
	enc, err := zstd.NewWriter(&buf)
	if err != nil {
		t.Fatal(err)
	}
	enc.Write(b)
	if err := enc.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestDecodeCompressedBodies(t *testing.T) {
	body := []byte(`[{"message":"compressed","metadata":{"n":1}},{"message":"again"}]`)
	const want = `[{"message":"compressed","metadata":{"n":1}},{"message":"again"}]`
	d := NewDecoder()
	for _, tc := range []struct {
		encoding string
		body     []byte
	}{
		{"", body},
		{"identity", body},
		{"gzip", gzipBytes(t, body)},
		{"GZIP", gzipBytes(t, body)},
		{"x-gzip", gzipBytes(t, body)},
		{"gzip", append(gzipBytes(t, body[:20]), gzipBytes(t, body[20:])...)}, // multi-member
		{"deflate", zlibBytes(t, body)},
		{"deflate", flateBytes(t, body)}, // raw deflate, as some clients send
		{"zstd", zstdBytes(t, body)},
		{" zstd ", zstdStream(t, body)},
	} {
		for range 2 { // the second round runs on reused readers
			res, err := d.Decode(Request{Route: RouteCreate, ContentType: "application/json", ContentEncoding: tc.encoding, Body: tc.body})
			if err != nil {
				t.Fatalf("%q: %v", tc.encoding, err)
			}
			if got := eventsJSON(res.Events); got != want {
				t.Fatalf("%q: got %s", tc.encoding, got)
			}
		}
	}
}

func TestDecompressionLimits(t *testing.T) {
	bomb := make([]byte, DefaultMaxBodyBytes+1<<20) // zeros: compresses to a few KiB
	tests := []struct {
		name     string
		encoding string
		body     []byte
		max      int
		err      error
		status   int
	}{
		{"gzip bomb", "gzip", gzipBytes(t, bomb), 0, ErrTooLarge, 413},
		{"deflate bomb", "deflate", zlibBytes(t, bomb), 0, ErrTooLarge, 413},
		{"raw deflate bomb", "deflate", flateBytes(t, bomb), 0, ErrTooLarge, 413},
		{"zstd bomb, size declared", "zstd", zstdBytes(t, bomb), 0, ErrTooLarge, 413},
		{"zstd bomb, size not declared", "zstd", zstdStream(t, bomb), 0, ErrTooLarge, 413},
		{"identity over the limit", "", bytes.Repeat([]byte(" "), 101), 100, ErrTooLarge, 413},
		{"gzip one byte over", "gzip", gzipBytes(t, bytes.Repeat([]byte(" "), 101)), 100, ErrTooLarge, 413},
		{"zstd one byte over", "zstd", zstdBytes(t, bytes.Repeat([]byte(" "), 101)), 100, ErrTooLarge, 413},
		{"brotli unsupported", "br", []byte("x"), 0, ErrUnsupportedEncoding, 400},
		{"compress unsupported", "compress", []byte("x"), 0, ErrUnsupportedEncoding, 400},
		{"chained encodings unsupported", "gzip, zstd", []byte("x"), 0, ErrUnsupportedEncoding, 400},
		{"corrupt gzip", "gzip", []byte("\x1f\x8b\x08\x00garbage"), 0, ErrMalformed, 400},
		{"not gzip at all", "gzip", []byte(`{"a":1}`), 0, ErrMalformed, 400},
		{"truncated gzip", "gzip", gzipBytes(t, []byte(strings.Repeat("abc", 1000)))[:30], 0, ErrMalformed, 400},
		{"corrupt zstd", "zstd", []byte("\x28\xb5\x2f\xfdgarbage"), 0, ErrMalformed, 400},
		{"corrupt deflate", "deflate", []byte{0xff, 0xff, 0xff}, 0, ErrMalformed, 400},
	}
	for _, tc := range tests {
		d := &Decoder{MaxBodyBytes: tc.max}
		_, err := d.Decode(Request{Route: RouteCreate, ContentType: "application/json", ContentEncoding: tc.encoding, Body: tc.body})
		if !errors.Is(err, tc.err) || StatusCode(err) != tc.status {
			t.Errorf("%s: err = %v (status %d), want %v (%d)", tc.name, err, StatusCode(err), tc.err, tc.status)
		}
	}
	// Exactly at the limit is fine.
	at := bytes.Repeat([]byte(" "), 98)
	at = append(append([]byte("{"), at...), '}')
	for _, enc := range []string{"", "gzip", "zstd"} {
		body := at
		switch enc {
		case "gzip":
			body = gzipBytes(t, at)
		case "zstd":
			body = zstdBytes(t, at)
		}
		d := &Decoder{MaxBodyBytes: 100}
		if _, err := d.Decode(Request{Route: RouteCreate, ContentEncoding: enc, Body: body}); err != nil {
			t.Errorf("%q at the limit: %v", enc, err)
		}
	}
}

// TestGzipBombMemory checks that refusing a bomb does not allocate its
// decompressed size: memory stays near the limit, not the 64 MiB it claims.
func TestGzipBombMemory(t *testing.T) {
	bomb := gzipBytes(t, make([]byte, 64<<20))
	d := NewDecoder()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	const runs = 3
	for range runs {
		if _, err := d.Decode(Request{Route: RouteCreate, ContentEncoding: "gzip", Body: bomb}); !errors.Is(err, ErrTooLarge) {
			t.Fatal(err)
		}
	}
	runtime.ReadMemStats(&after)
	if perRun := (after.TotalAlloc - before.TotalAlloc) / runs; perRun > 2*DefaultMaxBodyBytes {
		t.Errorf("refusing a 64 MiB gzip bomb allocated %d bytes per request", perRun)
	}
}

// TestDecompressCharges: a compressed body's decompressed bytes are
// charged through Request.Charge as they are produced, in every encoding
// (Loki's snappy too): at least the decompressed size, and no more than
// the buffers this request allocated for it; an identity body costs
// nothing more than itself.
func TestDecompressCharges(t *testing.T) {
	plain := []byte(`[` + strings.Repeat(`{"message":"charged as it inflates, charged as it inflates, charged as it inflates"},`, 20_000) + `{}]`) // 2 MB
	for _, tc := range []struct {
		encoding string
		body     []byte
	}{
		{"gzip", gzipBytes(t, plain)},
		{"deflate", zlibBytes(t, plain)},
		{"deflate", flateBytes(t, plain)},
		{"zstd", zstdBytes(t, plain)},
		{"zstd", zstdStream(t, plain)},
		{"", plain},
	} {
		d := NewDecoder()
		for round := range 2 { // the second round reuses the output buffer
			var charged int64
			res, err := d.Decode(Request{Route: RouteCreate, ContentType: "application/json", ContentEncoding: tc.encoding, Body: tc.body,
				Charge: func(n int64) bool { charged += n; return true }})
			if err != nil || len(res.Events) != 20_001 {
				t.Fatalf("%q: %d events, %v", tc.encoding, len(res.Events), err)
			}
			switch {
			case tc.encoding == "" && charged != 0:
				t.Errorf("identity body: %d bytes charged", charged)
			case tc.encoding != "" && (charged < int64(len(plain)) || charged > 2*int64(len(plain))+8<<20):
				t.Errorf("%q, round %d: %d bytes charged for %d decompressed", tc.encoding, round, charged, len(plain))
			}
		}
	}
	// Loki's snappy body: its decoded size.
	lokiBody := s2.EncodeSnappy(nil, lokiPushProto(map[string][]lokiEntry{`{job="a"}`: {{secs: 1752148805, line: strings.Repeat("x", 1<<20)}}}, `{job="a"}`))
	var charged int64
	if _, err := NewDecoder().DecodeLokiPush(Request{ContentType: "application/x-protobuf", Body: lokiBody, Charge: func(n int64) bool { charged += n; return true }}); err != nil || charged < 1<<20 {
		t.Fatalf("loki snappy: %d bytes charged, %v", charged, err)
	}
}

// TestDecompressChargeRefused: when Request.Charge refuses, decompression
// stops there with ErrBudget (429), having produced little more than what
// was granted.
func TestDecompressChargeRefused(t *testing.T) {
	plain := make([]byte, 10<<20) // zeros: a few KiB compressed
	for _, tc := range []struct {
		encoding string
		body     []byte
	}{{"gzip", gzipBytes(t, plain)}, {"deflate", zlibBytes(t, plain)}, {"zstd", zstdBytes(t, plain)}, {"zstd", zstdStream(t, plain)}} {
		d := NewDecoder()
		var granted int64
		var ms [2]runtime.MemStats
		runtime.ReadMemStats(&ms[0])
		_, err := d.Decode(Request{Route: RouteCreate, ContentType: "application/json", ContentEncoding: tc.encoding, Body: tc.body,
			Charge: func(n int64) bool {
				if granted+n > 2<<20 {
					return false
				}
				granted += n
				return true
			}})
		runtime.ReadMemStats(&ms[1])
		if !errors.Is(err, ErrBudget) || StatusCode(err) != 429 {
			t.Fatalf("%q: %v, want ErrBudget (429)", tc.encoding, err)
		}
		if alloc := ms[1].TotalAlloc - ms[0].TotalAlloc; alloc > 4<<20 {
			t.Errorf("%q: refused past 2 MiB, yet %d bytes allocated", tc.encoding, alloc)
		}
	}
}
