package event

import (
	"encoding/binary"
	"errors"
	"math"
	"math/bits"
	"strconv"
	"unicode/utf8"
	"unsafe"

	"github.com/sediment/sediment/internal/jsonstr"
)

// MaxDepth is how deeply arrays and objects may nest, in the JSON parser and
// in the binary codec alike (so that everything we accept can be stored). It
// bounds recursion on hostile input; real log events nest fewer than 10 levels.
const MaxDepth = 512

// ErrSyntax is wrapped by every error the JSON parser returns.
var ErrSyntax = errors.New("invalid JSON")

// SyntaxError describes where a JSON document is malformed and what the
// parser expected there. Its text never quotes the input.
type SyntaxError struct {
	Offset int    // byte offset into the input handed to the parser
	Line   int    // 1-based line number for NDJSON input; 0 for a single document
	Msg    string // what was expected, e.g. "expected ':' after object key"
}

func (e *SyntaxError) Error() string {
	if e.Line > 0 {
		return "json: line " + strconv.Itoa(e.Line) + ", offset " + strconv.Itoa(e.Offset) + ": " + e.Msg
	}
	return "json: offset " + strconv.Itoa(e.Offset) + ": " + e.Msg
}

// Unwrap makes errors.Is(err, ErrSyntax) true.
func (e *SyntaxError) Unwrap() error { return ErrSyntax }

// Parser is a strict RFC 8259 JSON parser producing Value trees.
//
// A Parser keeps its memory between calls: Values, their member slices and
// the bytes of unescaped strings are carved out of arenas it owns, so parsing
// a stream of bodies with one Parser allocates almost nothing once warm.
//
// Lifetime rules:
//   - Strings that contain no escape and are valid UTF-8 alias the input
//     buffer (no copy). The input must not be modified while the Values are in
//     use.
//   - Everything else lives in the Parser's arenas and stays valid until
//     Reset. Reset lets the next parses overwrite that memory; a Parser that
//     is never Reset keeps every arena slab it allocated, so long-lived
//     Parsers must be Reset between independent inputs.
//   - Whoever keeps a Value beyond either lifetime must Clone it.
//
// Semantics: integers that fit int64 become Int; fractions, exponents and
// out-of-range integers become Float (a number beyond float64's range is an
// error). Escapes are decoded, including surrogate pairs; a lone surrogate and
// every invalid UTF-8 byte become U+FFFD. In an object with duplicate keys the
// member stays at the position of its first occurrence and takes the value of
// the last. Nesting deeper than MaxDepth is an error.
//
// A Parser is not safe for concurrent use. The zero Parser is ready to use.
type Parser struct {
	data  []byte
	pos   int
	base  int // offset of data within the caller's input (NDJSON lines)
	line  int // current NDJSON line, 0 for single documents
	stack []Value
	str   []byte // scratch for unescaping one string
	vals  valueArena
	bytes byteArena
	dedup map[string]int // scratch for duplicate detection in large objects
}

// NewParser returns an empty Parser.
func NewParser() *Parser { return &Parser{} }

// Reset releases every Value returned so far back to the Parser's arenas.
// Values (and escaped strings) from earlier calls must not be used after it.
func (p *Parser) Reset() {
	p.vals.reset()
	p.bytes.reset()
	clear(p.stack[:cap(p.stack)]) // drop references into old inputs
	p.stack = p.stack[:0]
	p.data = nil
}

// Parse parses data as one JSON document using a fresh Parser. Strings
// without escapes alias data.
func Parse(data []byte) (Value, error) {
	p := Parser{stack: make([]Value, 0, 16)}
	p.vals.sizeHint = len(data) / 16
	return p.Parse(data)
}

// ParseNDJSON parses newline-delimited JSON with a fresh Parser; see
// Parser.ParseNDJSON.
func ParseNDJSON(data []byte) ([]Value, error) {
	p := Parser{stack: make([]Value, 0, 16)}
	p.vals.sizeHint = len(data) / 16
	return p.ParseNDJSON(data, nil)
}

// Parse parses data as exactly one JSON value surrounded by optional
// whitespace.
func (p *Parser) Parse(data []byte) (Value, error) {
	p.line = 0
	return p.document(data, 0)
}

// ParseNDJSON parses one JSON value per non-empty line of data and appends
// them to dst. Lines are separated by '\n'; a trailing '\r' and surrounding
// whitespace are ignored, and blank lines are skipped. The first malformed
// line stops parsing; its *SyntaxError carries the line number and the byte
// offset within data. The values already appended are returned with it.
func (p *Parser) ParseNDJSON(data []byte, dst []Value) ([]Value, error) {
	var err error
	EachLine(data, func(lineNo, offset int, line []byte) bool {
		var v Value
		v, err = p.ParseLine(line, lineNo, offset)
		if err != nil {
			return false
		}
		dst = append(dst, v)
		return true
	})
	return dst, err
}

// ParseArray parses data as one JSON array surrounded by optional
// whitespace and calls fn with each element, in order, as soon as it is
// parsed: Parse for bodies too large to hold as one tree. An element's
// Values, and the strings the Parser made for it, are valid only during
// fn's call; the Parser reuses their memory for the next element, so a warm
// Parser allocates nothing however long the array. Strings without escapes
// alias data, as with Parse. ParseArray resets the Parser first and when it
// returns, like Reset.
//
// A malformed document yields the *SyntaxError Parse would give for it;
// fn may have been called for the elements before the error, so a caller
// that must act on every element or none collects what fn hands it and
// acts once ParseArray returns nil. An error from fn stops parsing and is
// returned as it is. A document that is not an array is a *SyntaxError.
func (p *Parser) ParseArray(data []byte, fn func(i int, v Value) error) error {
	return p.ParseArrayWith(data, nil, fn)
}

// ParseArrayWith is ParseArray with a first taker for each element: try
// is called with p at element i (see TranscodeEvent). When it returns
// true it has read the element, p is past it and fn is not called for
// it; when false, p must be where it was, and the element is parsed into
// a Value for fn. A nil try is ParseArray.
func (p *Parser) ParseArrayWith(data []byte, try func(i int) bool, fn func(i int, v Value) error) error {
	p.Reset()
	defer p.Reset()
	p.line = 0
	p.data, p.pos, p.base = data, 0, 0
	p.skipSpace()
	if p.pos >= len(p.data) || p.data[p.pos] != '[' {
		return p.failEOF("expected '['")
	}
	p.pos++ // '['
	p.skipSpace()
	if p.pos < len(p.data) && p.data[p.pos] == ']' {
		p.pos++
	} else {
		for i := 0; ; i++ {
			if try == nil || !try(i) {
				// Elements sit at depth 1, as array gives them.
				if err := p.value(1); err != nil {
					return err
				}
				v := p.stack[len(p.stack)-1]
				p.stack = p.stack[:len(p.stack)-1]
				if err := fn(i, v); err != nil {
					return err
				}
				p.vals.rewind()
			}
			p.bytes.reset()
			if end, err := p.afterElement(); end || err != nil {
				if err != nil {
					return err
				}
				break
			}
		}
	}
	p.skipSpace()
	if p.pos < len(p.data) {
		return p.fail("expected end of input after the value")
	}
	return nil
}

// ParseLine parses one line of an NDJSON body (as handed out by EachLine).
// A *SyntaxError names lineNo and an offset within the whole body, offset
// being where the line starts in it.
func (p *Parser) ParseLine(line []byte, lineNo, offset int) (Value, error) {
	p.line = lineNo
	v, err := p.document(line, offset)
	p.line = 0
	return v, err
}

// EachLine calls fn for every non-blank line of NDJSON data with its 1-based
// line number, its byte offset in data, and its content with surrounding
// whitespace (including '\r') trimmed. It stops when fn returns false.
func EachLine(data []byte, fn func(lineNo, offset int, line []byte) bool) {
	lineNo := 0
	for start := 0; start < len(data); {
		lineNo++
		end := start
		for end < len(data) && data[end] != '\n' {
			end++
		}
		lo, hi := start, end
		for lo < hi && isSpace(data[lo]) {
			lo++
		}
		for hi > lo && isSpace(data[hi-1]) {
			hi--
		}
		if lo < hi && !fn(lineNo, lo, data[lo:hi]) {
			return
		}
		start = end + 1
	}
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

// document parses one complete value; base is data's offset in the caller's
// input, for error positions.
func (p *Parser) document(data []byte, base int) (Value, error) {
	p.data, p.pos, p.base = data, 0, base
	mark := len(p.stack)
	p.skipSpace()
	if err := p.value(0); err != nil {
		clear(p.stack[mark:])
		p.stack = p.stack[:mark]
		return Value{}, err
	}
	p.skipSpace()
	if p.pos < len(p.data) {
		clear(p.stack[mark:])
		p.stack = p.stack[:mark]
		return Value{}, p.fail("expected end of input after the value")
	}
	v := p.stack[mark]
	p.stack[mark] = Value{}
	p.stack = p.stack[:mark]
	return v, nil
}

func (p *Parser) fail(msg string) error {
	return &SyntaxError{Offset: p.base + p.pos, Line: p.line, Msg: msg}
}

func (p *Parser) failEOF(what string) error {
	if p.pos >= len(p.data) {
		return p.fail("unexpected end of input, " + what)
	}
	return p.fail(what)
}

func (p *Parser) skipSpace() {
	data, i := p.data, p.pos
	for i < len(data) && data[i] <= ' ' && isSpace(data[i]) {
		i++
	}
	p.pos = i
}

// value parses one value at p.pos (whitespace already skipped) and appends it
// to p.stack.
func (p *Parser) value(depth int) error {
	if p.pos >= len(p.data) {
		return p.fail("unexpected end of input, expected a value")
	}
	switch c := p.data[p.pos]; c {
	case '{':
		return p.object(depth + 1)
	case '[':
		return p.array(depth + 1)
	case '"':
		s, err := p.string()
		if err != nil {
			return err
		}
		p.stack = append(p.stack, Value{Kind: String, Str: s})
		return nil
	case 't':
		return p.literal("true", Value{Kind: Bool, Num: 1})
	case 'f':
		return p.literal("false", Value{Kind: Bool})
	case 'n':
		return p.literal("null", Value{Kind: Null})
	default:
		if c == '-' || (c >= '0' && c <= '9') {
			return p.number()
		}
		return p.fail("expected a value")
	}
}

func (p *Parser) literal(word string, v Value) error {
	if len(p.data)-p.pos < len(word) || string(p.data[p.pos:p.pos+len(word)]) != word {
		return p.failEOF("expected '" + word + "'")
	}
	p.pos += len(word)
	p.stack = append(p.stack, v)
	return nil
}

func (p *Parser) array(depth int) error {
	if depth > MaxDepth {
		return p.fail("nesting deeper than " + strconv.Itoa(MaxDepth) + " levels")
	}
	p.pos++ // '['
	self := len(p.stack)
	p.stack = append(p.stack, Value{Kind: Array})
	p.skipSpace()
	if p.pos < len(p.data) && p.data[p.pos] == ']' {
		p.pos++
		return nil
	}
	for {
		if err := p.value(depth); err != nil {
			return err
		}
		if end, err := p.afterElement(); end || err != nil {
			if err != nil {
				return err
			}
			break
		}
	}
	kids := p.vals.alloc(len(p.stack) - self - 1)
	copy(kids, p.stack[self+1:])
	p.stack = p.stack[:self+1] // stale entries above are cleared by Reset
	p.stack[self].Kids = kids
	return nil
}

func (p *Parser) object(depth int) error {
	if depth > MaxDepth {
		return p.fail("nesting deeper than " + strconv.Itoa(MaxDepth) + " levels")
	}
	p.pos++ // '{'
	self := len(p.stack)
	p.stack = append(p.stack, Value{Kind: Object})
	p.skipSpace()
	if p.pos < len(p.data) && p.data[p.pos] == '}' {
		p.pos++
		return nil
	}
	for {
		if p.pos >= len(p.data) || p.data[p.pos] != '"' {
			return p.failEOF("expected a string object key")
		}
		key, err := p.string()
		if err != nil {
			return err
		}
		p.skipSpace()
		if p.pos >= len(p.data) || p.data[p.pos] != ':' {
			return p.failEOF("expected ':' after object key")
		}
		p.pos++
		p.skipSpace()
		if err := p.value(depth); err != nil {
			return err
		}
		p.stack[len(p.stack)-1].Key = key
		p.skipSpace()
		if p.pos >= len(p.data) {
			return p.fail("unexpected end of input, expected ',' or '}' after object member")
		}
		c := p.data[p.pos]
		p.pos++
		if c == '}' {
			break
		}
		if c != ',' {
			p.pos--
			return p.fail("expected ',' or '}' after object member")
		}
		p.skipSpace()
	}
	members := p.dedupMembers(p.stack[self+1:])
	kids := p.vals.alloc(len(members))
	copy(kids, members)
	p.stack = p.stack[:self+1] // stale entries above are cleared by Reset
	p.stack[self].Kids = kids
	return nil
}

// dedupMembers applies "last value wins, first position kept" to duplicate
// keys, compacting ms in place. A 64-bit filter over (length, first, middle
// and last byte) of each key makes the common duplicate-free case one pass;
// only filter hits are compared, and large objects use a map so hostile
// input cannot make this quadratic.
func (p *Parser) dedupMembers(ms []Value) []Value {
	if len(ms) < 2 {
		return ms
	}
	if len(ms) > 64 {
		return p.dedupLarge(ms)
	}
	var filter uint64
	n := 0
	for i := range ms {
		k := ms[i].Key
		h := uint64(len(k))
		if len(k) > 0 {
			h = h<<24 | uint64(k[0])<<16 | uint64(k[len(k)/2])<<8 | uint64(k[len(k)-1])
		}
		bit := uint64(1) << ((h * 0x9e3779b97f4a7c15) >> 58) // Fibonacci hashing: the top 6 bits
		if filter&bit != 0 {
			if j := indexKey(ms[:n], k); j >= 0 {
				ms[j].Str, ms[j].Kids, ms[j].Num, ms[j].Kind = ms[i].Str, ms[i].Kids, ms[i].Num, ms[i].Kind
				continue
			}
		}
		filter |= bit
		if n != i { // only after a duplicate: a Value is 72 bytes with pointers
			ms[n] = ms[i]
		}
		n++
	}
	return ms[:n]
}

func indexKey(ms []Value, k string) int {
	for j := range ms {
		if ms[j].Key == k {
			return j
		}
	}
	return -1
}

func (p *Parser) dedupLarge(ms []Value) []Value {
	if p.dedup == nil {
		p.dedup = make(map[string]int, len(ms))
	}
	clear(p.dedup)
	n := 0
	for i := range ms {
		if j, ok := p.dedup[ms[i].Key]; ok {
			ms[j].Str, ms[j].Kids, ms[j].Num, ms[j].Kind = ms[i].Str, ms[i].Kids, ms[i].Num, ms[i].Kind
			continue
		}
		p.dedup[ms[i].Key] = n
		ms[n] = ms[i]
		n++
	}
	clear(p.dedup) // do not keep keys (aliases into the input) alive
	return ms[:n]
}

// plainStringByte marks bytes that can appear in a JSON string as they are:
// not '"', not '\\', not a control character, and ASCII.
var plainStringByte = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// specialInWord returns a mask with the high bit set in each of the 8
// bytes of w that is '"', '\\', a control character or non-ASCII (the
// bytes the string scanner must look at one by one), and perhaps in bytes
// above such a byte: classic SWAR zero-byte tests, whose borrows run only
// upwards from a byte that matched. So the lowest bit set marks the first
// special byte exactly, and 0 means none is special.
func specialInWord(w uint64) uint64 {
	const (
		ones  = 0x0101010101010101
		highs = 0x8080808080808080
	)
	quote := w ^ (ones * '"')
	bslash := w ^ (ones * '\\')
	zeroQuote := (quote - ones) &^ quote
	zeroBslash := (bslash - ones) &^ bslash
	control := (w - ones*0x20) &^ w
	return (zeroQuote | zeroBslash | control | w) & highs
}

// string parses a string starting at the opening quote at p.pos.
func (p *Parser) string() (string, error) {
	data := p.data
	start := p.pos + 1
	i := start
	// Eight bytes at a time up to the first special byte, whose place
	// the mask gives (the closing quote of most strings).
	for i+8 <= len(data) {
		if m := specialInWord(binary.LittleEndian.Uint64(data[i:])); m != 0 {
			i += bits.TrailingZeros64(m) >> 3
			break
		}
		i += 8
	}
	// Valid multi-byte UTF-8 can still be aliased; only escapes and invalid
	// bytes force a copy.
	for i < len(data) {
		c := data[i]
		if plainStringByte[c] {
			i++
			continue
		}
		if c == '"' {
			p.pos = i + 1
			return aliasString(data[start:i]), nil
		}
		if c < utf8.RuneSelf {
			break // '\\' or a control character
		}
		r, size := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && size == 1 {
			break
		}
		i += size
	}
	return p.stringSlow(start, i)
}

// stringSlow decodes the rest of a string whose bytes start..i were plain,
// into p.str, then copies the result into the byte arena.
func (p *Parser) stringSlow(start, i int) (string, error) {
	data := p.data
	buf := append(p.str[:0], data[start:i]...)
	for {
		if i >= len(data) {
			p.pos = i
			p.str = buf
			return "", p.fail("unexpected end of input, expected '\"' to close the string")
		}
		c := data[i]
		switch {
		case c == '"':
			p.pos = i + 1
			p.str = buf
			return p.bytes.store(buf), nil
		case c == '\\':
			out, n, badHex := jsonstr.AppendEscaped(buf, data, i)
			if n == 0 {
				p.str = buf
				switch {
				case i+1 >= len(data):
					p.pos = i + 1
					return "", p.fail("unexpected end of input in an escape sequence")
				case badHex:
					p.pos = i + 2
					return "", p.failEOF("expected 4 hex digits after \\u")
				}
				p.pos = i + 1
				return "", p.fail("invalid escape character in string")
			}
			buf, i = out, i+n
		case c < 0x20:
			p.pos = i
			p.str = buf
			return "", p.fail("control character in string (must be escaped)")
		case c < utf8.RuneSelf:
			buf = append(buf, c)
			i++
		default:
			r, size := utf8.DecodeRune(data[i:])
			if r == utf8.RuneError && size == 1 {
				buf = append(buf, "\uFFFD"...)
			} else {
				buf = append(buf, data[i:i+size]...)
			}
			i += size
		}
	}
}

// number parses an RFC 8259 number at p.pos.
func (p *Parser) number() error {
	data := p.data
	start := p.pos
	i := start
	neg := false
	if data[i] == '-' {
		neg = true
		i++
	}
	if i >= len(data) || data[i] < '0' || data[i] > '9' {
		p.pos = i
		return p.failEOF("expected a digit in number")
	}
	var u uint64
	overflow := false
	if data[i] == '0' {
		i++
	} else {
		for i < len(data) && data[i] >= '0' && data[i] <= '9' {
			d := uint64(data[i] - '0')
			if u > (math.MaxUint64-d)/10 {
				overflow = true
			} else {
				u = u*10 + d
			}
			i++
		}
	}
	isFloat := false
	if i < len(data) && data[i] == '.' {
		i++
		if i >= len(data) || data[i] < '0' || data[i] > '9' {
			p.pos = i
			return p.failEOF("expected a digit after the decimal point")
		}
		for i < len(data) && data[i] >= '0' && data[i] <= '9' {
			i++
		}
		isFloat = true
	}
	if i < len(data) && (data[i] == 'e' || data[i] == 'E') {
		i++
		if i < len(data) && (data[i] == '+' || data[i] == '-') {
			i++
		}
		if i >= len(data) || data[i] < '0' || data[i] > '9' {
			p.pos = i
			return p.failEOF("expected a digit in the exponent")
		}
		for i < len(data) && data[i] >= '0' && data[i] <= '9' {
			i++
		}
		isFloat = true
	}
	if !isFloat && !overflow {
		if !neg && u <= math.MaxInt64 {
			p.pos = i
			p.stack = append(p.stack, Value{Kind: Int, Num: u})
			return nil
		}
		if neg && u <= 1<<63 {
			p.pos = i
			p.stack = append(p.stack, Value{Kind: Int, Num: -u})
			return nil
		}
	}
	f, err := strconv.ParseFloat(aliasString(data[start:i]), 64)
	if err != nil {
		p.pos = start
		return p.fail("number out of float64 range")
	}
	p.pos = i
	p.stack = append(p.stack, Value{Kind: Float, Num: math.Float64bits(f)})
	return nil
}

// aliasString returns b as a string without copying. The bytes must not
// change while the string is in use.
func aliasString(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

// valueArena hands out member slices from large slabs. Returned slices have
// their capacity capped, so appending to one never overwrites a neighbour.
type valueArena struct {
	slabs    [][]Value
	cur      int // slab being carved
	used     int // Values used in slabs[cur]
	sizeHint int // Values expected in the first slab; 0 = default
	// hiCur and hiUsed are the furthest cur and used reached since the
	// last reset: rewind starts over without clearing, reset clears up to
	// there.
	hiCur, hiUsed int
}

const (
	minSlabValues = 32
	maxSlabValues = 4096 // 288 KiB
)

func (a *valueArena) alloc(n int) []Value {
	if n == 0 {
		return nil
	}
	if n > maxSlabValues/4 {
		return make([]Value, n) // large containers get their own slice
	}
	for a.cur < len(a.slabs) {
		s := a.slabs[a.cur]
		if a.used+n <= len(s) {
			out := s[a.used : a.used+n : a.used+n]
			a.used += n
			return out
		}
		a.cur++
		a.used = 0
	}
	size := a.sizeHint
	if len(a.slabs) > 0 {
		size = 2 * len(a.slabs[len(a.slabs)-1])
	}
	size = max(min(size, maxSlabValues), minSlabValues, n)
	a.slabs = append(a.slabs, make([]Value, size))
	a.cur = len(a.slabs) - 1
	a.used = n
	return a.slabs[a.cur][:n:n]
}

// rewind lets the arena hand out its memory again without clearing it:
// for reuse within one input, whose references the arena may keep until
// reset.
func (a *valueArena) rewind() {
	if a.cur > a.hiCur || (a.cur == a.hiCur && a.used > a.hiUsed) {
		a.hiCur, a.hiUsed = a.cur, a.used
	}
	a.cur, a.used = 0, 0
}

func (a *valueArena) reset() {
	a.rewind()
	// Drop references into old inputs so they can be collected.
	for i := 0; i < a.hiCur && i < len(a.slabs); i++ {
		clear(a.slabs[i])
	}
	if a.hiCur < len(a.slabs) {
		clear(a.slabs[a.hiCur][:a.hiUsed])
	}
	a.hiCur, a.hiUsed = 0, 0
}

// byteArena stores unescaped string bytes in large chunks.
type byteArena struct {
	chunks [][]byte
	cur    int
}

const (
	byteChunk    = 16 << 10
	maxByteChunk = 1 << 20
)

// store copies b into the arena and returns it as a string.
func (a *byteArena) store(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	if len(b) > byteChunk/4 {
		return string(b) // large strings get their own allocation
	}
	for a.cur < len(a.chunks) {
		c := a.chunks[a.cur]
		if len(c)+len(b) <= cap(c) {
			c = append(c, b...)
			a.chunks[a.cur] = c
			return aliasString(c[len(c)-len(b):])
		}
		a.cur++
	}
	size := byteChunk
	if len(a.chunks) > 0 {
		size = min(2*cap(a.chunks[len(a.chunks)-1]), maxByteChunk)
	}
	c := append(make([]byte, 0, size), b...)
	a.chunks = append(a.chunks, c)
	a.cur = len(a.chunks) - 1
	return aliasString(c)
}

func (a *byteArena) reset() {
	for i := range a.chunks {
		a.chunks[i] = a.chunks[i][:0]
	}
	a.cur = 0
}

// afterElement reads what follows an array element: ']' (end is true) or
// ',' and the space before the next element.
func (p *Parser) afterElement() (end bool, err error) {
	p.skipSpace()
	if p.pos >= len(p.data) {
		return false, p.fail("unexpected end of input, expected ',' or ']' after array element")
	}
	c := p.data[p.pos]
	p.pos++
	if c == ']' {
		return true, nil
	}
	if c != ',' {
		p.pos--
		return false, p.fail("expected ',' or ']' after array element")
	}
	p.skipSpace()
	return false, nil
}
