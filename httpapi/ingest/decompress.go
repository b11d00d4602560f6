package ingest

import (
	"bytes"
	"errors"
	"io"
	"strings"

	"github.com/klauspost/compress/flate"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zlib"
	"github.com/klauspost/compress/zstd"
)

// DefaultMaxBodyBytes is Logflare's request body limit, applied after
// decompression.
const DefaultMaxBodyBytes = 12_000_000

// decompressChargeStep is the most decompressed bytes produced between two
// calls of a Request's Charge: small enough that a spent budget stops a
// decompression early, large enough that charging costs nothing next to
// inflating.
const decompressChargeStep = 1 << 20

// decompressor undoes a Content-Encoding with reused readers. The zero value
// is ready to use; it is not safe for concurrent use.
type decompressor struct {
	src       bytes.Reader
	gzip      *gzip.Reader
	zlib      io.ReadCloser
	flate     io.ReadCloser
	zstd      *zstd.Decoder
	zstdLimit int
	buf       []byte // output, reused across calls
}

// decompress returns body decoded per encoding ("", identity, gzip, x-gzip,
// deflate, zstd; case-insensitive). Identity returns body itself. The output
// of the others lives in a buffer reused by the next call. More than limit
// output bytes fail with ErrTooLarge, without decoding further.
//
// charge, when not nil, is asked for the memory the output takes before it
// is held (see outputCharge); a refusal fails with ErrBudget.
func (d *decompressor) decompress(body []byte, encoding string, limit int, charge func(int64) bool) ([]byte, error) {
	encoding = strings.TrimSpace(encoding)
	oc := outputCharge{charge: charge}
	switch {
	case encoding == "" || strings.EqualFold(encoding, "identity"):
		if len(body) > limit {
			return nil, errorf(ErrTooLarge, "%d bytes exceed the limit of %d", len(body), limit)
		}
		return body, nil
	case strings.EqualFold(encoding, "gzip") || strings.EqualFold(encoding, "x-gzip"):
		d.src.Reset(body)
		if d.gzip == nil {
			d.gzip = new(gzip.Reader)
		}
		if err := d.gzip.Reset(&d.src); err != nil {
			return nil, wrap(ErrMalformed, err, "gzip")
		}
		return d.readAll(d.gzip, "gzip", limit, len(body), &oc)
	case strings.EqualFold(encoding, "deflate"):
		// HTTP "deflate" means zlib, but many clients send raw deflate;
		// accept both, deciding by the zlib header check bits.
		d.src.Reset(body)
		if isZlibHeader(body) {
			if d.zlib == nil {
				r, err := zlib.NewReader(&d.src)
				if err != nil {
					return nil, wrap(ErrMalformed, err, "deflate (zlib)")
				}
				d.zlib = r
			} else if err := d.zlib.(zlib.Resetter).Reset(&d.src, nil); err != nil {
				return nil, wrap(ErrMalformed, err, "deflate (zlib)")
			}
			return d.readAll(d.zlib, "deflate (zlib)", limit, len(body), &oc)
		}
		if d.flate == nil {
			d.flate = flate.NewReader(&d.src)
		} else if err := d.flate.(flate.Resetter).Reset(&d.src, nil); err != nil {
			return nil, wrap(ErrMalformed, err, "deflate")
		}
		return d.readAll(d.flate, "deflate", limit, len(body), &oc)
	case strings.EqualFold(encoding, "zstd"):
		return d.unzstd(body, limit, &oc)
	}
	return nil, errorf(ErrUnsupportedEncoding, "%q", encoding)
}

// outputCharge keeps a decompression's memory charged: at least the output
// produced so far (in steps of decompressChargeStep, asked for before they
// are produced) and every buffer allocated for it, asked for before it is
// allocated. A reused buffer costs nothing until it is filled: it is held
// by the decoder whether or not this request uses it.
type outputCharge struct {
	charge  func(int64) bool
	charged int // for the output
	other   int // for what else the decompressor holds (zstd's window)
}

// reserve makes sure total bytes are charged for the output; false when
// refused.
func (c *outputCharge) reserve(total int) bool {
	if c.charge == nil || total <= c.charged {
		return true
	}
	if !c.charge(int64(total - c.charged)) {
		return false
	}
	c.charged = total
	return true
}

// reserveOther charges n bytes the decompressor holds besides the output.
func (c *outputCharge) reserveOther(n int) bool {
	if c.charge == nil || n <= 0 {
		return true
	}
	if !c.charge(int64(n)) {
		return false
	}
	c.other += n
	return true
}

func (c *outputCharge) refused(what string) error {
	return errorf(ErrBudget, "%s body: no memory for more than %d decompressed bytes now", what, c.charged)
}

// isZlibHeader reports whether b starts with a valid zlib header: method 8
// (deflate), window ≤ 32 KiB, and the check bits.
func isZlibHeader(b []byte) bool {
	return len(b) >= 2 && b[0]&0x0F == 8 && b[0]>>4 <= 7 && (uint16(b[0])<<8|uint16(b[1]))%31 == 0
}

// readAll reads r into d.buf, failing as soon as more than limit bytes come
// out, or when oc refuses the memory for more.
func (d *decompressor) readAll(r io.Reader, what string, limit, inLen int, oc *outputCharge) ([]byte, error) {
	buf := d.buf[:0]
	if want := min(4*inLen+512, limit+1); cap(buf) < want {
		if !oc.reserve(want) {
			return nil, oc.refused(what)
		}
		buf = make([]byte, 0, want)
	}
	for {
		if len(buf) == cap(buf) {
			if len(buf) > limit {
				d.buf = buf[:0]
				return nil, errorf(ErrTooLarge, "%s body decompresses to more than %d bytes", what, limit)
			}
			newCap := min(2*cap(buf), limit+1)
			if !oc.reserve(newCap) {
				d.buf = buf[:0]
				return nil, oc.refused(what)
			}
			grown := make([]byte, len(buf), newCap)
			copy(grown, buf)
			buf = grown
		}
		end := cap(buf)
		if oc.charge != nil {
			end = min(end, len(buf)+decompressChargeStep)
			if !oc.reserve(end) {
				d.buf = buf[:0]
				return nil, oc.refused(what)
			}
		}
		n, err := r.Read(buf[len(buf):end])
		buf = buf[:len(buf)+n]
		if len(buf) > limit {
			d.buf = buf[:0]
			return nil, errorf(ErrTooLarge, "%s body decompresses to more than %d bytes", what, limit)
		}
		if err == io.EOF {
			d.buf = buf
			return buf, nil
		}
		if err != nil {
			d.buf = buf[:0]
			return nil, wrap(ErrMalformed, err, "%s", what)
		}
	}
}

// unzstd decodes a zstd body as a stream through readAll, so that its
// output is charged as it is produced like the other encodings'. The
// decoder also holds a window of history while it decodes, up to the size
// the first frame's header declares (no more than max(limit, 1 MiB)); that
// is charged first.
func (d *decompressor) unzstd(body []byte, limit int, oc *outputCharge) ([]byte, error) {
	if d.zstd == nil || d.zstdLimit != limit {
		if d.zstd != nil {
			d.zstd.Close()
		}
		// One synchronous decoder; the memory cap bounds the window (≥ 1
		// KiB, and encoders pick larger ones, hence the floor); readAll
		// checks the output against the limit.
		dec, err := zstd.NewReader(nil,
			zstd.WithDecoderConcurrency(1),
			zstd.WithDecoderMaxMemory(uint64(max(limit, 1<<20))),
		)
		if err != nil {
			return nil, wrap(ErrMalformed, err, "zstd")
		}
		d.zstd, d.zstdLimit = dec, limit
	}
	var h zstd.Header
	if err := h.Decode(body); err == nil {
		window := h.WindowSize
		if h.SingleSegment {
			window = h.FrameContentSize
		}
		if !oc.reserveOther(int(min(window, uint64(max(limit, 1<<20))))) {
			return nil, oc.refused("zstd")
		}
	}
	d.src.Reset(body)
	if err := d.zstd.Reset(&d.src); err != nil {
		return nil, wrap(ErrMalformed, err, "zstd")
	}
	out, err := d.readAll(d.zstd, "zstd", limit, len(body), oc)
	if err != nil && (errors.Is(err, zstd.ErrDecoderSizeExceeded) || errors.Is(err, zstd.ErrWindowSizeExceeded)) {
		return nil, errorf(ErrTooLarge, "zstd body decompresses to more than %d bytes", limit)
	}
	return out, err
}
