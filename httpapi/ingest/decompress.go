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
func (d *decompressor) decompress(body []byte, encoding string, limit int) ([]byte, error) {
	encoding = strings.TrimSpace(encoding)
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
		return d.readAll(d.gzip, "gzip", limit, len(body))
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
			return d.readAll(d.zlib, "deflate (zlib)", limit, len(body))
		}
		if d.flate == nil {
			d.flate = flate.NewReader(&d.src)
		} else if err := d.flate.(flate.Resetter).Reset(&d.src, nil); err != nil {
			return nil, wrap(ErrMalformed, err, "deflate")
		}
		return d.readAll(d.flate, "deflate", limit, len(body))
	case strings.EqualFold(encoding, "zstd"):
		return d.unzstd(body, limit)
	}
	return nil, errorf(ErrUnsupportedEncoding, "%q", encoding)
}

// isZlibHeader reports whether b starts with a valid zlib header: method 8
// (deflate), window ≤ 32 KiB, and the check bits.
func isZlibHeader(b []byte) bool {
	return len(b) >= 2 && b[0]&0x0F == 8 && b[0]>>4 <= 7 && (uint16(b[0])<<8|uint16(b[1]))%31 == 0
}

// readAll reads r into d.buf, failing as soon as more than limit bytes come
// out.
func (d *decompressor) readAll(r io.Reader, what string, limit, inLen int) ([]byte, error) {
	buf := d.buf[:0]
	if want := min(4*inLen+512, limit+1); cap(buf) < want {
		buf = make([]byte, 0, want)
	}
	for {
		if len(buf) == cap(buf) {
			if len(buf) > limit {
				d.buf = buf[:0]
				return nil, errorf(ErrTooLarge, "%s body decompresses to more than %d bytes", what, limit)
			}
			grown := make([]byte, len(buf), min(2*cap(buf), limit+1))
			copy(grown, buf)
			buf = grown
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
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

func (d *decompressor) unzstd(body []byte, limit int) ([]byte, error) {
	if d.zstd == nil || d.zstdLimit != limit {
		if d.zstd != nil {
			d.zstd.Close()
		}
		// One synchronous decoder; the memory cap makes DecodeAll refuse
		// frames (declared or actual) larger than the body limit. It has a
		// floor because the cap also bounds the window size (≥ 1 KiB, and
		// encoders pick larger ones); the exact limit is checked below.
		dec, err := zstd.NewReader(nil,
			zstd.WithDecoderConcurrency(1),
			zstd.WithDecoderMaxMemory(uint64(max(limit, 1<<20))),
		)
		if err != nil {
			return nil, wrap(ErrMalformed, err, "zstd")
		}
		d.zstd, d.zstdLimit = dec, limit
	}
	out, err := d.zstd.DecodeAll(body, d.buf[:0])
	if err != nil {
		if errors.Is(err, zstd.ErrDecoderSizeExceeded) || errors.Is(err, zstd.ErrWindowSizeExceeded) {
			return nil, errorf(ErrTooLarge, "zstd body decompresses to more than %d bytes", limit)
		}
		return nil, wrap(ErrMalformed, err, "zstd")
	}
	if len(out) > limit {
		return nil, errorf(ErrTooLarge, "zstd body decompresses to more than %d bytes", limit)
	}
	d.buf = out
	return out, nil
}
