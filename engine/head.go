package engine

import (
	"fmt"
	"math"
	"math/bits"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/sediment/sediment/event"
	"github.com/sediment/sediment/segment"
)

// headDictMax is the number of distinct values a head string column keeps
// dictionary-coded; past it the column switches to packed bytes. Small
// dictionaries keep their maps in cache; medium-cardinality columns are
// cheaper to append as bytes than to look up.
const headDictMax = 256

// headCode is a dictionary code of a head string column: one byte, as a
// dictionary holds at most headDictMax values (a 4-byte code was a sixth
// of a platform edge event's bytes in the head).
type headCode = uint8

// A code holds every index of a full dictionary (else this does not
// compile).
const _ = headCode(headDictMax - 1)

// head is the in-memory, queryable part of a shard: events appended since
// the last flush, flattened into columns (one per field path and type) in
// arrival order. Writers append under mu; readers take a headView, which
// stays valid while the head keeps growing because appends never touch
// memory a view can see.
//
// Events are added in two steps: add stages an event (its row is not yet
// visible: views stop at rows), publish makes the staged rows visible once
// their write-ahead log record is written. A staged event that needs a
// column the head cannot take is taken back out (truncate), and goes to a
// new head instead.
type head struct {
	mu sync.RWMutex
	// cacheID is the head's number in the predicate cache (predcache.go).
	cacheID atomic.Uint64
	rows    int // visible rows
	// staged rows follow the visible ones; stagedMin/Max are their times.
	staged               int
	stagedMin, stagedMax int64
	root                 *trieNode
	cols                 []*headColumn
	// sizes are the final column sizes of the previous head, to allocate
	// this one's columns once instead of growing them.
	sizes   map[colSizeKey]colSize
	minTime int64
	maxTime int64
	bytes   int
	created time.Time
	updated time.Time // when events were last added
	// maxCols caps the columns (0: none). droppedFields counts values left
	// out because their path is too long for a segment, or because one event
	// alone needed more than maxCols columns. capSkipped counts the values
	// of the event being added that found the head full: the caller takes
	// the event out and adds it to a new head.
	maxCols       int
	droppedFields int64
	capSkipped    int64
	walFirst      uint64 // first WAL sequence whose records are in this head
	walLast       uint64
	frozen        bool
	// adder stages events (add, addEncoded); under mu.
	adder headAdder
	// slotPool gives the packed columns their slots (nil: allocate);
	// viewed says a snapshot took a view of the head, whose slots are then
	// never recycled (headslots.go).
	slotPool *slotPool
	viewed   atomic.Bool

	// sealed are the summaries of the head's full chunks, in row order,
	// added by readers (headchunk.go); guarded by sealMu, not mu.
	sealMu sync.Mutex
	sealed []*headChunk
}

// trieNode maps field names to child nodes so that flattening an event
// needs one small map lookup per key instead of building path strings.
type trieNode struct {
	key      string
	path     string
	children map[string]*trieNode
	cols     [8]*headColumn // by segment.ColType
	// order is the children in the order the last object had them: events
	// of a source mostly share their key order, so the i-th member is
	// usually order[i] and needs no map lookup. quick is the last child
	// found for each quickHash of a key.
	order []*trieNode
	quick [quickSlots]*trieNode
}

// quickSlots is the size of a trie node's quick table (a power of two).
const quickSlots = 32

// quickHash is a cheap hash of a member name (its length and its first
// and last bytes) into a trie node's quick table; a collision costs only a
// map lookup.
func quickHash(key string) int {
	h := uint(len(key))
	if len(key) > 0 {
		h = h*31 + uint(key[0])*7 + uint(key[len(key)-1])
	}
	return int(h & (quickSlots - 1))
}

// childAt returns the child for the i-th member of an object, named key.
// It tries order[i], then the child the key's quick hash last led to,
// before the map: an optional member that one event has and the last did
// not shifts the others' positions.
func (n *trieNode) childAt(i int, key string) *trieNode {
	if i < len(n.order) && n.order[i].key == key {
		return n.order[i]
	}
	q := quickHash(key)
	if c := n.quick[q]; c != nil && c.key == key {
		if i < len(n.order) {
			n.order[i] = c
		}
		return c
	}
	c := n.child(key)
	n.quick[q] = c
	switch {
	case i < len(n.order):
		n.order[i] = c
	case i == len(n.order) && i < 256:
		n.order = append(n.order, c)
	}
	return c
}

func (n *trieNode) child(key string) *trieNode {
	c := n.children[key]
	if c == nil {
		if n.children == nil {
			n.children = map[string]*trieNode{}
		}
		// The key may alias the caller's buffer: keep copies only.
		key = strings.Clone(key)
		p := key
		if n.path != "" {
			p = n.path + "." + key
		}
		c = &trieNode{key: key, path: p}
		n.children[key] = c
	}
	return c
}

// headColumn holds one (path, type) column: a presence bit per head row
// and the values of the present rows, packed in row order.
type headColumn struct {
	path    string
	typ     segment.ColType
	node    *trieNode // whose cols[typ] this is
	present []uint64
	n       int // values held

	ints   []int64
	floats []float64
	bools  []bool

	// Strings (and encoded arrays) are dictionary-coded while they have few
	// distinct values (dict != nil), else packed: value i ends at virtual
	// offset offs[i+1] of packed (headbytes.go).
	dict     map[string]uint32
	dictStrs []string
	codes    []headCode
	packed   packedBytes
	offs     []uint32
	// lastCode is the dictionary code of the last value added, tried
	// before the map: neighbouring events often share a value.
	lastCode headCode

	elem map[segment.ElemField]struct{} // array element fields seen
}

func newHead(now time.Time, walSeq uint64, maxCols int) *head {
	return &head{root: &trieNode{}, created: now, walFirst: walSeq, walLast: walSeq, maxCols: maxCols,
		minTime: math.MaxInt64, maxTime: math.MinInt64, stagedMin: math.MaxInt64, stagedMax: math.MinInt64}
}

type colSizeKey struct {
	path string
	typ  segment.ColType
}

// colSize is how big a column grew, used to size the next head's.
type colSize struct {
	words, n, data int
	dict           bool
}

// sizeHints records the final sizes of a head's columns for the next head.
func (h *head) sizeHints() map[colSizeKey]colSize {
	m := make(map[colSizeKey]colSize, len(h.cols))
	for _, c := range h.cols {
		m[colSizeKey{c.path, c.typ}] = colSize{words: len(c.present), n: c.n, data: int(c.packed.end), dict: c.dict != nil}
	}
	return m
}

// reservedColumns is the number of columns every event may have besides
// its fields: timestamp, id and event_message.
const reservedColumns = 3

// isReservedColumn reports the columns every event has (Logflare's
// required fields), which the column cap never refuses.
func isReservedColumn(path string) bool {
	return path == "timestamp" || path == "id" || path == "event_message"
}

// column returns the column of a path and type, creating it if the head
// may have one more. It returns nil, and the value is not stored, when the
// path is longer than a segment allows (counted in droppedFields), or when
// the head already holds maxCols columns (counted in capSkipped, for the
// caller to move the event to a new head).
func (h *head) column(n *trieNode, t segment.ColType) *headColumn {
	c := n.cols[t]
	if c == nil {
		if len(n.path) > segment.MaxPathLen {
			h.droppedFields++
			return nil
		}
		if h.maxCols > 0 && len(h.cols) >= h.maxCols && !isReservedColumn(n.path) {
			h.capSkipped++
			return nil
		}
		c = &headColumn{path: n.path, typ: t, node: n}
		c.packed.pool = h.slotPool
		if t == segment.TypeString {
			c.dict = map[string]uint32{}
		} else if t == segment.TypeArray {
			c.offs = []uint32{0}
			c.elem = map[segment.ElemField]struct{}{}
		}
		if sz, ok := h.sizes[colSizeKey{n.path, t}]; ok {
			c.reserve(sz)
		}
		n.cols[t] = c
		h.cols = append(h.cols, c)
	}
	return c
}

// reserve allocates a column's slices for the sizes its predecessor
// reached, plus an eighth.
func (c *headColumn) reserve(sz colSize) {
	pad := func(n int) int { return n + n/8 + 16 }
	c.present = make([]uint64, 0, pad(sz.words))
	switch c.typ {
	case segment.TypeBool:
		c.bools = make([]bool, 0, pad(sz.n))
	case segment.TypeInt64, segment.TypeTimestamp:
		c.ints = make([]int64, 0, pad(sz.n))
	case segment.TypeFloat64:
		c.floats = make([]float64, 0, pad(sz.n))
	case segment.TypeString:
		if sz.dict {
			c.codes = make([]headCode, 0, pad(sz.n))
		} else {
			c.dict = nil
			c.offs = make([]uint32, 1, pad(sz.n+1))
			c.packed.firstCap = pad(sz.data)
		}
	case segment.TypeArray:
		c.offs = make([]uint32, 1, pad(sz.n+1))
		c.packed.firstCap = pad(sz.data)
	}
}

func (c *headColumn) mark(row int) {
	w := row >> 6
	for len(c.present) <= w {
		c.present = append(c.present, 0)
	}
	c.present[w] |= 1 << (uint(row) & 63)
}

func (c *headColumn) addString(row int, s string) int {
	c.mark(row)
	c.n++
	if c.dict != nil {
		if int(c.lastCode) < len(c.dictStrs) && c.dictStrs[c.lastCode] == s {
			c.codes = append(c.codes, c.lastCode)
			return 1
		}
		code, ok := c.dict[s]
		if !ok {
			if len(c.dictStrs) < headDictMax {
				s = strings.Clone(s)
				code = uint32(len(c.dictStrs))
				c.dict[s] = code
				c.dictStrs = append(c.dictStrs, s)
				c.codes = append(c.codes, headCode(code))
				return len(s) + 24
			}
			c.unpack()
		} else {
			c.codes = append(c.codes, headCode(code))
			c.lastCode = headCode(code)
			return 1
		}
	}
	c.offs = append(c.offs, c.packed.add(s))
	return len(s) + 4
}

// unpack converts a dictionary-coded string column to packed bytes. Views
// taken before keep the old slices.
func (c *headColumn) unpack() {
	c.offs = make([]uint32, 1, len(c.codes)+1024)
	for _, code := range c.codes {
		c.offs = append(c.offs, c.packed.add(c.dictStrs[code]))
	}
	c.dict, c.dictStrs, c.codes = nil, nil, nil
}

// add stages one normalised event after the rows already staged; publish
// makes it visible. Strings are copied. scratch is returned for reuse.
func (h *head) add(e *event.Event, scratch []byte) []byte {
	a := h.adderFor()
	scratch = event.WalkFields(e, a, scratch)
	h.staged++
	return scratch
}

// addEncoded stages one event from its encoding (event.AppendEvent's), as
// add does, without building its value tree. An error (a malformed
// encoding) may leave some of the event's values staged: the caller takes
// the rows back out (truncate).
func (h *head) addEncoded(enc []byte) error {
	a := h.adderFor()
	rest, err := event.WalkEvent(enc, a)
	if err == nil && len(rest) != 0 {
		err = fmt.Errorf("%w: %d bytes after the event", event.ErrCorrupt, len(rest))
	}
	h.staged++ // whole or not, the row is there until truncated
	return err
}

// adderFor returns the head's adder, ready for the next row.
func (h *head) adderFor() *headAdder {
	a := &h.adder
	a.h, a.row, a.skip = h, h.rows+h.staged, 0
	a.nodes = append(a.nodes[:0], h.root)
	return a
}

// headAdder copies one event's values into a head's columns: the
// event.FieldVisitor that add and addEncoded drive. A head keeps one (its
// writers hold the head's lock).
type headAdder struct {
	h   *head
	row int
	// nodes are the trie nodes of the objects being added, the root
	// first; skip counts the objects open inside one whose column the
	// head refused (their fields are not stored either).
	nodes []*trieNode
	skip  int
	// dec decodes arrays' elements, for their element fields.
	dec event.EventDecoder
}

// Begin stages the base columns.
func (a *headAdder) Begin(id string, ts int64, msg string, hasMsg bool) {
	h, row := a.h, a.row
	tc := h.column(h.root.child("timestamp"), segment.TypeTimestamp)
	tc.mark(row)
	tc.n++
	tc.ints = append(tc.ints, ts)
	h.bytes += 8 + h.column(h.root.child("id"), segment.TypeString).addString(row, id)
	if hasMsg {
		h.bytes += h.column(h.root.child("event_message"), segment.TypeString).addString(row, msg)
	}
	h.stagedMin = min(h.stagedMin, ts)
	h.stagedMax = max(h.stagedMax, ts)
}

// Scalar stages a null (left absent), bool, int, float or string.
func (a *headAdder) Scalar(i int, key string, kind event.Kind, num uint64, str string) {
	if a.skip > 0 || kind == event.Null {
		// Normalised events carry no nulls; they are tolerated as absent.
		return
	}
	h, row := a.h, a.row
	n := a.nodes[len(a.nodes)-1].childAt(i, key)
	switch kind {
	case event.Bool:
		if c := h.column(n, segment.TypeBool); c != nil {
			c.mark(row)
			c.n++
			c.bools = append(c.bools, num != 0)
			h.bytes++
		}
	case event.Int:
		if c := h.column(n, segment.TypeInt64); c != nil {
			c.mark(row)
			c.n++
			c.ints = append(c.ints, int64(num))
			h.bytes += 8
		}
	case event.Float:
		if c := h.column(n, segment.TypeFloat64); c != nil {
			c.mark(row)
			c.n++
			c.floats = append(c.floats, math.Float64frombits(num))
			h.bytes += 8
		}
	case event.String:
		if c := h.column(n, segment.TypeString); c != nil {
			h.bytes += c.addString(row, str)
		}
	}
}

// Object marks an object present and descends into it.
func (a *headAdder) Object(i int, key string) {
	if a.skip > 0 {
		a.skip++
		return
	}
	n := a.nodes[len(a.nodes)-1].childAt(i, key)
	c := a.h.column(n, segment.TypeObject)
	if c == nil {
		a.skip = 1 // and the fields below it
		return
	}
	c.mark(a.row)
	c.n++
	a.nodes = append(a.nodes, n)
}

// EndObject leaves the object.
func (a *headAdder) EndObject() {
	if a.skip > 0 {
		a.skip--
		return
	}
	a.nodes = a.nodes[:len(a.nodes)-1]
}

// Array stages an array whole, in its encoding, and records the fields of
// its elements.
func (a *headAdder) Array(i int, key string, enc []byte) {
	if a.skip > 0 {
		return
	}
	h := a.h
	c := h.column(a.nodes[len(a.nodes)-1].childAt(i, key), segment.TypeArray)
	if c == nil {
		return
	}
	c.mark(a.row)
	c.n++
	c.offs = append(c.offs, c.packed.add(unsafe.String(unsafe.SliceData(enc), len(enc))))
	h.bytes += len(enc) + 4
	if v, _, err := a.dec.DecodeValue(enc); err == nil { // WalkEvent checked it
		for k := range v.Kids {
			collectElemFields(c.elem, "", &v.Kids[k])
		}
	}
}

// maxElemFields caps the element fields recorded for one array column (a
// schema hint for queries; the values themselves are kept whole).
const maxElemFields = 4096

// collectElemFields records the field paths and types of an array element.
func collectElemFields(set map[segment.ElemField]struct{}, prefix string, v *event.Value) {
	if len(set) >= maxElemFields || len(prefix) > segment.MaxPathLen {
		return
	}
	switch v.Kind {
	case event.Object:
		if prefix != "" {
			addElemField(set, segment.ElemField{Path: prefix, Type: segment.TypeObject})
		}
		for i := range v.Kids {
			p := v.Kids[i].Key // may alias the caller's buffer: cloned when kept
			if prefix != "" {
				p = prefix + "." + p
			}
			if _, ok := set[segment.ElemField{Path: p, Type: kindColType(v.Kids[i].Kind)}]; !ok || v.Kids[i].Kind == event.Object {
				collectElemFields(set, p, &v.Kids[i])
			}
		}
	case event.Null:
	default:
		addElemField(set, segment.ElemField{Path: prefix, Type: kindColType(v.Kind)})
	}
}

// addElemField records f, with a copy of its path when it is new.
func addElemField(set map[segment.ElemField]struct{}, f segment.ElemField) {
	if _, ok := set[f]; !ok {
		f.Path = strings.Clone(f.Path)
		set[f] = struct{}{}
	}
}

func kindColType(k event.Kind) segment.ColType {
	switch k {
	case event.Bool:
		return segment.TypeBool
	case event.Int:
		return segment.TypeInt64
	case event.Float:
		return segment.TypeFloat64
	case event.String:
		return segment.TypeString
	case event.Object:
		return segment.TypeObject
	case event.Array:
		return segment.TypeArray
	}
	return 0
}

// headView is a consistent, read-only picture of a head at some row count.
type headView struct {
	h       *head
	rows    int
	cols    []headColView
	minTime int64
	maxTime int64

	// chunkSize is the rows of the view's chunks (0: the default); every
	// view of a head must use the same (the head keeps their summaries).
	chunkSize  int
	chunksOnce sync.Once
	chunkList  []*headChunk // see chunks
}

type headColView struct {
	path string
	typ  segment.ColType
	// present holds the presence words wholly below the view's row count,
	// which alias the head (they never change again); tail is a copy of
	// the next word, masked to the view's rows (see word).
	present []uint64
	tail    uint64
	rank    []uint32 // present values before each word (built on demand)
	ints    []int64
	floats  []float64
	bools   []bool
	dict    []string
	codes   []headCode
	// slots are the packed values' slots but the last, lastSlot the last
	// one as the view was taken (see packedBytes).
	slots    [][]byte
	lastSlot []byte
	offs     []uint32
	elem     []segment.ElemField
	dictMap  bool
}

// view returns a view of the head as it is now. Callers hold no lock.
func (h *head) view() *headView {
	h.mu.RLock()
	defer h.mu.RUnlock()
	v := &headView{h: h, rows: h.rows, minTime: h.minTime, maxTime: h.maxTime}
	v.cols = make([]headColView, len(h.cols))
	full := h.rows >> 6
	for i, c := range h.cols {
		cv := headColView{path: c.path, typ: c.typ, ints: c.ints, floats: c.floats, bools: c.bools,
			dict: c.dictStrs, codes: c.codes, offs: c.offs}
		if n := len(c.packed.slots); n > 0 {
			cv.slots, cv.lastSlot = c.packed.slots[:n-1:n-1], c.packed.slots[n-1]
		}
		cv.dictMap = c.dict != nil
		// Words wholly below the row count never change again; the next
		// one is still written (and may hold staged rows): copy it.
		cv.present = c.present[:min(full, len(c.present))]
		if rem := uint(h.rows) & 63; rem != 0 && full < len(c.present) {
			cv.tail = c.present[full] & (1<<rem - 1)
		}
		if c.typ == segment.TypeArray {
			for ef := range c.elem {
				cv.elem = append(cv.elem, ef)
			}
		}
		v.cols[i] = cv
	}
	return v
}

// word returns presence word w of the view (zero past its rows).
func (c *headColView) word(w int) uint64 {
	if w < len(c.present) {
		return c.present[w]
	}
	if w == len(c.present) {
		return c.tail
	}
	return 0
}

// has reports whether row has a value.
func (c *headColView) has(row int) bool { return c.word(row>>6)&(1<<(uint(row)&63)) != 0 }

// countBits counts the rows of [from, to) that have a value.
func (c *headColView) countBits(from, to int) uint32 {
	if from >= to {
		return 0
	}
	n := 0
	fw, lw := from>>6, (to-1)>>6
	for w := fw; w <= lw && w <= len(c.present); w++ {
		x := c.word(w)
		if w == fw {
			x &^= (1 << (uint(from) & 63)) - 1
		}
		if w == lw && to&63 != 0 {
			x &= (1 << (uint(to) & 63)) - 1
		}
		n += bits.OnesCount64(x)
	}
	return uint32(n)
}

// buildRank fills the per-word prefix counts used to find a row's value.
// It writes the view: only its owner may call it (flush), never a scan,
// whose units read one view concurrently.
func (c *headColView) buildRank() {
	if c.rank != nil {
		return
	}
	words := len(c.present) + 1
	c.rank = make([]uint32, words+1)
	for i := 0; i < words; i++ {
		c.rank[i+1] = c.rank[i] + uint32(bits.OnesCount64(c.word(i)))
	}
}

// valueIndex returns the packed value index of row, or -1 if absent.
// buildRank must have been called.
func (c *headColView) valueIndex(row int) int {
	w := row >> 6
	if w > len(c.present) {
		return -1
	}
	bit := uint64(1) << (uint(row) & 63)
	word := c.word(w)
	if word&bit == 0 {
		return -1
	}
	return int(c.rank[w]) + bits.OnesCount64(word&(bit-1))
}

func (c *headColView) str(k int) string {
	if c.dictMap {
		return c.dict[c.codes[k]]
	}
	b := packedAt(c.slots, c.lastSlot, c.offs[k], c.offs[k+1])
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

// isDict reports whether string values are dictionary codes.
func (c *headColView) isDict() bool { return c.dictMap }

func growSlice[T any](s []T, n int) []T {
	if cap(s) >= n {
		s = s[:n]
		clear(s)
		return s
	}
	return make([]T, n)
}
