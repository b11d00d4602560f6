// The matcher (Compile, Matcher) evaluates the filter rules of an LQL query against one
// event in process, for source drop rules, routing rules and live tail. It
// implements the semantics of ToSQL's translation, so that an event is
// dropped or tailed exactly when the SQL search would return it:
//
//   - Top-level paths read the event's own fields: event_message is
//     Event.Message (NULL without a message), id is Event.ID, timestamp is
//     Event.Timestamp; any other name is a member of Event.Fields.
//   - A dotted path walks objects: `metadata.a.b` reads member b of member a
//     of metadata. Where a step is an array of objects, each element is tried
//     (as CROSS JOIN UNNEST would), and the clauses under one array must hold
//     for the same element, since ToSQL shares one unnest per path prefix. A
//     missing step, or one that is no object, reads as NULL (LEFT JOIN).
//   - NULL (an absent or null value) fails every positive clause but
//     `:NULL`; a negated clause holds on NULL (`-f:v` is `f IS NULL OR NOT
//     f = v`), except `-f:NULL`. Under an array of objects a negation is
//     per element too: `-m.items.name:x` holds when some item is not named x.
//   - Numbers compare numerically across integers and floats. A number and
//     a string compare as text (the string column rule of
//     docs/compat/logflare.md §9.4). Timestamp and datetime operands on
//     nested fields compare with ISO-8601 strings.
//   - Comparisons, ranges and regular expressions are internal/predicate's,
//     as the SQL evaluator's and pushed-down filters' are: NaN compares
//     with nothing, regexes are RE2 (Go's regexp) compiled once, and
//     patterns that are or contain plain literals run as substring searches.
//
// Chart, select and from rules do not filter and are ignored.

package lql

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/sediment/sediment/event"
	"github.com/sediment/sediment/internal/predicate"
)

// Matcher is a compiled LQL filter. It is immutable and safe for
// concurrent use.
type Matcher struct {
	top   []clause // clauses on top-level paths
	roots []*node  // one tree per top-level object that dotted paths walk
}

// node is one step of dotted paths: the clauses whose field is a member of
// this step's object, and the deeper steps.
type node struct {
	name     string
	clauses  []clause
	children []*node
}

// source says where a top-level clause reads its value.
type source uint8

const (
	fromMember source = iota // a member of the current object
	fromMessage
	fromID
	fromTimestamp
)

type clause struct {
	name     string // member name of the leaf
	src      source
	op       Op
	ord      predicate.Op // op as a comparison (OpEq … OpLte)
	negate   bool
	nullTest bool
	val      operand
	vals     []operand
	re       *predicate.Regex
}

// operand is a filter value prepared for comparison.
type operand struct {
	kind Kind
	i    int64
	f    float64
	b    bool
	s    string // the string, or the text of a number or boolean
}

// Compile prepares q's filters for matching. It fails only on filters a
// parse never produces (unknown operators, malformed regexes).
func Compile(q *Query) (*Matcher, error) {
	m := &Matcher{}
	if q == nil {
		return m, nil
	}
	nodes := make(map[string]*node)
	for i := range q.Filters {
		f := &q.Filters[i]
		c, err := compileClause(f)
		if err != nil {
			return nil, fmt.Errorf("lql match: filter on %s: %w", f.Path, err)
		}
		dot := strings.LastIndexByte(f.Path, '.')
		if dot < 0 {
			c.name = f.Path
			switch f.Path {
			case "event_message":
				c.src = fromMessage
			case "id":
				c.src = fromID
			case "timestamp":
				c.src = fromTimestamp
			}
			m.top = append(m.top, c)
			continue
		}
		if dot == 0 || dot == len(f.Path)-1 {
			return nil, fmt.Errorf("lql match: invalid field path %q", f.Path)
		}
		c.name = f.Path[dot+1:]
		var parent *node
		for start := 0; start <= dot; {
			end := start + strings.IndexByte(f.Path[start:], '.')
			if end == start {
				return nil, fmt.Errorf("lql match: invalid field path %q", f.Path)
			}
			prefix := f.Path[:end]
			n := nodes[prefix]
			if n == nil {
				n = &node{name: f.Path[start:end]}
				nodes[prefix] = n
				if parent == nil {
					m.roots = append(m.roots, n)
				} else {
					parent.children = append(parent.children, n)
				}
			}
			parent = n
			start = end + 1
		}
		parent.clauses = append(parent.clauses, c)
	}
	return m, nil
}

func compileClause(f *Filter) (clause, error) {
	c := clause{op: f.Op, ord: ordOps[f.Op], negate: f.Negate, nullTest: f.IsNullTest()}
	switch f.Op {
	case OpEq, OpGt, OpGte, OpLt, OpLte, OpArrayContains:
		if f.Value.Kind == KindNull && f.Op != OpEq {
			return c, fmt.Errorf("NULL needs the `:` operator")
		}
		c.val = newOperand(f.Value)
	case OpRange:
		if len(f.Values) != 2 {
			return c, fmt.Errorf("a range needs two values, got %d", len(f.Values))
		}
		c.vals = []operand{newOperand(f.Values[0]), newOperand(f.Values[1])}
	case OpIn:
		if len(f.Values) == 0 {
			return c, fmt.Errorf("IN needs values")
		}
		for _, v := range f.Values {
			c.vals = append(c.vals, newOperand(v))
		}
	case OpContains, OpRegex, OpArrayRegex:
		if f.Value.Kind != KindString {
			return c, fmt.Errorf("operator %s needs a string", f.Op)
		}
		c.val = newOperand(f.Value)
		if f.Op != OpContains {
			re, err := predicate.CompileRegex(f.Value.Str)
			if err != nil {
				return c, err
			}
			c.re = re
		}
	default:
		return c, fmt.Errorf("unknown operator %s", f.Op)
	}
	return c, nil
}

// ordOps are the comparison operators as internal/predicate's.
var ordOps = map[Op]predicate.Op{OpEq: predicate.Eq, OpGt: predicate.Gt, OpGte: predicate.Ge, OpLt: predicate.Lt, OpLte: predicate.Le}

func newOperand(v Value) operand {
	o := operand{kind: v.Kind, i: v.Int, f: v.Float, b: v.Bool, s: v.Str}
	switch v.Kind {
	case KindInt:
		o.s = strconv.FormatInt(v.Int, 10)
	case KindFloat:
		o.s = strconv.FormatFloat(v.Float, 'f', -1, 64)
	case KindBool:
		o.s = strconv.FormatBool(v.Bool)
	}
	return o
}

// Match reports whether e satisfies every filter.
func (m *Matcher) Match(e *event.Event) bool {
	for i := range m.top {
		if !m.top[i].evalTop(e) {
			return false
		}
	}
	for _, n := range m.roots {
		if !n.match(&e.Fields) {
			return false
		}
	}
	return true
}

// match evaluates the subtree under n with parent as the enclosing object
// (nil when the enclosing step was NULL).
func (n *node) match(parent *event.Value) bool {
	var v *event.Value
	if parent != nil {
		v = parent.Get(n.name)
	}
	if v != nil {
		switch v.Kind {
		case event.Object:
			return n.matchElem(v)
		case event.Array:
			sawObject := false
			for i := range v.Kids {
				k := &v.Kids[i]
				if k.Kind != event.Object {
					continue
				}
				sawObject = true
				if n.matchElem(k) {
					return true
				}
			}
			if sawObject {
				return false
			}
		}
	}
	return n.matchElem(nil) // no element: the LEFT JOIN's NULL row
}

// matchElem evaluates n's clauses and deeper steps on one element.
func (n *node) matchElem(elem *event.Value) bool {
	for i := range n.clauses {
		c := &n.clauses[i]
		var leaf *event.Value
		if elem != nil {
			leaf = elem.Get(c.name)
		}
		if !c.eval(leaf) {
			return false
		}
	}
	for _, ch := range n.children {
		if !ch.match(elem) {
			return false
		}
	}
	return true
}

func (c *clause) evalTop(e *event.Event) bool {
	switch c.src {
	case fromMessage:
		if !e.HasMessage {
			return c.eval(nil)
		}
		v := event.Value{Kind: event.String, Str: e.Message}
		return c.eval(&v)
	case fromID:
		if e.ID == "" {
			return c.eval(nil)
		}
		v := event.Value{Kind: event.String, Str: e.ID}
		return c.eval(&v)
	case fromTimestamp:
		if c.nullTest {
			return c.negate // the timestamp is never NULL
		}
		return c.testTimestamp(e.Timestamp) != c.negate
	}
	return c.eval(e.Fields.Get(c.name))
}

// eval applies the clause to a value, nil meaning absent.
func (c *clause) eval(v *event.Value) bool {
	isNull := v == nil || v.Kind == event.Null
	if c.nullTest {
		return isNull != c.negate
	}
	if isNull {
		return c.negate
	}
	return c.test(v) != c.negate
}

// test is the positive clause on a non-NULL value.
func (c *clause) test(v *event.Value) bool {
	switch c.op {
	case OpEq, OpGt, OpGte, OpLt, OpLte:
		r, ok := compare(v, &c.val)
		return ok && predicate.HoldsOrder(c.ord, r)
	case OpRange:
		lo, ok1 := compare(v, &c.vals[0])
		hi, ok2 := compare(v, &c.vals[1])
		return ok1 && ok2 && predicate.HoldsOrder(predicate.Ge, lo) && predicate.HoldsOrder(predicate.Le, hi)
	case OpIn:
		for i := range c.vals {
			if r, ok := compare(v, &c.vals[i]); ok && r == 0 {
				return true
			}
		}
		return false
	case OpContains:
		return v.Kind == event.String && strings.Contains(v.Str, c.val.s)
	case OpRegex:
		return v.Kind == event.String && c.matchString(v.Str)
	case OpArrayContains:
		if v.Kind != event.Array {
			return false
		}
		for i := range v.Kids {
			if r, ok := compare(&v.Kids[i], &c.val); ok && r == 0 {
				return true
			}
		}
		return false
	case OpArrayRegex:
		if v.Kind != event.Array {
			return false
		}
		for i := range v.Kids {
			if k := &v.Kids[i]; k.Kind == event.String && c.matchString(k.Str) {
				return true
			}
		}
		return false
	}
	return false
}

func (c *clause) matchString(s string) bool { return c.re.Match(s) }

func (c *clause) testTimestamp(us int64) bool {
	switch c.op {
	case OpEq, OpGt, OpGte, OpLt, OpLte:
		r, ok := compareMicros(us, &c.val)
		return ok && predicate.HoldsOrder(c.ord, r)
	case OpRange:
		lo, ok1 := compareMicros(us, &c.vals[0])
		hi, ok2 := compareMicros(us, &c.vals[1])
		return ok1 && ok2 && predicate.HoldsOrder(predicate.Ge, lo) && predicate.HoldsOrder(predicate.Le, hi)
	case OpIn:
		for i := range c.vals {
			if r, ok := compareMicros(us, &c.vals[i]); ok && r == 0 {
				return true
			}
		}
	}
	return false
}

func compareMicros(us int64, o *operand) (int, bool) {
	if o.kind != KindTimestamp && o.kind != KindInt {
		return 0, false
	}
	return predicate.CompareInt(us, o.i), true
}

// compare orders an event value against an operand: -1, 0, +1, or
// predicate.Unordered for a NaN; ok is false when the two cannot be
// compared (a record against a number, say).
func compare(v *event.Value, o *operand) (int, bool) {
	switch o.kind {
	case KindInt:
		switch v.Kind {
		case event.Int:
			return predicate.CompareInt(v.Int(), o.i), true
		case event.Float:
			return predicate.CompareFloat(v.Float(), float64(o.i)), true
		case event.String:
			return strings.Compare(v.Str, o.s), true
		}
	case KindFloat:
		switch v.Kind {
		case event.Int:
			return predicate.CompareFloat(float64(v.Int()), o.f), true
		case event.Float:
			return predicate.CompareFloat(v.Float(), o.f), true
		case event.String:
			return strings.Compare(v.Str, o.s), true
		}
	case KindString:
		switch v.Kind {
		case event.String:
			return strings.Compare(v.Str, o.s), true
		case event.Int:
			var buf [24]byte
			return compareText(strconv.AppendInt(buf[:0], v.Int(), 10), o.s), true
		case event.Float:
			var buf [32]byte
			return compareText(strconv.AppendFloat(buf[:0], v.Float(), 'g', -1, 64), o.s), true
		case event.Bool:
			return strings.Compare(strconv.FormatBool(v.Bool()), o.s), true
		}
	case KindBool:
		switch v.Kind {
		case event.Bool:
			return predicate.CompareInt(int64(b2i(v.Bool())), int64(b2i(o.b))), true
		case event.String:
			return strings.Compare(v.Str, o.s), true
		}
	case KindTimestamp, KindDatetime:
		if v.Kind == event.String {
			if us, ok := parseTime(v.Str); ok {
				return predicate.CompareInt(us, o.i), true
			}
		}
	}
	return 0, false
}

// parseTime reads an ISO-8601 string from an event as microseconds since
// the epoch: with an offset, the instant; without one, read as UTC, which is
// also how DATETIME operands count their civil time.
func parseTime(s string) (int64, bool) {
	for _, layout := range [...]string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UnixMicro(), true
		}
	}
	return 0, false
}

// compareText is strings.Compare for a byte slice, without converting it.
func compareText(b []byte, s string) int {
	n := min(len(b), len(s))
	for i := 0; i < n; i++ {
		if b[i] != s[i] {
			if b[i] < s[i] {
				return -1
			}
			return 1
		}
	}
	return predicate.CompareInt(int64(len(b)), int64(len(s)))
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
