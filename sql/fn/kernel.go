package fn

import (
	"errors"
	"fmt"
	"strings"

	"github.com/sediment/sediment/internal/vec"
)

// This file holds the machinery every function shares: the kernel wrapper
// that applies bind-time coercions, folds constant arguments, short-cuts
// NULL constants and evaluates dictionary-encoded strings once per entry;
// vector builders; the per-row loop with NULL and SAFE handling; and the
// bind-time helpers that check argument types.

// conv adapts one argument vector before a kernel sees it: the implicit
// coercions chosen at bind time (INT64 to FLOAT64, a STRING literal parsed
// as a TIMESTAMP, a record materialised as JSON text, ...).
type conv func(ec *EvalCtx, v *vec.Vector, sel []int32, n int) (*vec.Vector, error)

// kernel is a bound function before it is wrapped into a Bound.
type kernel struct {
	typ  vec.Type
	elem vec.Type
	// convs[i] adapts argument i (nil: use it as is).
	convs []conv
	eval  EvalFunc
	// strict: a NULL in any argument makes the row NULL. Enables the
	// constant-NULL short cut and per-dictionary-entry evaluation.
	strict bool
	// volatile functions (RAND, GENERATE_UUID) are never folded.
	volatile bool
	// dictArg is the argument that may be evaluated once per dictionary
	// entry when it is dictionary encoded and every other argument is
	// constant; -1 disables it.
	dictArg int
}

// newKernel returns a strict kernel whose first argument may be evaluated
// per dictionary entry.
func newKernel(typ vec.Type, eval EvalFunc) *kernel {
	return &kernel{typ: typ, eval: eval, strict: true, dictArg: 0}
}

func (k *kernel) bound() *Bound {
	return &Bound{Type: k.typ, Elem: k.elem, Eval: k.run}
}

func (k *kernel) run(ec *EvalCtx, args []*vec.Vector, sel []int32, n int) (*vec.Vector, error) {
	if len(k.convs) > 0 {
		conved := make([]*vec.Vector, len(args))
		copy(conved, args)
		for i, c := range k.convs {
			if c == nil || i >= len(args) || args[i] == nil {
				continue
			}
			v, err := c(ec, args[i], sel, n)
			if err != nil {
				return nil, err
			}
			conved[i] = v
		}
		args = conved
	}
	if k.strict {
		for _, a := range args {
			// A NULL constant, or a vector of untyped NULLs, makes every row NULL.
			if a != nil && ((a.Const && a.IsNull(0)) || a.Type == vec.Unknown) {
				return constNull(k.typ, k.elem, n), nil
			}
		}
	}
	if !k.volatile && allConst(args) {
		if n == 0 || (sel != nil && len(sel) == 0) {
			return constNull(k.typ, k.elem, n), nil
		}
		r, err := k.eval(ec, args, nil, 1)
		if err != nil {
			return nil, err
		}
		return asConst(r, n), nil
	}
	if k.strict && k.dictArg >= 0 && k.dictArg < len(args) {
		if r, ok, err := k.perEntry(ec, args, sel, n); ok {
			return r, err
		}
	}
	return k.eval(ec, args, sel, n)
}

func allConst(args []*vec.Vector) bool {
	for _, a := range args {
		if a != nil && !a.Const {
			return false
		}
	}
	return true
}

// asConst turns a one-row result into a constant vector of n rows.
func asConst(r *vec.Vector, n int) *vec.Vector {
	c := *r
	c.Const = true
	c.Len = n
	return &c
}

// perEntry evaluates the kernel once per distinct dictionary entry used by
// the selected rows and gathers the results per row. ok is false when the
// shape does not fit (then the caller evaluates row by row).
func (k *kernel) perEntry(ec *EvalCtx, args []*vec.Vector, sel []int32, n int) (*vec.Vector, bool, error) {
	d := args[k.dictArg]
	if d == nil || d.Dict == nil || d.Const {
		return nil, false, nil
	}
	for i, a := range args {
		if i != k.dictArg && a != nil && !a.Const {
			return nil, false, nil
		}
	}
	rows := selCount(sel, n)
	// A dictionary much larger than the batch costs more to scan than the
	// rows themselves.
	if len(d.Dict) > 2*rows+64 {
		return nil, false, nil
	}
	slot := make([]int32, len(d.Dict)) // entry index + 1; 0 = unused
	entries := make([]string, 0, min(len(d.Dict), rows))
	codes, nulls := d.Codes, d.Nulls
	// NULL rows' codes are not values: they must not be evaluated.
	switch {
	case sel == nil && !d.HasNulls():
		for _, c := range codes[:n] {
			if slot[c] == 0 {
				entries = append(entries, d.Dict[c])
				slot[c] = int32(len(entries))
			}
		}
	case sel == nil:
		for i, c := range codes[:n] {
			if slot[c] == 0 && !nulls.Get(i) {
				entries = append(entries, d.Dict[c])
				slot[c] = int32(len(entries))
			}
		}
	default:
		for _, i := range sel {
			if c := codes[i]; slot[c] == 0 && !(nulls != nil && nulls.Get(int(i))) {
				entries = append(entries, d.Dict[c])
				slot[c] = int32(len(entries))
			}
		}
	}
	if len(entries) == 0 {
		return constNull(k.typ, k.elem, n), true, nil
	}
	sub := &vec.Vector{Type: d.Type, Len: len(entries), Strs: entries}
	args2 := make([]*vec.Vector, len(args))
	copy(args2, args)
	args2[k.dictArg] = sub
	r, err := k.eval(ec, args2, nil, len(entries))
	if err != nil {
		return nil, true, err
	}
	return gatherEntries(r, slot, d, sel, n), true, nil
}

// gatherEntries builds the per-row result from per-entry results r: row i
// takes entry slot[d.Codes[i]]-1 (slot 0: the code is not used by a selected
// non-NULL row). String results stay dictionary encoded.
func gatherEntries(r *vec.Vector, slot []int32, d *vec.Vector, sel []int32, n int) *vec.Vector {
	codes := d.Codes
	// Plain results without NULLs are gathered through a table whose slot 0
	// is a filler, for every row (rows outside sel may hold anything), so
	// that the loop has no branches.
	if !r.Const && r.Dict == nil && !r.HasNulls() {
		all := sel == nil || len(sel)*4 >= n
		gather := func(set func(i int, e int32)) {
			if all {
				for i := 0; i < n; i++ {
					set(i, slot[codes[i]])
				}
				return
			}
			for _, i := range sel {
				set(int(i), slot[codes[i]])
			}
		}
		switch t := r.Type; {
		case t == vec.Bool:
			tbl := append([]bool{false}, r.Bools[:r.Len]...)
			out := &vec.Vector{Type: t, Len: n, Bools: make([]bool, n), Nulls: d.Nulls}
			if all {
				for i, c := range codes[:n] {
					out.Bools[i] = tbl[slot[c]]
				}
			} else {
				gather(func(i int, e int32) { out.Bools[i] = tbl[e] })
			}
			return out
		case t == vec.String || t == vec.JSON:
			dict := make([]string, r.Len+1)
			for e := 0; e < r.Len; e++ {
				dict[e+1] = r.StringAt(e)
			}
			out := &vec.Vector{Type: t, Len: n, Codes: make([]uint32, n), Dict: dict, Nulls: d.Nulls}
			gather(func(i int, e int32) { out.Codes[i] = uint32(e) })
			return out
		case t == vec.Float64:
			tbl := append([]float64{0}, r.Floats[:r.Len]...)
			out := &vec.Vector{Type: t, Len: n, Floats: make([]float64, n), Nulls: d.Nulls}
			gather(func(i int, e int32) { out.Floats[i] = tbl[e] })
			return out
		case t.UsesInts():
			tbl := append([]int64{0}, r.Ints[:r.Len]...)
			out := &vec.Vector{Type: t, Len: n, Ints: make([]int64, n), Nulls: d.Nulls}
			gather(func(i int, e int32) { out.Ints[i] = tbl[e] })
			return out
		}
	}
	entryOf := func(i int) int { return int(slot[codes[i]]) - 1 }
	rowNull := func(i int) bool {
		return (d.Nulls != nil && d.Nulls.Get(i)) || r.IsNull(entryOf(i))
	}
	if r.Type == vec.List {
		lb := newListBuilder(r.Elem.Type, n)
		var nulls vec.Bitset
		next := 0
		for i := 0; i < n; i++ {
			selected := sel == nil
			if !selected && next < len(sel) && int(sel[next]) == i {
				selected = true
				next++
			}
			if selected {
				if rowNull(i) {
					if nulls == nil {
						nulls = vec.NewBitset(n)
					}
					nulls.Set(i)
				} else {
					lb.appendRange(r, entryOf(i))
				}
			}
			lb.endRow()
		}
		out := lb.finish(n)
		out.Nulls = nulls
		return out
	}
	out := newVec(r.Type, n)
	forRows(sel, n, func(i int) {
		if rowNull(i) {
			setNull(out, i)
			return
		}
		copyValue(out, i, r, entryOf(i))
	})
	return out
}

// copyValue copies row j of src into row i of dst (same scalar type).
func copyValue(dst *vec.Vector, i int, src *vec.Vector, j int) {
	switch {
	case dst.Type == vec.Bool:
		dst.Bools[i] = src.BoolAt(j)
	case dst.Type == vec.Float64:
		dst.Floats[i] = src.FloatAt(j)
	case dst.Type == vec.String || dst.Type == vec.JSON:
		dst.Strs[i] = src.StringAt(j)
	case dst.Type.UsesInts():
		dst.Ints[i] = src.IntAt(j)
	}
}

// constNull returns a constant NULL vector of n rows.
func constNull(t, elem vec.Type, n int) *vec.Vector {
	v := vec.ConstNull(t, n)
	if t == vec.List {
		v.Offsets = []int32{0, 0}
		v.Elem = newVec(elem, 0)
	}
	return v
}

// newVec returns a vector of type t with n zero rows.
func newVec(t vec.Type, n int) *vec.Vector {
	v := &vec.Vector{Type: t, Len: n}
	switch {
	case t == vec.Bool:
		v.Bools = make([]bool, n)
	case t == vec.Float64:
		v.Floats = make([]float64, n)
	case t == vec.String || t == vec.JSON:
		v.Strs = make([]string, n)
	case t.UsesInts():
		v.Ints = make([]int64, n)
	case t == vec.List:
		v.Offsets = make([]int32, n+1)
		v.Elem = &vec.Vector{Type: vec.Unknown}
	}
	return v
}

// setNull marks row i of v NULL, allocating the bitset on first use.
func setNull(v *vec.Vector, i int) {
	if v.Nulls == nil {
		v.Nulls = vec.NewBitset(v.Len)
	}
	v.Nulls.Set(i)
}

// unionNulls returns the NULL rows of any of the vectors (constant vectors
// are assumed non-NULL: the strict short cut handled NULL constants), or nil.
func unionNulls(n int, vs ...*vec.Vector) vec.Bitset {
	var out vec.Bitset
	for _, v := range vs {
		if v == nil || v.Const || !v.HasNulls() {
			continue
		}
		if out == nil {
			out = vec.NewBitset(n)
		}
		for w := 0; w < len(out) && w < len(v.Nulls); w++ {
			out[w] |= v.Nulls[w]
		}
	}
	return out
}

// selCount is the number of rows to compute.
func selCount(sel []int32, n int) int {
	if sel != nil {
		return len(sel)
	}
	return n
}

// forRows calls f for every row to compute.
func forRows(sel []int32, n int, f func(i int)) {
	if sel != nil {
		for _, i := range sel {
			f(int(i))
		}
		return
	}
	for i := 0; i < n; i++ {
		f(i)
	}
}

// errNull, returned by a row body, makes the row NULL without an error.
var errNull = errors.New("null row")

// rowLoop calls body for every row to compute whose arguments are all
// non-NULL; rows with a NULL argument become NULL in out. A body error
// makes the row NULL when it is errNull or in safe mode, and otherwise
// stops the loop.
func rowLoop(out *vec.Vector, args []*vec.Vector, sel []int32, n int, safe bool, body func(i int) error) error {
	var nullable []*vec.Vector
	for _, a := range args {
		if a == nil {
			continue
		}
		if (a.Const && a.IsNull(0)) || (!a.Const && a.HasNulls()) {
			nullable = append(nullable, a)
		}
	}
	row := func(i int) error {
		for _, a := range nullable {
			if a.IsNull(i) {
				setNull(out, i)
				return nil
			}
		}
		if err := body(i); err != nil {
			if err == errNull || safe {
				setNull(out, i)
				return nil
			}
			return err
		}
		return nil
	}
	if sel != nil {
		for _, i := range sel {
			if err := row(int(i)); err != nil {
				return err
			}
		}
		return nil
	}
	for i := 0; i < n; i++ {
		if err := row(i); err != nil {
			return err
		}
	}
	return nil
}

// anyNullAt reports whether row i of any argument is NULL.
func anyNullAt(args []*vec.Vector, i int) bool {
	for _, a := range args {
		if a != nil && a.IsNull(i) {
			return true
		}
	}
	return false
}

// listRange returns the element range of row i of a List vector.
func listRange(v *vec.Vector, i int) (int, int) {
	if v.Const {
		i = 0
	}
	return int(v.Offsets[i]), int(v.Offsets[i+1])
}

// listBuilder builds a List vector row by row.
type listBuilder struct {
	offsets []int32
	elem    *vec.Vector
	nElem   int
}

func newListBuilder(elem vec.Type, n int) *listBuilder {
	b := &listBuilder{offsets: make([]int32, 1, n+1), elem: &vec.Vector{Type: elem}}
	return b
}

// endRow closes the current row.
func (b *listBuilder) endRow() { b.offsets = append(b.offsets, int32(b.nElem)) }

// appendRange appends the elements of row i of the List vector src.
func (b *listBuilder) appendRange(src *vec.Vector, i int) {
	lo, hi := listRange(src, i)
	for j := lo; j < hi; j++ {
		b.appendFrom(src.Elem, j)
	}
}

// appendFrom appends row j of src (a scalar, Struct or List vector) as one
// element.
func (b *listBuilder) appendFrom(src *vec.Vector, j int) {
	appendElem(b.elem, src, j)
	b.nElem++
}

func (b *listBuilder) appendString(s string) {
	b.elem.Strs = append(b.elem.Strs, s)
	b.nElem++
}

func (b *listBuilder) appendInt(x int64) {
	b.elem.Ints = append(b.elem.Ints, x)
	b.nElem++
}

func (b *listBuilder) appendFloat(x float64) {
	b.elem.Floats = append(b.elem.Floats, x)
	b.nElem++
}

// appendNull appends a NULL element.
func (b *listBuilder) appendNull() {
	appendZero(b.elem)
	setBit(&b.elem.Nulls, b.nElem)
	b.nElem++
}

// finish returns the List vector of n rows.
func (b *listBuilder) finish(n int) *vec.Vector {
	b.elem.Len = b.nElem
	return &vec.Vector{Type: vec.List, Len: n, Offsets: b.offsets, Elem: b.elem}
}

// setBit sets bit i of a growable bitset.
func setBit(bs *vec.Bitset, i int) {
	for len(*bs) <= i>>6 {
		*bs = append(*bs, 0)
	}
	bs.Set(i)
}

// appendZero appends a zero payload slot to dst.
func appendZero(dst *vec.Vector) {
	switch t := dst.Type; {
	case t == vec.Bool:
		dst.Bools = append(dst.Bools, false)
	case t == vec.Float64:
		dst.Floats = append(dst.Floats, 0)
	case t == vec.String || t == vec.JSON:
		dst.Strs = append(dst.Strs, "")
	case t.UsesInts():
		dst.Ints = append(dst.Ints, 0)
	case t == vec.List:
		if len(dst.Offsets) == 0 {
			dst.Offsets = append(dst.Offsets, 0)
		}
		dst.Offsets = append(dst.Offsets, dst.Offsets[len(dst.Offsets)-1])
		if dst.Elem == nil {
			dst.Elem = &vec.Vector{}
		}
	case t == vec.Struct:
		for _, c := range dst.Children {
			appendZero(c)
			c.Len++
		}
	}
}

// appendElem appends row j of src to the growable vector dst (payload slices
// grow; dst.Len is not maintained here for the top level).
func appendElem(dst, src *vec.Vector, j int) {
	at := dstLen(dst)
	if src.IsNull(j) {
		appendZero(dst)
		setBit(&dst.Nulls, at)
		return
	}
	switch t := dst.Type; {
	case t == vec.Bool:
		dst.Bools = append(dst.Bools, src.BoolAt(j))
	case t == vec.Float64:
		dst.Floats = append(dst.Floats, src.FloatAt(j))
	case t == vec.String || t == vec.JSON:
		dst.Strs = append(dst.Strs, src.StringAt(j))
	case t.UsesInts():
		dst.Ints = append(dst.Ints, src.IntAt(j))
	case t == vec.List:
		if len(dst.Offsets) == 0 {
			dst.Offsets = append(dst.Offsets, 0)
		}
		if dst.Elem == nil {
			dst.Elem = &vec.Vector{Type: src.Elem.Type}
		}
		lo, hi := listRange(src, j)
		for k := lo; k < hi; k++ {
			appendElem(dst.Elem, src.Elem, k)
			dst.Elem.Len++
		}
		dst.Offsets = append(dst.Offsets, int32(dst.Elem.Len))
	case t == vec.Struct:
		if dst.Children == nil {
			dst.Names = src.Names
			dst.Children = make([]*vec.Vector, len(src.Children))
			for c, sc := range src.Children {
				dst.Children[c] = &vec.Vector{Type: sc.Type}
			}
		}
		jj := j
		if src.Const {
			jj = 0
		}
		for c, sc := range src.Children {
			appendElem(dst.Children[c], sc, jj)
			dst.Children[c].Len++
		}
	}
}

// dstLen is the number of payload slots of a growable vector.
func dstLen(v *vec.Vector) int {
	switch t := v.Type; {
	case t == vec.Bool:
		return len(v.Bools)
	case t == vec.Float64:
		return len(v.Floats)
	case t == vec.String || t == vec.JSON:
		return len(v.Strs)
	case t.UsesInts():
		return len(v.Ints)
	case t == vec.List:
		if len(v.Offsets) == 0 {
			return 0
		}
		return len(v.Offsets) - 1
	case t == vec.Struct:
		if len(v.Children) > 0 {
			return v.Children[0].Len
		}
	}
	return v.Len
}

// ---- bind-time helpers ----

// tPart is the pseudo type of a date part argument (Arg.Part) in
// signatures given to match.
const tPart vec.Type = 250

// typeName names an argument's type the way error messages show it.
func typeName(a Arg) string {
	switch {
	case a.Part != "":
		return "DATE_TIME_PART"
	case a.Type == vec.List:
		if a.Elem == vec.Unknown {
			return "ARRAY<STRUCT>"
		}
		return "ARRAY<" + a.Elem.String() + ">"
	case a.Type == vec.RowRef:
		return "STRUCT"
	}
	return a.Type.String()
}

// sigError is the error for arguments of the wrong types.
func sigError(name string, args []Arg) error {
	names := make([]string, len(args))
	for i, a := range args {
		names[i] = typeName(a)
	}
	what := "function " + name
	if isOperatorName(name) {
		what = "operator " + name
	}
	return fmt.Errorf("No matching signature for %s for argument types: %s", what, strings.Join(names, ", "))
}

func isOperatorName(name string) bool {
	if name == "" {
		return false
	}
	c := name[0]
	return !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c == '_') || name == "LIKE" ||
		strings.HasPrefix(name, "IS ")
}

// arityError is the error for a wrong number of arguments.
func arityError(name string) error {
	return fmt.Errorf("Number of arguments does not match for function %s", name)
}

// checkArity checks that lo <= len(args) <= hi.
func checkArity(name string, args []Arg, lo, hi int) error {
	if len(args) < lo || len(args) > hi {
		return arityError(name)
	}
	return nil
}

// match checks args against the signature types (the last len(types)-min
// are optional) and returns the coercions to apply.
func match(name string, args []Arg, minArgs int, types ...vec.Type) ([]conv, error) {
	if err := checkArity(name, args, minArgs, len(types)); err != nil {
		return nil, err
	}
	convs := make([]conv, len(args))
	for i, a := range args {
		c, err := coerceArg(name, args, a, types[i])
		if err != nil {
			return nil, err
		}
		convs[i] = c
	}
	return convs, nil
}

// coerceArg returns the coercion that turns a into type t, or an error
// naming the function when it cannot.
func coerceArg(name string, args []Arg, a Arg, t vec.Type) (conv, error) {
	if t == tPart {
		if a.Part == "" {
			return nil, sigError(name, args)
		}
		return nil, nil
	}
	if a.Part != "" {
		return nil, sigError(name, args)
	}
	if a.Type == t || a.Type == vec.Unknown {
		return nil, nil
	}
	switch {
	case t == vec.Float64 && a.Type == vec.Int64:
		return convIntToFloat, nil
	case t == vec.Datetime && a.Type == vec.Date:
		return convDateToDatetime, nil
	case (t == vec.Timestamp || t == vec.Datetime || t == vec.Date) && a.Type == vec.String:
		return stringToTimeConv(a, t)
	}
	return nil, sigError(name, args)
}

// stringToTimeConv coerces a STRING argument to a date/time type: a
// constant is parsed once at bind time (as BigQuery coerces literals); a
// column is cast row by row.
func stringToTimeConv(a Arg, t vec.Type) (conv, error) {
	if a.Const != nil && !a.Const.Null {
		x, err := parseTimeLiteral(a.Const.Str, t)
		if err != nil {
			return nil, fmt.Errorf("Could not cast literal %q to type %s", a.Const.Str, t)
		}
		return func(_ *EvalCtx, _ *vec.Vector, _ []int32, n int) (*vec.Vector, error) {
			return vec.ConstInt(t, x, n), nil
		}, nil
	}
	c := castKernel(vec.String, t, false)
	return func(ec *EvalCtx, v *vec.Vector, sel []int32, n int) (*vec.Vector, error) {
		return c.run(ec, []*vec.Vector{v}, sel, n)
	}, nil
}

// parseTimeLiteral parses s as a value of the date/time type t.
func parseTimeLiteral(s string, t vec.Type) (int64, error) {
	switch t {
	case vec.Timestamp:
		return ParseTimestamp(s)
	case vec.Datetime:
		return ParseDatetime(s)
	default:
		return ParseDate(s)
	}
}

// convIntToFloat turns an INT64 vector into FLOAT64.
func convIntToFloat(_ *EvalCtx, v *vec.Vector, sel []int32, n int) (*vec.Vector, error) {
	if v.Type != vec.Int64 {
		return v, nil
	}
	if v.Const {
		out := vec.ConstFloat(float64(v.Ints[0]), n)
		out.Nulls = v.Nulls
		return out, nil
	}
	out := &vec.Vector{Type: vec.Float64, Len: n, Floats: make([]float64, n), Nulls: v.Nulls}
	if sel != nil && len(sel)*2 < n {
		for _, i := range sel {
			out.Floats[i] = float64(v.Ints[i])
		}
		return out, nil
	}
	for i, x := range v.Ints[:n] {
		out.Floats[i] = float64(x)
	}
	return out, nil
}

// convDateToDatetime turns a DATE vector into DATETIME (midnight).
func convDateToDatetime(_ *EvalCtx, v *vec.Vector, sel []int32, n int) (*vec.Vector, error) {
	if v.Type != vec.Date {
		return v, nil
	}
	if v.Const {
		out := vec.ConstInt(vec.Datetime, v.Ints[0]*microsPerDay, n)
		out.Nulls = v.Nulls
		return out, nil
	}
	out := &vec.Vector{Type: vec.Datetime, Len: n, Ints: make([]int64, n), Nulls: v.Nulls}
	for i, x := range v.Ints[:n] {
		out.Ints[i] = x * microsPerDay
	}
	return out, nil
}

// constString returns the value of a constant STRING argument; ok is false
// when the argument is not a constant (NULL counts as constant: isNull).
func constString(a Arg) (s string, isNull, ok bool) {
	if a.Const == nil {
		return "", false, false
	}
	if a.Const.Null || a.Type == vec.Unknown {
		return "", true, true
	}
	return a.Const.Str, false, true
}

// takesDatePart lists the functions with a date part argument; every other
// function rejects one (its vector would be nil).
var takesDatePart = map[string]bool{
	"timestamp_trunc": true, "datetime_trunc": true, "date_trunc": true,
	"timestamp_diff": true, "datetime_diff": true, "date_diff": true,
	"extract": true, "last_day": true,
}

// register adds a function under name and its aliases; bind receives the
// upper-case name the query used, for error messages.
func register(name string, bind func(name string, args []Arg, info BindInfo) (*Bound, error), aliases ...string) {
	parts := takesDatePart[name]
	for _, n := range append([]string{name}, aliases...) {
		upper := strings.ToUpper(n)
		Register(&Func{Name: n, Bind: func(args []Arg, info BindInfo) (*Bound, error) {
			if !parts {
				for _, a := range args {
					if a.Part != "" {
						return nil, sigError(upper, args)
					}
				}
			}
			return bind(upper, args, info)
		}})
	}
}
