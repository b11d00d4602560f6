package sql

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"strings"
	"unsafe"

	"github.com/sediment/sediment/internal/vec"
)

// aggOp is a hash aggregation. Groups are numbered in order of first
// appearance; keys and aggregate states live in per-group arrays.
type aggOp struct {
	q      *queryRun
	in     operator
	node   *AggregateNode
	keys   []evaluator
	ktypes []ColType
	aggs   []*aggAcc

	ngroups int
	kvals   []*colBuilder
	// Group lookup: a single integer-like key, a single string key, or the
	// encoded bytes of several keys.
	intGroups map[int64]int32
	strGroups *strTable
	// singleStr: one STRING key, kept in strGroups only (not in kvals).
	singleStr bool
	nullGroup int32
	lastInt   int64
	lastGroup int32

	done bool
	out  *vec.Batch

	mem   memAccount
	zeros []int32 // the group ids of a global aggregate's rows
}

func newAggOp(q *queryRun, n *AggregateNode, in operator) (operator, error) {
	lay := layoutOf(n.In.Cols())
	o := &aggOp{q: q, in: in, node: n, nullGroup: -1, lastGroup: -1, mem: q.account()}
	for _, k := range n.Keys {
		ev, err := compile(k, lay)
		if err != nil {
			return nil, err
		}
		o.keys = append(o.keys, ev)
		o.ktypes = append(o.ktypes, k.Type())
		o.kvals = append(o.kvals, newColBuilder(k.Type()))
	}
	for _, a := range n.Aggs {
		acc, err := newAggAcc(a, lay)
		if err != nil {
			return nil, err
		}
		o.aggs = append(o.aggs, acc)
	}
	if len(o.keys) == 0 {
		o.addGroup() // a global aggregate has one row even over no input
	}
	o.singleStr = len(o.ktypes) == 1 && (o.ktypes[0].V == vec.String || o.ktypes[0].V == vec.JSON)
	return o, nil
}

func (o *aggOp) addGroup() int32 {
	g := int32(o.ngroups)
	o.ngroups++
	for _, a := range o.aggs {
		a.grow(o.ngroups)
	}
	return g
}

func isIntLike(t vec.Type) bool {
	switch t {
	case vec.Int64, vec.Timestamp, vec.Datetime, vec.Date, vec.Bool:
		return true
	}
	return false
}

// groupIDs assigns each selected row of b its group.
func (o *aggOp) groupIDs(ec *evalCtx, b *vec.Batch) ([]int32, error) {
	rows := rowsOf(b.Sel, b.Len)
	if len(o.keys) == 0 {
		// Every row is group 0; the ids are only read.
		if len(o.zeros) < b.Len {
			o.zeros = make([]int32, b.Len)
		}
		return o.zeros[:b.Len], nil
	}
	gids := make([]int32, b.Len)
	kv := make([]*vec.Vector, len(o.keys))
	for i, k := range o.keys {
		v, err := k(ec, b, b.Sel)
		if err != nil {
			return nil, err
		}
		kv[i] = v
	}
	newGroup := func(r int) int32 {
		g := o.addGroup()
		for i, v := range kv {
			o.kvals[i].add(v, r)
		}
		return g
	}
	if len(kv) == 1 && isIntLike(o.ktypes[0].V) {
		v := kv[0]
		if o.intGroups == nil {
			o.intGroups = map[int64]int32{}
		}
		for _, r := range rows {
			i := int(r)
			if v.IsNull(i) {
				if o.nullGroup < 0 {
					o.nullGroup = newGroup(i)
				}
				gids[i] = o.nullGroup
				continue
			}
			var x int64
			if v.Type == vec.Bool {
				x = b2i(v.BoolAt(i))
			} else {
				x = v.IntAt(i)
			}
			// Time buckets over time-sorted rows repeat: check the last one.
			if o.lastGroup >= 0 && x == o.lastInt {
				gids[i] = o.lastGroup
				continue
			}
			g, ok := o.intGroups[x]
			if !ok {
				g = newGroup(i)
				o.intGroups[x] = g
			}
			o.lastInt, o.lastGroup = x, g
			gids[i] = g
		}
		return gids, nil
	}
	if o.strGroups == nil {
		o.strGroups = newStrTable()
	}
	if len(kv) == 1 && (o.ktypes[0].V == vec.String || o.ktypes[0].V == vec.JSON) {
		// The key lives in strGroups only; next builds the key column
		// from it.
		v := kv[0]
		nullGroup := func() int32 {
			if o.nullGroup < 0 {
				o.nullGroup = o.addGroup()
			}
			return o.nullGroup
		}
		if v.Dict != nil && !v.Const {
			// One table lookup per dictionary entry, then an array.
			codeGroup := make([]int32, len(v.Dict))
			for i := range codeGroup {
				codeGroup[i] = -1
			}
			for _, r := range rows {
				i := int(r)
				if v.IsNull(i) {
					gids[i] = nullGroup()
					continue
				}
				c := v.Codes[i]
				g := codeGroup[c]
				if g < 0 {
					g = o.strGroups.lookup(v.Dict[c], o.addGroup)
					codeGroup[c] = g
				}
				gids[i] = g
			}
			return gids, nil
		}
		for _, r := range rows {
			i := int(r)
			if v.IsNull(i) {
				gids[i] = nullGroup()
				continue
			}
			gids[i] = o.strGroups.lookup(v.StringAt(i), o.addGroup)
		}
		return gids, nil
	}
	// Several keys: encode them.
	var buf []byte
	for _, r := range rows {
		i := int(r)
		buf = buf[:0]
		for k, v := range kv {
			buf = appendKey(buf, v, i, o.ktypes[k].V)
		}
		// The table copies the key: buf is reused.
		gids[i] = o.strGroups.lookup(unsafe.String(unsafe.SliceData(buf), len(buf)), func() int32 { return newGroup(i) })
	}
	return gids, nil
}

// appendKey encodes one key value unambiguously.
func appendKey(buf []byte, v *vec.Vector, i int, t vec.Type) []byte {
	if v.IsNull(i) {
		return append(buf, 0)
	}
	buf = append(buf, 1)
	switch t {
	case vec.String, vec.JSON:
		s := v.StringAt(i)
		buf = binary.AppendUvarint(buf, uint64(len(s)))
		return append(buf, s...)
	case vec.Float64:
		f := v.FloatAt(i)
		if f == 0 {
			f = 0 // -0 groups with 0
		}
		return binary.LittleEndian.AppendUint64(buf, math.Float64bits(f))
	case vec.Bool:
		return append(buf, byte(b2i(v.BoolAt(i))))
	}
	return binary.LittleEndian.AppendUint64(buf, uint64(v.IntAt(i)))
}

// countRows adds to cnt[group] the selected rows of b where v is not NULL
// (count) or TRUE (countif): the loop of every chart query, kept free of
// per-row calls.
func countRows(v *vec.Vector, b *vec.Batch, gids []int32, cnt []int64, ifTrue bool) {
	plain := !v.Const && v.Nulls == nil && (!ifTrue || v.Bools != nil)
	count := func(i int) {
		if plain {
			if !ifTrue || v.Bools[i] {
				cnt[gids[i]]++
			}
			return
		}
		if !v.IsNull(i) && (!ifTrue || v.BoolAt(i)) {
			cnt[gids[i]]++
		}
	}
	if b.Sel != nil {
		for _, r := range b.Sel {
			count(int(r))
		}
		return
	}
	if plain && ifTrue {
		for i, t := range v.Bools[:b.Len] {
			if t {
				cnt[gids[i]]++
			}
		}
		return
	}
	for i := range b.Len {
		count(i)
	}
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

func (o *aggOp) next(ec *evalCtx) (*vec.Batch, error) {
	if !o.done {
		o.done = true
		if err := o.consume(ec); err != nil {
			return nil, err
		}
		out := &vec.Batch{Len: o.ngroups}
		if o.singleStr {
			if o.strGroups == nil {
				o.strGroups = newStrTable()
			}
			out.Cols = append(out.Cols, o.strGroups.keyVector(o.ktypes[0].V, o.ngroups, o.nullGroup))
		} else {
			for _, kb := range o.kvals {
				out.Cols = append(out.Cols, kb.finish())
			}
		}
		for _, a := range o.aggs {
			v, err := a.finish(o.ngroups)
			if err != nil {
				return nil, err
			}
			out.Cols = append(out.Cols, v)
		}
		if err := o.mem.resize(o.stateBytes() + batchBytes(out, nil)); err != nil {
			return nil, err
		}
		o.out = out
	}
	out := o.out
	// The groups are the consumer's now (their keys live on in the
	// output's strings, which a consumer that keeps them charges).
	o.release()
	if out == nil || out.Len == 0 {
		return nil, nil
	}
	return out, nil
}

// consume reads the input into the groups, keeping the charge at what the
// groups hold after every batch.
func (o *aggOp) consume(ec *evalCtx) error {
	for {
		if err := ec.ctx.Err(); err != nil {
			return err
		}
		b, err := o.in.next(ec)
		if err != nil {
			return err
		}
		if b == nil {
			return nil
		}
		rows := b.Rows()
		if rows == 0 {
			continue
		}
		var gids []int32
		for _, a := range o.aggs {
			if a.call.Star && len(o.keys) == 0 {
				a.cnt[0] += int64(rows) // COUNT(*) of a global aggregate
				continue
			}
			if gids == nil {
				if gids, err = o.groupIDs(ec, b); err != nil {
					return err
				}
			}
			if err := a.update(ec, b, gids); err != nil {
				return err
			}
		}
		if len(o.aggs) == 0 || len(o.keys) > 0 && gids == nil {
			if _, err := o.groupIDs(ec, b); err != nil {
				return err
			}
		}
		if err := o.mem.resize(o.stateBytes()); err != nil {
			return err
		}
	}
}

// stateBytes is the heap of the groups: lookup tables, keys, aggregate
// states.
func (o *aggOp) stateBytes() int64 {
	var n int64
	if o.strGroups != nil {
		n += o.strGroups.bytes()
	}
	n += int64(len(o.intGroups)) * intMapEntry
	for _, kb := range o.kvals {
		n += kb.bytes()
	}
	for _, a := range o.aggs {
		n += a.bytes()
	}
	return n + int64(cap(o.zeros))*4
}

// intMapEntry estimates the heap of one entry of a map[int64]int32: a
// 12-byte slot padded to 16, control bytes, and the table's free slots
// (between 1/8 and 9/16 of them).
const intMapEntry = 40

// release lets go of the groups and their charge.
func (o *aggOp) release() {
	o.out, o.kvals, o.intGroups, o.strGroups, o.aggs, o.zeros = nil, nil, nil, nil, nil, nil
	o.mem.clear()
}

func (o *aggOp) close() {
	o.in.close()
	o.release()
}

// ---------------------------------------------------------------------------
// Column builder: appends values of one type.

type colBuilder struct {
	t     ColType
	v     *vec.Vector
	nulls []bool
	// chunk holds copies of string values: one allocation per 64 KiB of
	// keys instead of one per group.
	chunk []byte
	// cloned counts the bytes of every chunk and of strings cloned alone.
	cloned int64
}

// bytes is the heap the builder holds.
func (cb *colBuilder) bytes() int64 {
	v := cb.v
	return int64(cap(cb.nulls)+cap(v.Bools)+8*cap(v.Ints)+8*cap(v.Floats)+stringHeader*cap(v.Strs)) + cb.cloned
}

// clone copies s into the builder's current chunk.
func (cb *colBuilder) clone(s string) string {
	if len(s) == 0 || len(s) > 4<<10 {
		cb.cloned += int64(len(s))
		return strings.Clone(s)
	}
	if cap(cb.chunk)-len(cb.chunk) < len(s) {
		cb.chunk = make([]byte, 0, 64<<10)
		cb.cloned += 64 << 10
	}
	start := len(cb.chunk)
	cb.chunk = append(cb.chunk, s...)
	return unsafe.String(&cb.chunk[start], len(s))
}

func newColBuilder(t ColType) *colBuilder {
	return &colBuilder{t: t, v: &vec.Vector{Type: t.V}}
}

func (cb *colBuilder) add(src *vec.Vector, i int) {
	null := src.IsNull(i)
	cb.nulls = append(cb.nulls, null)
	v := cb.v
	switch cb.t.V {
	case vec.Bool:
		v.Bools = append(v.Bools, !null && src.BoolAt(i))
	case vec.Float64:
		f := 0.0
		if !null {
			f = src.FloatAt(i)
		}
		v.Floats = append(v.Floats, f)
	case vec.String, vec.JSON:
		s := ""
		if !null {
			s = cb.clone(src.StringAt(i))
		}
		v.Strs = append(v.Strs, s)
	case vec.Unknown:
	default:
		x := int64(0)
		if !null {
			x = src.IntAt(i)
		}
		v.Ints = append(v.Ints, x)
	}
	v.Len++
}

func (cb *colBuilder) finish() *vec.Vector {
	v := cb.v
	if v.Type == vec.Unknown {
		return allNullVector(cb.t, v.Len)
	}
	for i, n := range cb.nulls {
		if n {
			setNull(v, i)
		}
	}
	return v
}

// ---------------------------------------------------------------------------
// Aggregate accumulators

type aggAcc struct {
	call *AggCall
	arg  evaluator
	t    vec.Type // argument type

	cnt   []int64
	ints  []int64
	flts  []float64
	strs  []string
	bools []bool
	has   []bool
	vals  [][]any             // approx_quantiles, array_agg, string_agg
	sets  []map[valueKey]bool // DISTINCT
	// ARRAY_AGG/STRING_AGG ... ORDER BY: the key evaluators and, per group,
	// the keys of each value in vals.
	keyEvs []evaluator
	keys   [][][]any
	// held counts what the per-group slices above do not show: string
	// payloads, collected values, DISTINCT sets.
	held int64
}

// bytes is the heap the accumulator holds.
func (a *aggAcc) bytes() int64 {
	n := int64(cap(a.cnt)*8+cap(a.ints)*8+cap(a.flts)*8+cap(a.strs)*stringHeader+cap(a.bools)+cap(a.has)) +
		int64(cap(a.vals)+cap(a.keys))*sliceHeader + int64(cap(a.sets))*8
	return n + a.held
}

// Estimates of what one collected value, one set entry and one ORDER BY
// key list hold.
const (
	aggValueBytes = 16 + 8      // an interface and its boxed scalar
	setEntryBytes = 40 + 1 + 23 // a valueKey and a bool in a map slot, with the table's free slots
	aggKeysBytes  = sliceHeader // a key list's header, plus aggValueBytes a key
)

func newAggAcc(a *AggCall, lay layout) (*aggAcc, error) {
	acc := &aggAcc{call: a}
	if len(a.Args) > 0 {
		ev, err := compile(a.Args[0], lay)
		if err != nil {
			return nil, err
		}
		acc.arg = ev
		acc.t = a.Args[0].Type().V
	}
	for _, k := range a.orderKeys() {
		ev, err := compile(k, lay)
		if err != nil {
			return nil, err
		}
		acc.keyEvs = append(acc.keyEvs, ev)
	}
	return acc, nil
}

func (a *aggAcc) grow(n int) {
	for len(a.has) < n {
		a.has = append(a.has, false)
		a.cnt = append(a.cnt, 0)
		a.ints = append(a.ints, 0)
		a.flts = append(a.flts, 0)
		a.strs = append(a.strs, "")
		a.bools = append(a.bools, false)
		if a.vals != nil || needsVals(a.call) {
			a.vals = append(a.vals, nil)
		}
		if len(a.keyEvs) > 0 {
			a.keys = append(a.keys, nil)
		}
		if a.call.Distinct {
			a.sets = append(a.sets, nil)
		}
	}
}

func needsVals(c *AggCall) bool {
	switch c.Name {
	case "approx_quantiles", "array_agg", "string_agg":
		return true
	}
	return false
}

func (a *aggAcc) update(ec *evalCtx, b *vec.Batch, gids []int32) error {
	c := a.call
	if c.Star {
		b.ForEach(func(i int) { a.cnt[gids[i]]++ })
		return nil
	}
	v, err := a.arg(ec, b, b.Sel)
	if err != nil {
		return err
	}
	if !c.Distinct && (c.Name == "countif" || c.Name == "count") {
		countRows(v, b, gids, a.cnt, c.Name == "countif")
		return nil
	}
	keyVecs := make([]*vec.Vector, len(a.keyEvs))
	for k, ev := range a.keyEvs {
		if keyVecs[k], err = ev(ec, b, b.Sel); err != nil {
			return err
		}
	}
	var failed error
	b.ForEach(func(i int) {
		if failed != nil || v.IsNull(i) {
			if c.Name == "array_agg" && !c.IgnoreNulls && failed == nil && v.IsNull(i) {
				failed = fmt.Errorf("Array cannot have a null element; error in writing field ARRAY_AGG")
			}
			return
		}
		g := gids[i]
		if c.Distinct || c.Name == "approx_count_distinct" {
			if a.sets == nil {
				a.sets = make([]map[valueKey]bool, len(a.has))
			}
			for len(a.sets) <= int(g) {
				a.sets = append(a.sets, nil)
			}
			if a.sets[g] == nil {
				a.sets[g] = map[valueKey]bool{}
			}
			k := keyOf(v, i)
			if a.sets[g][k] {
				return
			}
			if k.t == vec.String {
				k.s = strings.Clone(k.s)
				a.held += int64(len(k.s))
			}
			a.sets[g][k] = true
			a.held += setEntryBytes
		}
		switch c.Name {
		case "count", "approx_count_distinct":
			a.cnt[g]++
		case "countif":
			if v.BoolAt(i) {
				a.cnt[g]++
			}
		case "sum":
			switch v.Type {
			case vec.Float64:
				a.flts[g] += v.FloatAt(i)
			case vec.Bool:
				a.ints[g] += b2i(v.BoolAt(i))
			default:
				x := v.IntAt(i)
				s := a.ints[g] + x
				if (x > 0 && s < a.ints[g]) || (x < 0 && s > a.ints[g]) {
					failed = fmt.Errorf("int64 overflow: SUM")
					return
				}
				a.ints[g] = s
			}
			a.has[g] = true
		case "avg":
			if v.Type == vec.Float64 {
				a.flts[g] += v.FloatAt(i)
			} else {
				a.flts[g] += float64(v.IntAt(i))
			}
			a.cnt[g]++
		case "min", "max":
			a.minMax(g, v, i, c.Name == "max")
		case "any_value":
			if !a.has[g] {
				a.set(g, v, i)
			}
		case "logical_and":
			if !a.has[g] {
				a.bools[g] = true
			}
			a.bools[g] = a.bools[g] && v.BoolAt(i)
			a.has[g] = true
		case "logical_or":
			a.bools[g] = a.bools[g] || v.BoolAt(i)
			a.has[g] = true
		case "approx_quantiles", "array_agg", "string_agg":
			x := scalarOf(v, i)
			a.vals[g] = append(a.vals[g], x)
			a.held += aggValueBytes
			if s, ok := x.(string); ok {
				a.held += int64(len(s))
			}
			if len(keyVecs) > 0 {
				ks := make([]any, len(keyVecs))
				for k, kv := range keyVecs {
					if !kv.IsNull(i) {
						ks[k] = scalarOf(kv, i)
						if s, ok := ks[k].(string); ok {
							a.held += int64(len(s))
						}
					}
				}
				a.keys[g] = append(a.keys[g], ks)
				a.held += aggKeysBytes + int64(len(keyVecs))*aggValueBytes
			}
			a.has[g] = true
		}
	})
	return failed
}

// scalarOf extracts a value as int64, float64, bool or string.
func scalarOf(v *vec.Vector, i int) any {
	switch v.Type {
	case vec.String, vec.JSON:
		return strings.Clone(v.StringAt(i))
	case vec.Float64:
		return v.FloatAt(i)
	case vec.Bool:
		return v.BoolAt(i)
	}
	return v.IntAt(i)
}

func (a *aggAcc) set(g int32, v *vec.Vector, i int) {
	switch v.Type {
	case vec.String, vec.JSON:
		a.held -= int64(len(a.strs[g]))
		a.strs[g] = strings.Clone(v.StringAt(i))
		a.held += int64(len(a.strs[g]))
	case vec.Float64:
		a.flts[g] = v.FloatAt(i)
	case vec.Bool:
		a.bools[g] = v.BoolAt(i)
	default:
		a.ints[g] = v.IntAt(i)
	}
	a.has[g] = true
}

func (a *aggAcc) minMax(g int32, v *vec.Vector, i int, isMax bool) {
	if !a.has[g] {
		a.set(g, v, i)
		return
	}
	var c int
	switch v.Type {
	case vec.String, vec.JSON:
		c = strings.Compare(v.StringAt(i), a.strs[g])
	case vec.Float64:
		x := v.FloatAt(i)
		switch {
		case x != x:
			// BigQuery: NaN is smaller than everything for MIN, ignored? treat as smallest.
			c = -1
		case x < a.flts[g]:
			c = -1
		case x > a.flts[g]:
			c = 1
		}
	case vec.Bool:
		c = int(b2i(v.BoolAt(i)) - b2i(a.bools[g]))
	default:
		x := v.IntAt(i)
		switch {
		case x < a.ints[g]:
			c = -1
		case x > a.ints[g]:
			c = 1
		}
	}
	if (isMax && c > 0) || (!isMax && c < 0) {
		a.set(g, v, i)
	}
}

func (a *aggAcc) finish(n int) (*vec.Vector, error) {
	c := a.call
	out := newVector(c.T, n)
	switch c.Name {
	case "count", "countif", "approx_count_distinct":
		copy(out.Ints, a.cnt[:n])
		return out, nil
	case "avg":
		for g := 0; g < n; g++ {
			if a.cnt[g] == 0 {
				setNull(out, g)
			} else {
				out.Floats[g] = a.flts[g] / float64(a.cnt[g])
			}
		}
		return out, nil
	case "approx_quantiles", "array_agg", "string_agg":
		return a.finishValues(n)
	}
	for g := 0; g < n; g++ {
		if !a.has[g] {
			setNull(out, g)
			continue
		}
		switch out.Type {
		case vec.Float64:
			if c.Name == "sum" && a.t != vec.Float64 {
				out.Floats[g] = float64(a.ints[g])
			} else {
				out.Floats[g] = a.flts[g]
			}
		case vec.String, vec.JSON:
			out.Strs[g] = a.strs[g]
		case vec.Bool:
			out.Bools[g] = a.bools[g]
		default:
			out.Ints[g] = a.ints[g]
		}
	}
	return out, nil
}

// orderValues sorts each group's values by the ORDER BY keys (stable:
// ties keep arrival order) and keeps the first LIMIT.
func (a *aggAcc) orderValues(n int) {
	c := a.call
	for g := 0; g < n; g++ {
		vals := a.vals[g]
		if len(a.keyEvs) > 0 && len(vals) > 1 {
			keys := a.keys[g]
			idx := make([]int, len(vals))
			for i := range idx {
				idx[i] = i
			}
			slices.SortStableFunc(idx, func(x, y int) int {
				for k := range a.keyEvs {
					if r := compareAggKey(keys[x][k], keys[y][k], c.OrderDesc[k], c.OrderNullsLast[k]); r != 0 {
						return r
					}
				}
				return 0
			})
			sorted := make([]any, len(vals))
			for i, j := range idx {
				sorted[i] = vals[j]
			}
			vals = sorted
		}
		if c.Limit >= 0 && int64(len(vals)) > c.Limit {
			vals = vals[:c.Limit]
		}
		a.vals[g] = vals
	}
}

// compareAggKey orders one ARRAY_AGG/STRING_AGG key (nil is NULL).
func compareAggKey(x, y any, desc, nullsLast bool) int {
	switch {
	case x == nil && y == nil:
		return 0
	case x == nil:
		if nullsLast {
			return 1
		}
		return -1
	case y == nil:
		if nullsLast {
			return -1
		}
		return 1
	}
	r := compareAny(x, y)
	if desc {
		r = -r
	}
	return r
}

func (a *aggAcc) finishValues(n int) (*vec.Vector, error) {
	c := a.call
	if c.Name != "approx_quantiles" {
		a.orderValues(n)
	}
	if c.Name == "string_agg" {
		out := newVector(c.T, n)
		for g := 0; g < n; g++ {
			if len(a.vals[g]) == 0 {
				setNull(out, g)
				continue
			}
			parts := make([]string, len(a.vals[g]))
			for i, x := range a.vals[g] {
				parts[i] = fmt.Sprint(x)
			}
			out.Strs[g] = strings.Join(parts, c.Sep)
		}
		return out, nil
	}
	et := ColType{V: c.T.Elem}
	var flat []any
	offsets := make([]int32, n+1)
	var nulls vec.Bitset
	for g := 0; g < n; g++ {
		vals := a.vals[g]
		if len(vals) == 0 {
			if nulls == nil {
				nulls = vec.NewBitset(n)
			}
			nulls.Set(g)
			offsets[g+1] = int32(len(flat))
			continue
		}
		if c.Name == "approx_quantiles" {
			slices.SortFunc(vals, compareAny)
			k := int(c.Param)
			for q := 0; q <= k; q++ {
				idx := int(math.Round(float64(q) * float64(len(vals)-1) / float64(k)))
				flat = append(flat, vals[idx])
			}
		} else {
			flat = append(flat, vals...)
		}
		offsets[g+1] = int32(len(flat))
	}
	elem := newVector(et, len(flat))
	for i, x := range flat {
		switch y := x.(type) {
		case int64:
			if elem.Type == vec.Float64 {
				elem.Floats[i] = float64(y)
			} else {
				elem.Ints[i] = y
			}
		case float64:
			elem.Floats[i] = y
		case bool:
			elem.Bools[i] = y
		case string:
			elem.Strs[i] = y
		}
	}
	return &vec.Vector{Type: vec.List, Len: n, Offsets: offsets, Elem: elem, Nulls: nulls}, nil
}

func compareAny(x, y any) int {
	switch a := x.(type) {
	case int64:
		return cmp.Compare(a, y.(int64))
	case float64:
		// Not cmp.Compare: that orders NaN first, where this has always
		// left NaN unordered (equal to everything).
		b := y.(float64)
		switch {
		case a < b:
			return -1
		case a > b:
			return 1
		}
		return 0
	case string:
		return strings.Compare(a, y.(string))
	case bool:
		return int(b2i(a) - b2i(y.(bool)))
	}
	return 0
}

// distinctOp removes duplicate rows. It keeps every distinct row's encoded
// key, charged to the query.
type distinctOp struct {
	q    *queryRun
	in   operator
	seen *strTable
	ts   []vec.Type
	mem  memAccount
	buf  []byte
}

func newDistinctOp(q *queryRun, n *DistinctNode, in operator) operator {
	o := &distinctOp{q: q, in: in, seen: newStrTable(), mem: q.account()}
	for _, c := range n.Cols() {
		o.ts = append(o.ts, c.T.V)
	}
	return o
}

func (o *distinctOp) next(ec *evalCtx) (*vec.Batch, error) {
	for {
		if err := ec.ctx.Err(); err != nil {
			return nil, err
		}
		b, err := o.in.next(ec)
		if err != nil || b == nil {
			return nil, err
		}
		var keep []int32
		b.ForEach(func(i int) {
			buf := o.buf[:0]
			for c, v := range b.Cols {
				buf = appendKey(buf, v, i, o.ts[c])
			}
			o.buf = buf
			isNew := false
			// The table copies the key: buf is reused.
			o.seen.lookup(unsafe.String(unsafe.SliceData(buf), len(buf)), func() int32 {
				isNew = true
				return 0
			})
			if isNew {
				keep = append(keep, int32(i))
			}
		})
		if err := o.mem.resize(o.seen.bytes()); err != nil {
			return nil, err
		}
		if len(keep) > 0 {
			return &vec.Batch{Len: b.Len, Sel: keep, Cols: b.Cols}, nil
		}
	}
}

func (o *distinctOp) close() {
	o.in.close()
	o.seen = nil
	o.mem.clear()
}
