package sql

import (
	"math"
	"strconv"
	"strings"

	"github.com/sediment/sediment/internal/vec"
	"github.com/sediment/sediment/sql/fn"
	"github.com/sediment/sediment/sql/parser"
)

// winCtx collects the window calls of one SELECT (its SELECT list, QUALIFY
// and ORDER BY); they become one WindowNode.
type winCtx struct {
	funcs []*WindowFunc
}

// add registers a call, or returns the identical one already registered.
func (w *winCtx) add(f *WindowFunc) *WindowFunc {
	key := f.String()
	for _, g := range w.funcs {
		if g.T == f.T && g.String() == key {
			return g
		}
	}
	w.funcs = append(w.funcs, f)
	return f
}

// windowNode wraps n in a WindowNode computing the collected calls (n
// itself when there are none).
func (w *winCtx) windowNode(n Node) Node {
	if w == nil || len(w.funcs) == 0 {
		return n
	}
	return &WindowNode{In: n, Funcs: w.funcs}
}

// windowFuncKind groups the window functions by the rules their OVER clause
// follows.
type windowFuncKind uint8

const (
	winNumbering  windowFuncKind = iota + 1 // row_number, rank, ...: no frame
	winOffset                               // lag, lead: ORDER BY, no frame
	winValue                                // first_value, last_value, nth_value: ORDER BY and a frame
	winAggregate                            // aggregate functions: optional ORDER BY and frame
	winPercentile                           // percentile_cont, percentile_disc: whole partitions only
)

var windowFuncKinds = map[string]windowFuncKind{
	"row_number": winNumbering, "rank": winNumbering, "dense_rank": winNumbering,
	"percent_rank": winNumbering, "cume_dist": winNumbering, "ntile": winNumbering,
	"lag": winOffset, "lead": winOffset,
	"first_value": winValue, "last_value": winValue, "nth_value": winValue,
	"percentile_cont": winPercentile, "percentile_disc": winPercentile,
}

// frameAggregates are the aggregates computed over any frame; the others
// (and DISTINCT) only over a whole partition.
var frameAggregates = map[string]bool{
	"count": true, "countif": true, "sum": true, "avg": true, "min": true, "max": true,
	"any_value": true, "logical_and": true, "logical_or": true,
}

// bindWindowCall binds `f(...) OVER (...)`: the call becomes a column of the
// SELECT's WindowNode and the expression a reference to it. Its arguments,
// PARTITION BY and ORDER BY are bound in the scope the call appears in
// (after aggregation, in a grouped query), where no other window call may
// appear.
func (b *binder) bindWindowCall(e *parser.FuncCall, name string, safe bool, sc *scope) (Expr, error) {
	if sc.win == nil {
		if sc.winErr != "" {
			return nil, errAt(e.At, "%s", sc.winErr)
		}
		if sc.clause == "aggregate" {
			return nil, errAt(e.At, "Analytic function not allowed in aggregate function arguments")
		}
		return nil, errAt(e.At, "Analytic function not allowed in %s", clauseName(sc))
	}
	kind, ok := windowFuncKinds[name]
	if !ok {
		switch {
		case aggregateNames[name]:
			kind = winAggregate
		case fnExists(name):
			return nil, errAt(e.At, "Function %s does not support an OVER clause", strings.ToUpper(name))
		default:
			return nil, errAt(e.At, "Function not found: %s", name)
		}
	}
	if safe {
		return nil, errAt(e.At, "SAFE. is not supported for analytic function %s", name)
	}
	w := e.Over
	// The OVER clause rules, in BigQuery's order.
	needsOrder := kind == winOffset || kind == winValue || kind == winNumbering && name != "row_number"
	if needsOrder && len(w.OrderBy) == 0 {
		return nil, errAt(w.At, "Window ORDER BY is required for analytic function %s", name)
	}
	if kind == winPercentile && len(w.OrderBy) > 0 {
		return nil, errAt(w.OrderBy[0].At, "Window ORDER BY is not allowed for analytic function %s", name)
	}
	if w.Frame != nil && (kind == winNumbering || kind == winOffset || kind == winPercentile) {
		return nil, errAt(w.Frame.At, "Window framing clause is not allowed for analytic function %s", name)
	}
	if e.Distinct {
		if len(e.Args) == 0 {
			return nil, errAt(e.At, "DISTINCT function call with no arguments not possible")
		}
		if kind != winAggregate {
			return nil, errAt(e.At, "DISTINCT is not allowed for analytic function %s", name)
		}
		if len(w.OrderBy) > 0 {
			return nil, errAt(w.OrderBy[0].At, "Window ORDER BY is not allowed if DISTINCT is specified")
		}
		if w.Frame != nil {
			return nil, errAt(w.Frame.At, "Window framing clause is not allowed if DISTINCT is specified")
		}
	}
	if e.Nulls != parser.NullsUnspecified && kind != winValue && kind != winPercentile {
		return nil, errAt(e.At, "IGNORE NULLS and RESPECT NULLS are not allowed for analytic function %s", name)
	}
	if e.OrderBy != nil || e.Limit != nil {
		return nil, errAt(e.At, "ORDER BY and LIMIT inside the arguments of analytic function %s are not supported", name)
	}

	base := *sc
	base.win = nil
	argScope := base
	argScope.winErr = "Analytic function cannot be an argument of another analytic function"
	f := &WindowFunc{Name: name, Star: e.Star, Distinct: e.Distinct, IgnoreNulls: e.Nulls == parser.IgnoreNulls, RespectNulls: e.Nulls == parser.RespectNulls}
	if err := b.bindWindowArgs(f, e, kind, &argScope); err != nil {
		return nil, err
	}

	partScope := base
	partScope.winErr = "Analytic function not allowed in PARTITION BY"
	for _, p := range w.PartitionBy {
		x, err := b.bindExpr(p, &partScope)
		if err != nil {
			return nil, err
		}
		switch x.Type().V {
		case vec.Float64, vec.RowRef, vec.List:
			return nil, errAt(p.Pos(), "Partitioning by expressions of type %s is not allowed", x.Type())
		}
		f.Partition = append(f.Partition, x)
	}
	orderScope := base
	orderScope.winErr = "Analytic function not allowed in Window ORDER BY"
	for _, o := range w.OrderBy {
		x, err := b.bindExpr(o.Expr, &orderScope)
		if err != nil {
			return nil, err
		}
		switch x.Type().V {
		case vec.RowRef, vec.List:
			return nil, errAt(o.Expr.Pos(), "Ordering by expressions of type %s is not allowed", x.Type())
		}
		f.Order = append(f.Order, sortKey(x, o))
	}
	if kind == winValue || kind == winAggregate {
		fr, err := b.bindFrame(w, f.Order, &base)
		if err != nil {
			return nil, err
		}
		f.Frame = fr
		if kind == winAggregate && (f.Distinct || !frameAggregates[name]) && !fr.wholePartition() {
			return nil, errAt(w.At, "%s as an analytic function is supported only over a whole partition (no window ORDER BY or frame)", strings.ToUpper(name))
		}
	}
	f = sc.win.add(f)
	if f.Out.ID == 0 {
		f.Out = b.newCol(name, f.T)
	}
	return &ColRef{ID: f.Out.ID, T: f.T, Name: f.Out.Name}, nil
}

func fnExists(name string) bool {
	_, ok := fn.Lookup(name)
	return ok
}

// bindWindowArgs binds a call's arguments and sets its result type.
func (b *binder) bindWindowArgs(f *WindowFunc, e *parser.FuncCall, kind windowFuncKind, sc *scope) error {
	upper := strings.ToUpper(f.Name)
	if e.Star && f.Name != "count" {
		return errAt(e.At, "Number of arguments does not match for function %s", upper)
	}
	nargs := func(lo, hi int) error {
		if len(e.Args) < lo || len(e.Args) > hi {
			return errAt(e.At, "Number of arguments does not match for function %s", upper)
		}
		return nil
	}
	switch kind {
	case winAggregate:
		a, err := b.newAggCall(e, sc, true)
		if err != nil {
			return err
		}
		f.Agg, f.Args, f.T = a, a.Args, a.T
		return nil
	case winNumbering:
		f.T = ColType{V: vec.Int64}
		if f.Name == "percent_rank" || f.Name == "cume_dist" {
			f.T = ColType{V: vec.Float64}
		}
		if f.Name != "ntile" {
			return nargs(0, 0)
		}
		if err := nargs(1, 1); err != nil {
			return err
		}
		n, null, err := b.windowConstInt(e.Args[0], sc, "Argument to NTILE must be a constant integer")
		if err != nil {
			return err
		}
		if null {
			return errAt(e.Args[0].Pos(), "The N value (number of buckets) for the NTILE function must not be NULL")
		}
		if n <= 0 {
			return errAt(e.Args[0].Pos(), "The N value (number of buckets) for the NTILE function must be positive")
		}
		f.N = n
		return nil
	}
	if kind == winPercentile {
		return b.bindPercentileArgs(f, e, sc)
	}
	// Navigation: a value and constant parameters.
	switch f.Name {
	case "lag", "lead":
		if err := nargs(1, 3); err != nil {
			return err
		}
	case "nth_value":
		if err := nargs(2, 2); err != nil {
			return err
		}
	default:
		if err := nargs(1, 1); err != nil {
			return err
		}
	}
	x, err := b.bindExpr(e.Args[0], sc)
	if err != nil {
		return err
	}
	f.Args = []Expr{x}
	f.T = x.Type()
	switch f.Name {
	case "lag", "lead":
		f.N = 1
		if len(e.Args) >= 2 {
			n, null, err := b.windowConstInt(e.Args[1], sc, "Argument 2 to "+upper+" must be a literal or query parameter")
			if err != nil {
				return err
			}
			if null {
				return errAt(e.Args[1].Pos(), "The offset to the function %s must not be null", upper)
			}
			if n < 0 {
				return errAt(e.Args[1].Pos(), "The offset to the function %s must not be negative", upper)
			}
			f.N = n
		}
		if len(e.Args) == 3 {
			d, err := b.bindExpr(e.Args[2], sc)
			if err != nil {
				return err
			}
			if d, err = foldExpr(d, b.now); err != nil {
				return err
			}
			if !isConst(d) {
				return errAt(e.Args[2].Pos(), "The default value argument to %s must be a constant expression", upper)
			}
			if f.T.V == vec.Unknown {
				f.T = d.Type()
			}
			cd, ok := b.coerceDefault(d, f.T)
			if !ok {
				return errAt(e.At, "No matching signature for analytic function %s for argument types: %s, INT64, %s", upper, f.T, d.Type())
			}
			if l, isLit := cd.(*Literal); !isLit || !l.D.Null {
				f.Default = cd
			}
		}
	case "nth_value":
		n, null, err := b.windowConstInt(e.Args[1], sc, "Argument 2 to NTH_VALUE must be a constant integer")
		if err != nil {
			return err
		}
		if null {
			return errAt(e.Args[1].Pos(), "The N value for the NTH_VALUE function must not be NULL")
		}
		if n <= 0 {
			return errAt(e.Args[1].Pos(), "The N value for the NTH_VALUE function must be positive")
		}
		f.N = n
	}
	return nil
}

// bindPercentileArgs binds PERCENTILE_CONT(value, p) and
// PERCENTILE_DISC(value, p): p a constant in [0, 1]; CONT interpolates
// numbers (FLOAT64 result), DISC picks a value of any orderable type.
func (b *binder) bindPercentileArgs(f *WindowFunc, e *parser.FuncCall, sc *scope) error {
	upper := strings.ToUpper(f.Name)
	if len(e.Args) != 2 {
		return errAt(e.At, "Number of arguments does not match for function %s", upper)
	}
	x, err := b.bindExpr(e.Args[0], sc)
	if err != nil {
		return err
	}
	p, err := b.bindExpr(e.Args[1], sc)
	if err != nil {
		return err
	}
	if p, err = foldExpr(p, b.now); err != nil {
		return err
	}
	l, ok := p.(*Literal)
	if ok && l.D.Type == vec.String { // a parameter
		if v, err := strconv.ParseFloat(strings.TrimSpace(l.D.Str), 64); err == nil {
			l = &Literal{D: fn.Datum{Type: vec.Float64, Flt: v}}
		}
	}
	if !ok || l.D.Null || !l.D.Type.IsNumeric() {
		return errAt(e.Args[1].Pos(), "The percentile argument of %s must be a non-NULL numeric literal", upper)
	}
	f.P = l.D.Flt
	if l.D.Type == vec.Int64 {
		f.P = float64(l.D.Int)
	}
	if !(f.P >= 0 && f.P <= 1) {
		return errAt(e.Args[1].Pos(), "Percentile argument of %s must be in [0, 1], got %v", upper, f.P)
	}
	xt := x.Type()
	switch {
	case f.Name == "percentile_cont" && (xt.V.IsNumeric() || xt.V == vec.Unknown):
		f.T = ColType{V: vec.Float64}
	case f.Name == "percentile_disc" && xt.V != vec.RowRef && xt.V != vec.List:
		f.T = xt
	default:
		return errAt(e.At, "No matching signature for analytic function %s for argument types: %s, FLOAT64", upper, xt)
	}
	f.Args = []Expr{x}
	return nil
}

// coerceDefault converts lag's or lead's constant default to the value's
// type where BigQuery coerces implicitly (NULL, INT64 to FLOAT64, a string
// literal to a date or time type).
func (b *binder) coerceDefault(d Expr, t ColType) (Expr, bool) {
	dt := d.Type()
	switch {
	case dt == t:
		return d, true
	case dt.V == vec.Unknown:
		return nullLit(t.V), true
	case dt.V == vec.Int64 && t.V == vec.Float64:
		c, err := b.coerce(d, t)
		return c, err == nil
	case dt.V == vec.String && (t.V == vec.Timestamp || t.V == vec.Date || t.V == vec.Datetime):
		if _, ok := d.(*Literal); !ok {
			return nil, false
		}
		c, err := b.castExpr(d, t.V, false, parser.Pos{})
		if err != nil {
			return nil, false
		}
		if c, err = foldExpr(c, b.now); err != nil {
			return nil, false
		}
		if _, isErr := c.(*errorExpr); isErr {
			return nil, false
		}
		return c, true
	}
	return nil, false
}

// windowConstInt evaluates a constant integer argument (a literal, a
// parameter or a constant expression). null reports a NULL value.
func (b *binder) windowConstInt(e parser.Expr, sc *scope, notConst string) (n int64, null bool, err error) {
	x, err := b.bindExpr(e, sc)
	if err != nil {
		return 0, false, err
	}
	if x, err = foldExpr(x, b.now); err != nil {
		return 0, false, err
	}
	l, ok := x.(*Literal)
	if !ok {
		return 0, false, errAt(e.Pos(), "%s", notConst)
	}
	if l.D.Null {
		return 0, true, nil
	}
	switch l.D.Type {
	case vec.Int64:
		return l.D.Int, false, nil
	case vec.String: // parameters are strings
		v, perr := strconv.ParseInt(strings.TrimSpace(l.D.Str), 10, 64)
		if perr == nil {
			return v, false, nil
		}
	}
	return 0, false, errAt(e.Pos(), "%s, got %s", notConst, l.D.Type)
}

// bindFrame resolves the frame of an aggregate or value function: the one
// written, checked as BigQuery checks it, or the default (RANGE UNBOUNDED
// PRECEDING to CURRENT ROW with an ORDER BY, the whole partition without).
func (b *binder) bindFrame(w *parser.WindowSpec, order []SortKey, sc *scope) (WindowFrame, error) {
	pf := w.Frame
	if pf == nil {
		if len(order) > 0 {
			return WindowFrame{Unit: frameRange, Start: frameBound{Kind: boundUnboundedPreceding}, End: frameBound{Kind: boundCurrentRow}}, nil
		}
		return WindowFrame{Unit: frameRows, Start: frameBound{Kind: boundUnboundedPreceding}, End: frameBound{Kind: boundUnboundedFollowing}}, nil
	}
	fr := WindowFrame{Unit: frameRows}
	if pf.Unit == parser.FrameRange {
		fr.Unit = frameRange
	}
	startP, endP := pf.Start, parser.FrameBound{Kind: parser.CurrentRow}
	if pf.End != nil {
		endP = *pf.End
	}
	isOffset := func(k parser.BoundKind) bool { return k == parser.Preceding || k == parser.Following }
	hasOffset := isOffset(startP.Kind) || isOffset(endP.Kind)
	keyT := vec.Unknown
	if fr.Unit == frameRange {
		if len(order) == 0 {
			switch {
			case startP.Kind == parser.UnboundedPreceding && pf.End != nil && endP.Kind == parser.UnboundedFollowing:
			case pf.End == nil:
				return fr, errAt(pf.At, "A RANGE-based window without ORDER BY includes all rows in the window frame so only RANGE BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING syntax is supported")
			case hasOffset:
				return fr, errAt(pf.At, "A RANGE-based window including an OFFSET PRECEDING or OFFSET FOLLOWING window frame boundary requires an ORDER BY")
			default:
				return fr, errAt(pf.At, "A RANGE-based window without ORDER BY cannot include a CURRENT ROW window frame boundary since all rows are included in the window frame. Remove the RANGE clause or use RANGE BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING")
			}
		} else if hasOffset {
			if len(order) != 1 {
				return fr, errAt(w.OrderBy[0].At, "A RANGE-based window with OFFSET PRECEDING or OFFSET FOLLOWING boundaries must have exactly one ORDER BY key")
			}
			keyT = order[0].E.Type().V
			if !keyT.IsNumeric() {
				return fr, errAt(w.OrderBy[0].At, "ORDER BY key must be numeric in a RANGE-based window with OFFSET PRECEDING or OFFSET FOLLOWING boundaries, but has type %s", order[0].E.Type())
			}
			fr.FloatKey = keyT == vec.Float64
		}
	}
	var err error
	if fr.Start, err = b.frameBoundOf(startP, fr.Unit, keyT, sc); err != nil {
		return fr, err
	}
	if fr.End, err = b.frameBoundOf(endP, fr.Unit, keyT, sc); err != nil {
		return fr, err
	}
	// Frame shapes BigQuery rejects.
	switch fr.Start.Kind {
	case boundUnboundedFollowing:
		return fr, errAt(pf.At, "Starting window framing expression cannot be UNBOUNDED FOLLOWING")
	case boundCurrentRow:
		if fr.End.Kind == boundPreceding {
			return fr, errAt(pf.At, "Starting window framing expression cannot be CURRENT ROW when the ending window framing expression is OFFSET PRECEDING")
		}
	case boundFollowing:
		if pf.End == nil {
			return fr, errAt(pf.At, "Starting window framing expression cannot be OFFSET FOLLOWING because the implicit ending window framing expression is CURRENT ROW")
		}
		if fr.End.Kind == boundPreceding || fr.End.Kind == boundCurrentRow {
			return fr, errAt(pf.At, "Ending window framing expression cannot be %s when the starting window framing expression is OFFSET FOLLOWING", fr.End.Kind)
		}
	}
	if fr.End.Kind == boundUnboundedPreceding {
		return fr, errAt(pf.At, "Ending window framing expression cannot be UNBOUNDED PRECEDING")
	}
	if fr.Unit == frameRange && len(order) == 0 {
		fr.Unit = frameRows // every row is a peer: the whole partition
	}
	return fr, nil
}

// frameBoundOf resolves one frame bound; an offset must be a non-negative
// literal or parameter, an integer for ROWS and of the ORDER BY key's type
// for RANGE.
func (b *binder) frameBoundOf(p parser.FrameBound, unit frameUnit, keyT vec.Type, sc *scope) (frameBound, error) {
	out := frameBound{}
	switch p.Kind {
	case parser.UnboundedPreceding:
		out.Kind = boundUnboundedPreceding
	case parser.CurrentRow:
		out.Kind = boundCurrentRow
	case parser.UnboundedFollowing:
		out.Kind = boundUnboundedFollowing
	case parser.Preceding:
		out.Kind = boundPreceding
	case parser.Following:
		out.Kind = boundFollowing
	}
	if p.Offset == nil {
		return out, nil
	}
	pos := p.Offset.Pos()
	_, isParam := p.Offset.(*parser.Param)
	switch p.Offset.(type) {
	case *parser.IntLit, *parser.FloatLit, *parser.Param, *parser.NullLit, *parser.StringLit:
	default:
		return out, errAt(pos, "Window framing expression must be a literal or parameter")
	}
	x, err := b.bindExpr(p.Offset, sc)
	if err != nil {
		return out, err
	}
	d := x.(*Literal).D
	if d.Null {
		return out, errAt(pos, "Window framing expression cannot be NULL")
	}
	// Parameters arrive as strings: read them as the type needed.
	if d.Type == vec.String && isParam {
		s := strings.TrimSpace(d.Str)
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			d = fn.Datum{Type: vec.Int64, Int: n}
		} else if f, err := strconv.ParseFloat(s, 64); err == nil && keyT == vec.Float64 {
			d = fn.Datum{Type: vec.Float64, Flt: f}
		}
	}
	switch {
	case unit == frameRows:
		if d.Type != vec.Int64 {
			return out, errAt(pos, "Window framing expression for ROWS can only be of integer type, but has type %s", d.Type)
		}
		out.N = d.Int
	case keyT == vec.Float64 && (d.Type == vec.Int64 || d.Type == vec.Float64):
		out.F = d.Flt
		if d.Type == vec.Int64 {
			out.F = float64(d.Int)
		}
		if math.IsNaN(out.F) {
			return out, errAt(pos, "Window framing expression cannot be NaN")
		}
		out.N = int64(out.F)
	case keyT == vec.Int64 && d.Type == vec.Int64:
		out.N = d.Int
		out.F = float64(d.Int)
	default:
		return out, errAt(pos, "Window framing expression has type %s that cannot coerce to the type of the ORDER BY expression, which is %s", d.Type, keyT)
	}
	if out.N < 0 || out.F < 0 {
		return out, errAt(pos, "Window framing expression cannot evaluate to a negative value")
	}
	return out, nil
}
