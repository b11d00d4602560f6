package segment

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"sync"
)

// Binary forms of high-entropy text: UUIDs, hex ids with a suffix (a
// Cloudflare ray id "8f4c2d1e9a7b6c5d-SJC") and IP addresses. A chunk gets
// one of these encodings only when every one of its values has the shape
// and reads back byte for byte (see the format description in format.go).

// encHex's width byte: the low bits are the bytes each value's hex digits
// take (2 digits a byte), hexUpper says the digits are upper case.
const (
	hexWidthMask = 0x3f
	hexUpper     = 0x80
	// minHexDigits is the shortest hex prefix worth packing: shorter ones
	// save too little to pay for the suffix lengths.
	minHexDigits = 8
)

// Kinds of an encIP value.
const (
	ipKind4 = 4
	ipKind6 = 6
)

// hexRuns returns the number of leading lower-case ([0-9a-f]) and
// upper-case ([0-9A-F]) hex digits of s, each at most 2*maxHexBytes, and
// whether each run holds a letter (a run of decimal digits alone packs
// worse than zstd compresses it as text).
func hexRuns(s string) (lower, upper int, lowerLetter, upperLetter bool) {
	lim := min(len(s), 2*maxHexBytes)
	// Two runs over a class table: the branches of one loop tracking both
	// runs cost more than the second pass over a few bytes (every value of
	// a chunk of ids comes here).
	var letters uint8
	for lower < lim {
		c := hexClass[s[lower]]
		if c&hexClassLower == 0 {
			break
		}
		letters |= c
		lower++
	}
	for upper < lim {
		c := hexClass[s[upper]]
		if c&hexClassUpper == 0 {
			break
		}
		letters |= c
		upper++
	}
	return lower, upper, letters&hexClassLowerLetter != 0, letters&hexClassUpperLetter != 0
}

// Bits of hexClass.
const (
	hexClassLower       = 1 << iota // [0-9a-f]
	hexClassUpper                   // [0-9A-F]
	hexClassLowerLetter             // [a-f]
	hexClassUpperLetter             // [A-F]
)

// hexClass[c] says which hex digit classes byte c is in.
var hexClass = func() (t [256]uint8) {
	for c := '0'; c <= '9'; c++ {
		t[c] = hexClassLower | hexClassUpper
	}
	for c := 'a'; c <= 'f'; c++ {
		t[c] = hexClassLower | hexClassLowerLetter
	}
	for c := 'A'; c <= 'F'; c++ {
		t[c] = hexClassUpper | hexClassUpperLetter
	}
	return t
}()

// textShape tracks, over the values of a chunk, which binary form all of
// them have so far.
type textShape struct {
	n                  int
	uuid, ip           bool
	minLower, minUpper int
	letterLower        bool // some value has a-f in its lower-case prefix
	letterUpper        bool
	ipBuf              []byte
}

func newTextShape() *textShape {
	return &textShape{uuid: true, ip: true, minLower: 2 * maxHexBytes, minUpper: 2 * maxHexBytes}
}

// add looks at one more value.
func (t *textShape) add(s string) {
	t.n++
	if t.uuid && !isCanonicalUUID(s) {
		t.uuid = false
	}
	if t.minLower >= minHexDigits || t.minUpper >= minHexDigits {
		lo, up, loLetter, upLetter := hexRuns(s)
		t.minLower = min(t.minLower, lo)
		t.minUpper = min(t.minUpper, up)
		t.letterLower = t.letterLower || loLetter
		t.letterUpper = t.letterUpper || upLetter
	}
	if t.ip {
		t.ip = t.isCanonicalIP(s)
	}
}

// isCanonicalIP reports whether s is an IP address (no zone) written as
// netip writes it, so that the 4 or 16 bytes give s back.
func (t *textShape) isCanonicalIP(s string) bool {
	if len(s) < 2 || len(s) > 45 {
		return false
	}
	a, err := netip.ParseAddr(s)
	if err != nil || a.Zone() != "" {
		return false
	}
	t.ipBuf = a.AppendTo(t.ipBuf[:0])
	return string(t.ipBuf) == s
}

// choice returns the binary encoding every value fits (and its width
// byte), or encBytes.
func (t *textShape) choice() (Encoding, uint8) {
	if t.n == 0 {
		return encBytes, 0
	}
	if t.uuid {
		return encUUID, 0
	}
	if t.ip {
		return encIP, 0
	}
	lower := t.minLower &^ 1
	if !t.letterLower {
		lower = 0
	}
	upper := t.minUpper &^ 1
	if !t.letterUpper {
		upper = 0
	}
	switch {
	case lower >= minHexDigits && lower >= upper:
		return encHex, uint8(lower / 2)
	case upper >= minHexDigits:
		return encHex, uint8(upper/2) | hexUpper
	}
	return encBytes, 0
}

// appendHexValues encodes values (all of the width's shape) as encHex:
// the packed digits of each, then the uvarint lengths of the suffixes,
// then the suffixes.
func appendHexValues(dst []byte, width uint8, n int, value func(k int) string) []byte {
	w := int(width & hexWidthMask)
	for k := 0; k < n; k++ {
		s := value(k)
		for i := 0; i < w; i++ {
			dst = append(dst, unhex(s[2*i])<<4|unhex(s[2*i+1]))
		}
	}
	for k := 0; k < n; k++ {
		dst = binary.AppendUvarint(dst, uint64(len(value(k))-2*w))
	}
	for k := 0; k < n; k++ {
		dst = append(dst, value(k)[2*w:]...)
	}
	return dst
}

// unhex is the value of a hex digit of either case.
func unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c >= 'a':
		return c - 'a' + 10
	}
	return c - 'A' + 10
}

const hexDigitsUpper = "0123456789ABCDEF"

// hexPairs[b] and hexPairsUpper[b] are the two hex digits of byte b (a
// read renders every value of an encHex page: a table look-up a byte).
var hexPairs, hexPairsUpper = hexPairTable(hexDigits), hexPairTable(hexDigitsUpper)

func hexPairTable(digits string) (t [256][2]byte) {
	for b := range t {
		t[b] = [2]byte{digits[b>>4], digits[b&15]}
	}
	return t
}

// hexValues is the value area of an encHex page, split: packed digits,
// and the suffixes (offsets into suf).
type hexValues struct {
	w      int
	pairs  *[256][2]byte // hexPairs or hexPairsUpper
	packed []byte
	ends   []uint32 // end of suffix k in suf
	suf    []byte
}

// parseHex splits the value area of n encHex values. ends is reused.
func parseHex(rest []byte, width uint8, n int, ends []uint32) (hexValues, error) {
	hv := hexValues{w: int(width & hexWidthMask), pairs: &hexPairs}
	if width&hexUpper != 0 {
		hv.pairs = &hexPairsUpper
	}
	if hv.w == 0 || hv.w > maxHexBytes {
		return hv, fmt.Errorf("hex width %d", hv.w)
	}
	if n > len(rest)/hv.w {
		return hv, errShort
	}
	hv.packed, rest = rest[:n*hv.w], rest[n*hv.w:]
	if n > len(rest) { // a suffix length takes at least a byte
		return hv, errShort
	}
	if len(rest) == n {
		// n lengths in n bytes leave no bytes for suffixes: valid only
		// when every length is 0, the page of ray ids or trace ids that
		// are hex digits alone. A read of a row of it needs no offsets.
		if !allZero(rest) {
			return hv, errShort
		}
		return hv, nil
	}
	ends = grow(ends, n)
	pos, total := 0, uint64(0)
	for k := 0; k < n; k++ {
		l, m := binary.Uvarint(rest[pos:])
		if m <= 0 || l > uint64(len(rest)) {
			return hv, errShort
		}
		pos += m
		total += l
		if total > uint64(len(rest)) {
			return hv, errShort
		}
		ends[k] = uint32(total)
	}
	hv.suf = rest[pos:]
	if uint64(len(hv.suf)) < total {
		return hv, errShort
	}
	hv.ends = ends
	return hv, nil
}

// allZero reports whether every byte of b is 0.
func allZero(b []byte) bool {
	for len(b) >= 8 {
		if binary.LittleEndian.Uint64(b) != 0 {
			return false
		}
		b = b[8:]
	}
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// appendValue appends the text of value k.
func (hv *hexValues) appendValue(dst []byte, k int) []byte {
	n := len(dst)
	dst = slices.Grow(dst, 2*hv.w)[:n+2*hv.w]
	out := dst[n:]
	for i, b := range hv.packed[k*hv.w : (k+1)*hv.w] {
		p := &hv.pairs[b]
		out[2*i], out[2*i+1] = p[0], p[1]
	}
	if hv.ends == nil { // no value has a suffix
		return dst
	}
	start := uint32(0)
	if k > 0 {
		start = hv.ends[k-1]
	}
	if start == hv.ends[k] {
		return dst
	}
	return append(dst, hv.suf[start:hv.ends[k]]...)
}

// appendIPValues encodes values (all canonical IP text) as encIP: a kind
// byte each, then the addresses.
func appendIPValues(dst []byte, n int, value func(k int) string) []byte {
	// The kinds' bytes first, filled in as each value is parsed (once).
	kinds := len(dst)
	dst = slices.Grow(dst, n+16*n)[:kinds+n]
	for k := 0; k < n; k++ {
		a, _ := netip.ParseAddr(value(k))
		if a.Is4() {
			dst[kinds+k] = ipKind4
			b := a.As4()
			dst = append(dst, b[:]...)
		} else {
			dst[kinds+k] = ipKind6
			b := a.As16()
			dst = append(dst, b[:]...)
		}
	}
	return dst
}

// ipValues is the value area of an encIP page: the kinds, and where each
// address starts.
type ipValues struct {
	kinds []byte
	addrs []byte
	start []uint32 // offset of address k in addrs
}

var errIPKind = errors.New("bad IP address kind")

// parseIP splits the value area of n encIP values. start is reused.
func parseIP(rest []byte, n int, start []uint32) (ipValues, error) {
	if n > len(rest) {
		return ipValues{}, errShort
	}
	iv := ipValues{kinds: rest[:n], addrs: rest[n:]}
	start = grow(start, n)
	pos := 0
	for k, kind := range iv.kinds {
		start[k] = uint32(pos)
		switch kind {
		case ipKind4:
			pos += 4
		case ipKind6:
			pos += 16
		default:
			return iv, errIPKind
		}
	}
	if pos > len(iv.addrs) {
		return iv, errShort
	}
	iv.start = start
	return iv, nil
}

// appendValue appends the text of address k.
func (iv *ipValues) appendValue(dst []byte, k int) []byte {
	p := iv.addrs[iv.start[k]:]
	if iv.kinds[k] == ipKind4 {
		return appendIPv4(dst, [4]byte(p[:4]))
	}
	return netip.AddrFrom16([16]byte(p[:16])).AppendTo(dst)
}

// appendTextValues writes the present values of rows [from, to) of an
// encHex or encIP chunk.
func (p *chunkPlan) appendTextValues(dst []byte, d *ColumnData, from, to int) []byte {
	p.rowsBuf = p.rowsBuf[:0]
	for i := from; i < to; i++ {
		if d.present(i) {
			p.rowsBuf = append(p.rowsBuf, i)
		}
	}
	value := func(k int) string { return d.str(p.rowsBuf[k]) }
	if p.enc == encHex {
		return appendHexValues(dst, p.width, len(p.rowsBuf), value)
	}
	return appendIPValues(dst, len(p.rowsBuf), value)
}

// scratchPool holds the value offsets a hex or IP page is parsed into.
var scratchPool = sync.Pool{New: func() any { return new([]uint32) }}

// decodeHex reads an encHex page of the given width byte.
func decodeHex(pv *pageView, width uint8, sel rowSel, out *pageOut) error {
	scratch := scratchPool.Get().(*[]uint32)
	defer scratchPool.Put(scratch)
	hv, err := parseHex(pv.vals, width, pv.present, *scratch)
	if hv.ends != nil {
		*scratch = hv.ends
	}
	if err != nil {
		return err
	}
	n := sel.n()
	out.reserve((2*hv.w + 4) * n)
	dst := out.dst
	rk := ranker{bitmap: pv.bitmap}
	for i := 0; i < n; i++ {
		r := sel.at(i)
		if !pv.has(r) {
			out.null(out.off + i)
			continue
		}
		dst.Bytes = hv.appendValue(dst.Bytes, rk.rank(r))
		if err := out.endStr(out.off + i); err != nil {
			return err
		}
	}
	return nil
}

// decodeIP reads an encIP page.
func decodeIP(pv *pageView, sel rowSel, out *pageOut) error {
	scratch := scratchPool.Get().(*[]uint32)
	defer scratchPool.Put(scratch)
	iv, err := parseIP(pv.vals, pv.present, *scratch)
	*scratch = iv.start
	if err != nil {
		return err
	}
	n := sel.n()
	out.reserve(16 * n)
	dst := out.dst
	rk := ranker{bitmap: pv.bitmap}
	for i := 0; i < n; i++ {
		r := sel.at(i)
		if !pv.has(r) {
			out.null(out.off + i)
			continue
		}
		dst.Bytes = iv.appendValue(dst.Bytes, rk.rank(r))
		if err := out.endStr(out.off + i); err != nil {
			return err
		}
	}
	return nil
}

// decimalOctets[b] is b in decimal: up to three digits, then their count.
var decimalOctets = func() (t [256][4]byte) {
	for b := range t {
		s := strconv.Itoa(b)
		copy(t[b][:3], s)
		t[b][3] = byte(len(s))
	}
	return t
}()

// appendIPv4 appends a in dotted decimal, as netip.Addr's String does
// (a read renders every address of an encIP page).
func appendIPv4(dst []byte, a [4]byte) []byte {
	var buf [16]byte
	i := 0
	for k, b := range a {
		d := &decimalOctets[b]
		buf[i], buf[i+1], buf[i+2] = d[0], d[1], d[2]
		i += int(d[3])
		if k < 3 {
			buf[i] = '.'
			i++
		}
	}
	return append(dst, buf[:i]...)
}
