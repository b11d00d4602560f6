package segment

import (
	"bytes"
	"testing"

	"github.com/klauspost/compress/zstd"
)

// TestFrameSizeLies: real frames, however well they compress, never
// claim more than their bytes can hold; a header whose content size was
// raised is caught before anything is allocated for it.
func TestFrameSizeLies(t *testing.T) {
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedBestCompression))
	if err != nil {
		t.Fatal(err)
	}
	for _, plain := range [][]byte{nil, []byte("x"), bytes.Repeat([]byte{0}, 8<<20), bytes.Repeat([]byte("abc"), 100000)} {
		frame := enc.EncodeAll(plain, nil)
		if claimed, lies := frameSizeLies(frame); lies {
			t.Fatalf("a real frame of %d bytes (%d plain) said to lie (claims %d)", len(frame), len(plain), claimed)
		}
	}
	// A frame of 100,000 zero bytes (a 4-byte content size field), its
	// content size raised to 145 MB.
	frame := enc.EncodeAll(make([]byte, 100000), nil)
	var h zstd.Header
	if err := h.Decode(frame); err != nil || !h.HasFCS {
		t.Fatalf("header %+v, %v", h, err)
	}
	forged := append([]byte(nil), frame...)
	fcsAt := 5 + map[bool]int{true: 0, false: 1}[h.SingleSegment]
	if fd := forged[4] >> 6; fd != 2 {
		t.Fatalf("the encoder wrote a content size field of flag %d, not 4 bytes", fd)
	}
	forged[fcsAt], forged[fcsAt+1], forged[fcsAt+2], forged[fcsAt+3] = 0x10, 0x00, 0xa5, 0x08
	if claimed, lies := frameSizeLies(forged); !lies || claimed < 1<<27 {
		t.Fatalf("forged frame: claims %d, lies %v", claimed, lies)
	}
}
