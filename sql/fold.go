package sql

import (
	"context"
	"time"

	"github.com/sediment/sediment/internal/vec"
	"github.com/sediment/sediment/sql/fn"
	"github.com/sediment/sediment/sql/parser"
)

// Subscript modes, as the parser names them.
const (
	subOffset      = parser.SubscriptOffset
	subOrdinal     = parser.SubscriptOrdinal
	subSafeOffset  = parser.SubscriptSafeOffset
	subSafeOrdinal = parser.SubscriptSafeOrdinal
)

// foldExpr evaluates constant sub-expressions and simplifies logic over
// constants: AND/OR with a constant operand, CASE arms whose condition is
// constant, NOT of a constant. This is what turns Logflare's optional
// bounds, `CASE WHEN COALESCE(@p, ”) = ” THEN TRUE ELSE ts > CAST(@p AS
// TIMESTAMP) END`, into either TRUE or a plain comparison the scan can use.
func foldExpr(e Expr, now time.Time) (Expr, error) {
	switch x := e.(type) {
	case *Literal, *ColRef:
		return e, nil
	case *AndExpr:
		var args []Expr
		sawNull := false
		for _, a := range x.Args {
			f, err := foldExpr(a, now)
			if err != nil {
				return nil, err
			}
			if l, ok := f.(*Literal); ok {
				switch {
				case l.D.Null:
					sawNull = true
					continue
				case !l.D.Bool:
					return boolLit(false), nil
				default:
					continue // TRUE
				}
			}
			if inner, ok := f.(*AndExpr); ok {
				args = append(args, inner.Args...)
			} else {
				args = append(args, f)
			}
		}
		if sawNull {
			args = append(args, nullLit(vec.Bool))
		}
		switch len(args) {
		case 0:
			return boolLit(true), nil
		case 1:
			return args[0], nil
		}
		return &AndExpr{Args: args}, nil
	case *OrExpr:
		var args []Expr
		sawNull := false
		for _, a := range x.Args {
			f, err := foldExpr(a, now)
			if err != nil {
				return nil, err
			}
			if l, ok := f.(*Literal); ok {
				switch {
				case l.D.Null:
					sawNull = true
					continue
				case l.D.Bool:
					return boolLit(true), nil
				default:
					continue
				}
			}
			args = append(args, f)
		}
		if sawNull {
			args = append(args, nullLit(vec.Bool))
		}
		switch len(args) {
		case 0:
			return boolLit(false), nil
		case 1:
			return args[0], nil
		}
		return &OrExpr{Args: args}, nil
	case *CaseExpr:
		var whens []When
		for _, w := range x.Whens {
			c, err := foldExpr(w.Cond, now)
			if err != nil {
				return nil, err
			}
			if l, ok := c.(*Literal); ok {
				if l.D.Null || !l.D.Bool {
					continue // never taken
				}
				// Always taken: it decides the rest.
				t, err := foldExpr(w.Then, now)
				if err != nil {
					return nil, err
				}
				if len(whens) == 0 {
					return t, nil
				}
				return &CaseExpr{Whens: whens, Else: t, T: x.T}, nil
			}
			t, err := foldExpr(w.Then, now)
			if err != nil {
				return nil, err
			}
			whens = append(whens, When{Cond: c, Then: t})
		}
		var els Expr
		if x.Else != nil {
			f, err := foldExpr(x.Else, now)
			if err != nil {
				return nil, err
			}
			els = f
		}
		if len(whens) == 0 {
			if els == nil {
				return nullLit(x.T.V), nil
			}
			return els, nil
		}
		return &CaseExpr{Whens: whens, Else: els, T: x.T}, nil
	case *NotExpr:
		f, err := foldExpr(x.X, now)
		if err != nil {
			return nil, err
		}
		if l, ok := f.(*Literal); ok {
			if l.D.Null {
				return l, nil
			}
			return boolLit(!l.D.Bool), nil
		}
		return &NotExpr{X: f}, nil
	case *Call:
		args := make([]Expr, len(x.Args))
		changed := false
		for i, a := range x.Args {
			if a == nil {
				continue
			}
			f, err := foldExpr(a, now)
			if err != nil {
				return nil, err
			}
			args[i] = f
			changed = changed || f != a
		}
		c := x
		if changed {
			c = &Call{Name: x.Name, F: x.F, Args: args, Info: x.Info, T: x.T}
		}
		// Comparisons are strict: one NULL operand makes them NULL.
		if _, cmp := cmpOps[c.Name]; cmp {
			for _, a := range c.Args {
				if l, ok := a.(*Literal); ok && l.D.Null {
					return nullLit(vec.Bool), nil
				}
			}
		}
		return evalIfConst(c, now)
	case *IsNullExpr:
		f, err := foldExpr(x.X, now)
		if err != nil {
			return nil, err
		}
		if l, ok := f.(*Literal); ok {
			return boolLit(l.D.Null != x.Not), nil
		}
		return &IsNullExpr{X: f, Not: x.Not}, nil
	case *IsBoolExpr:
		f, err := foldExpr(x.X, now)
		if err != nil {
			return nil, err
		}
		return evalIfConst(&IsBoolExpr{X: f, Value: x.Value, Not: x.Not}, now)
	case *InExpr:
		xf, err := foldExpr(x.X, now)
		if err != nil {
			return nil, err
		}
		list := make([]Expr, len(x.List))
		eqs := make([]Expr, len(x.Eqs))
		for i := range x.List {
			if list[i], err = foldExpr(x.List[i], now); err != nil {
				return nil, err
			}
			if eqs[i], err = foldExpr(x.Eqs[i], now); err != nil {
				return nil, err
			}
		}
		return evalIfConst(&InExpr{X: xf, List: list, Not: x.Not, Eqs: eqs}, now)
	}
	return e, nil
}

// evalIfConst evaluates an expression that reads no column.
func evalIfConst(e Expr, now time.Time) (Expr, error) {
	if !isConst(e) || e.Type().V == vec.List || e.Type().V == vec.RowRef {
		return e, nil
	}
	ev, err := compile(e, layout{})
	if err != nil {
		return nil, err
	}
	ec := &evalCtx{ctx: context.Background(), fctx: &fn.EvalCtx{Ctx: context.Background()}}
	v, err := ev(ec, &vec.Batch{Len: 1}, nil)
	if err != nil {
		return nil, err
	}
	d := fn.Datum{Type: v.Type}
	if v.Type == vec.Unknown {
		d.Type = e.Type().V
	}
	switch {
	case v.IsNull(0) || v.Type == vec.Unknown:
		d.Null = true
	case v.Type == vec.Bool:
		d.Bool = v.BoolAt(0)
	case v.Type == vec.Float64:
		d.Flt = v.FloatAt(0)
	case v.Type == vec.String || v.Type == vec.JSON:
		d.Str = v.StringAt(0)
	default:
		d.Int = v.IntAt(0)
	}
	return &Literal{D: d}, nil
}
