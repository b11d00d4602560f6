package segment

import "github.com/klauspost/compress/zstd"

// zstdBlockMax is the most one zstd block decompresses to, and
// zstdMinBlockBytes the fewest bytes a block that decompresses to anything
// takes in a frame (a 3-byte block header and one byte of RLE content).
const (
	zstdBlockMax      = 128 << 10
	zstdMinBlockBytes = 4
)

// frameSizeLies reports whether a zstd frame of these bytes claims a
// content size it cannot hold. The decoder allocates the claimed size
// before it decodes a byte, so a damaged or hostile header in a unit of a
// few hundred bytes would otherwise cost up to maxUnitSize (found by
// FuzzSegmentOpen: a 287-byte page claiming 145 MB). A frame of n bytes
// holds at most n/4 blocks of at most 128 KiB each.
func frameSizeLies(frame []byte) (claimed uint64, lies bool) {
	var h zstd.Header
	if h.Decode(frame) != nil || !h.HasFCS {
		return 0, false // the decoder refuses it, or grows as it decodes
	}
	limit := (uint64(len(frame))/zstdMinBlockBytes + 1) * zstdBlockMax
	return h.FrameContentSize, h.FrameContentSize > limit
}
