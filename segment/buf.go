package segment

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// encbuf appends the footer's primitive values.
type encbuf struct{ b []byte }

func (e *encbuf) uvarint(x uint64) { e.b = binary.AppendUvarint(e.b, x) }
func (e *encbuf) varint(x int64)   { e.b = binary.AppendVarint(e.b, x) }
func (e *encbuf) byte1(x byte)     { e.b = append(e.b, x) }
func (e *encbuf) f64(x float64)    { e.b = binary.LittleEndian.AppendUint64(e.b, math.Float64bits(x)) }
func (e *encbuf) str(s string)     { e.uvarint(uint64(len(s))); e.b = append(e.b, s...) }

// decbuf reads primitive values with a sticky error: once a read fails,
// every later read returns zero and err keeps the first failure, so callers
// check err once at the end (and bounds-check counts before allocating).
type decbuf struct {
	b   []byte
	err error
}

var errShort = errors.New("unexpected end of data")

func (d *decbuf) fail(err error) {
	if d.err == nil {
		d.err = err
	}
}

func (d *decbuf) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	x, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail(errShort)
		return 0
	}
	d.b = d.b[n:]
	return x
}

func (d *decbuf) varint() int64 {
	if d.err != nil {
		return 0
	}
	x, n := binary.Varint(d.b)
	if n <= 0 {
		d.fail(errShort)
		return 0
	}
	d.b = d.b[n:]
	return x
}

func (d *decbuf) byte1() byte {
	if d.err != nil {
		return 0
	}
	if len(d.b) < 1 {
		d.fail(errShort)
		return 0
	}
	x := d.b[0]
	d.b = d.b[1:]
	return x
}

func (d *decbuf) f64() float64 {
	if d.err != nil {
		return 0
	}
	if len(d.b) < 8 {
		d.fail(errShort)
		return 0
	}
	x := math.Float64frombits(binary.LittleEndian.Uint64(d.b))
	d.b = d.b[8:]
	return x
}

// bytes returns the next n bytes (aliasing the buffer).
func (d *decbuf) bytes(n uint64) []byte {
	if d.err != nil {
		return nil
	}
	if n > uint64(len(d.b)) {
		d.fail(errShort)
		return nil
	}
	x := d.b[:n]
	d.b = d.b[n:]
	return x
}

// str reads a length-prefixed string of at most max bytes.
func (d *decbuf) str(max int) string {
	n := d.uvarint()
	if n > uint64(max) {
		d.fail(fmt.Errorf("string length %d exceeds %d", n, max))
		return ""
	}
	return string(d.bytes(n))
}

// count reads a count and checks it against max and against the bytes left
// (each counted item takes at least minBytes), so a corrupt count cannot
// drive an allocation.
func (d *decbuf) count(what string, max int, minBytes int) int {
	n := d.uvarint()
	if d.err != nil {
		return 0
	}
	if n > uint64(max) {
		d.fail(fmt.Errorf("too big value for %s: %d; mustn't exceed %d", what, n, max))
		return 0
	}
	if minBytes > 0 && n*uint64(minBytes) > uint64(len(d.b)) {
		d.fail(fmt.Errorf("%s %d exceeds remaining data", what, n))
		return 0
	}
	return int(n)
}
