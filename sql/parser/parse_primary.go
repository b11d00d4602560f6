package parser

import (
	"math"
	"strconv"
	"strings"
)

// This file parses primary expressions: literals, names and paths, function
// calls and the special forms (CASE, CAST, EXTRACT, INTERVAL, ARRAY,
// STRUCT, EXISTS, subqueries), and the date part arguments of the date
// functions.

// parseNumber parses the numeric literal at the current token, negated when
// neg (a folded unary minus; at is then the minus sign's position).
func (p *parser) parseNumber(at Pos, neg bool) (Expr, *Error) {
	t := p.advance()
	text := p.text(t)
	if t.kind == tFloat {
		v, err := strconv.ParseFloat(text, 64)
		if err != nil || math.IsInf(v, 0) {
			return nil, &Error{Msg: "Float literal out of range: " + text, Pos: p.tokPos(t)}
		}
		if neg {
			v = -v
		}
		return &FloatLit{At: at, Value: v}, nil
	}
	var u uint64
	var err error
	if len(text) > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X') {
		u, err = strconv.ParseUint(text[2:], 16, 64)
	} else {
		u, err = strconv.ParseUint(text, 10, 64)
	}
	const minMagnitude = 1 << 63 // magnitude of math.MinInt64
	if err != nil || (!neg && u > math.MaxInt64) || (neg && u > minMagnitude) {
		return nil, &Error{Msg: "Integer literal out of range: " + text, Pos: p.tokPos(t)}
	}
	v := int64(u)
	if neg {
		v = -v // for u == 1<<63, int64(u) is MinInt64 and -v stays MinInt64
	}
	return &IntLit{At: at, Value: v}, nil
}

// niladicFuncs may be written without parentheses.
var niladicFuncs = map[string]bool{
	"current_timestamp": true, "current_date": true, "current_datetime": true, "current_time": true,
}

// keywordFuncs are reserved words that are also function names when followed
// by '('.
var keywordFuncs = [numKeywords]bool{kwIf: true, kwLeft: true, kwRight: true}

func (p *parser) parsePrimary() (Expr, *Error) {
	t := p.tok()
	at := p.tokPos(t)
	switch t.kind {
	case tInt, tFloat:
		return p.parseNumber(at, false)
	case tString:
		p.advance()
		s := p.strs.alloc()
		s.At, s.Value = at, p.values[t.val]
		return s, nil
	case tBytes:
		p.advance()
		return &BytesLit{At: at, Value: p.values[t.val]}, nil
	case tParam:
		p.advance()
		return &Param{At: at, Name: p.src[t.off+1 : t.end]}, nil
	case tLParen:
		return p.parseParenExpr(at)
	case tLBrack:
		return p.parseArrayElems(at, nil)
	case tQuoted:
		return p.parseNamePrimary()
	case tWord:
		if reserved[t.kw] {
			return p.parseKeywordPrimary(t, at)
		}
		next := p.peek(1)
		word := p.text(t)
		if next.kind == tString {
			if kind, ok := lookupLower(typedLiteralKinds, word); ok {
				p.i += 2
				return &TypedLit{At: at, Type: kind, Value: p.values[next.val]}, nil
			}
		}
		if next.kind == tLParen && strings.EqualFold(word, "safe_cast") {
			return p.parseCast(at, true)
		}
		if next.kind != tLParen && next.kind != tDot {
			if _, ok := lookupLower(niladicFuncs, word); ok {
				p.advance()
				return &FuncCall{At: at, Name: []Ident{p.identOf(t)}}, nil
			}
		}
		return p.parseNamePrimary()
	}
	return nil, p.errExpected("an expression")
}

// parseKeywordPrimary parses the expressions introduced by a reserved word.
func (p *parser) parseKeywordPrimary(t *token, at Pos) (Expr, *Error) {
	switch t.kw {
	case kwTrue, kwFalse:
		p.advance()
		return &BoolLit{At: at, Value: t.kw == kwTrue}, nil
	case kwNull:
		p.advance()
		return &NullLit{At: at}, nil
	case kwCase:
		return p.parseCase(at)
	case kwCast:
		return p.parseCast(at, false)
	case kwExtract:
		return p.parseExtract(at)
	case kwExists:
		p.advance()
		q, err := p.parseParenQuery()
		if err != nil {
			return nil, err
		}
		return &Exists{At: at, Query: q}, nil
	case kwArray:
		return p.parseArray(at)
	case kwStruct:
		return p.parseStruct(at)
	case kwInterval:
		return p.parseInterval(at)
	}
	if keywordFuncs[t.kw] && p.peek(1).kind == tLParen {
		p.advance()
		return p.parseFuncCall(at, []Ident{p.identOf(t)})
	}
	return nil, p.errExpected("an expression")
}

// parseNamePrimary parses a dotted name path, which is a function call when
// followed by '(' (`net.host(x)`, “ `some.function`(@c) “) and a column
// reference otherwise.
func (p *parser) parseNamePrimary() (Expr, *Error) {
	t := p.tok()
	at := p.tokPos(t)
	n := 1
	for k := p.i + 1; k+1 < len(p.toks) && p.toks[k].kind == tDot && isFieldNameTok(&p.toks[k+1]); k += 2 {
		n++
	}
	parts := p.identRun(n)
	for j := range parts {
		parts[j] = p.identOf(&p.toks[p.i+2*j])
	}
	p.i += 2*n - 1
	if p.is(tLParen) {
		return p.parseFuncCall(at, parts)
	}
	c := p.colRefs.alloc()
	c.At, c.Parts = at, parts
	return c, nil
}

// parseParenExpr parses a parenthesised expression or a scalar subquery.
func (p *parser) parseParenExpr(at Pos) (Expr, *Error) {
	// `((SELECT 1) + 1)` starts like a subquery but is an expression.
	if p.parenIsQuery() {
		q, err := p.parseParenQuery()
		if err != nil {
			return nil, err
		}
		return &ScalarSubquery{At: at, Query: q}, nil
	}
	return p.parseParenGroup()
}

func (p *parser) parseParenGroup() (Expr, *Error) {
	p.advance() // (
	e, err := p.parseExpr()
	if err != nil {
		return nil, err
	}
	return e, p.expect(tRParen, ")")
}

func (p *parser) parseFuncCall(at Pos, name []Ident) (Expr, *Error) {
	p.advance() // (
	f := p.funcs.alloc()
	f.At, f.Name = at, name
	var err *Error
	switch {
	case p.accept(tRParen):
	case p.is(tStar) && p.peek(1).kind == tRParen:
		p.i += 2
		f.Star = true
	default:
		f.Distinct = p.acceptKw(kwDistinct)
		if f.Args, err = p.parseExprList(); err != nil {
			return nil, err
		}
		if p.isKw(kwIgnore) || p.isKw(kwRespect) {
			f.Nulls = IgnoreNulls
			if p.isKw(kwRespect) {
				f.Nulls = RespectNulls
			}
			p.advance()
			if err := p.expectKw(kwNulls); err != nil {
				return nil, err
			}
		}
		if p.isKw(kwOrder) {
			if f.OrderBy, err = p.parseOrderBy(); err != nil {
				return nil, err
			}
		}
		if p.acceptKw(kwLimit) {
			if f.Limit, err = p.parseExpr(); err != nil {
				return nil, err
			}
		}
		if err := p.expect(tRParen, ")"); err != nil {
			return nil, err
		}
	}
	if p.acceptKw(kwOver) {
		if f.Over, err = p.parseWindowSpec(); err != nil {
			return nil, err
		}
	}
	convertDatePartArgs(f)
	return f, nil
}

// datePartArgs maps functions that take a bare date part argument to the
// index of that argument.
var datePartArgs = map[string]int{
	"timestamp_trunc": 1, "date_trunc": 1, "datetime_trunc": 1, "time_trunc": 1,
	"timestamp_diff": 2, "date_diff": 2, "datetime_diff": 2, "time_diff": 2,
	"last_day": 1,
}

// datePartNames are the date parts, lower case to canonical upper case.
var datePartNames = map[string]string{
	"microsecond": "MICROSECOND", "millisecond": "MILLISECOND", "second": "SECOND",
	"minute": "MINUTE", "hour": "HOUR", "day": "DAY", "dayofweek": "DAYOFWEEK",
	"dayofyear": "DAYOFYEAR", "week": "WEEK", "isoweek": "ISOWEEK", "month": "MONTH",
	"quarter": "QUARTER", "year": "YEAR", "isoyear": "ISOYEAR", "date": "DATE",
	"time": "TIME", "datetime": "DATETIME",
}

// intervalUnits are the units an INTERVAL literal accepts.
var intervalUnits = map[string]string{
	"microsecond": "MICROSECOND", "millisecond": "MILLISECOND", "second": "SECOND",
	"minute": "MINUTE", "hour": "HOUR", "day": "DAY", "week": "WEEK", "month": "MONTH",
	"quarter": "QUARTER", "year": "YEAR",
}

var weekdays = map[string]string{
	"sunday": "SUNDAY", "monday": "MONDAY", "tuesday": "TUESDAY", "wednesday": "WEDNESDAY",
	"thursday": "THURSDAY", "friday": "FRIDAY", "saturday": "SATURDAY",
}

// convertDatePartArgs turns the bare date part argument of TIMESTAMP_TRUNC,
// TIMESTAMP_DIFF and friends from a column reference into a DatePart.
func convertDatePartArgs(f *FuncCall) {
	name := f.Name[len(f.Name)-1]
	if name.Quoted || (len(f.Name) == 2 && !f.Name[0].Is("safe")) || len(f.Name) > 2 {
		return
	}
	idx, ok := lookupLower(datePartArgs, name.Name)
	if !ok || idx >= len(f.Args) {
		return
	}
	if dp := asDatePart(f.Args[idx]); dp != nil {
		f.Args[idx] = dp
	}
}

// asDatePart returns e as a DatePart if it is a bare date part name or
// WEEK(<weekday>), else nil.
func asDatePart(e Expr) *DatePart {
	switch x := e.(type) {
	case *ColumnRef:
		if len(x.Parts) != 1 || x.Parts[0].Quoted {
			return nil
		}
		if name, ok := lookupLower(datePartNames, x.Parts[0].Name); ok {
			return &DatePart{At: x.At, Name: name}
		}
	case *FuncCall:
		if len(x.Name) != 1 || x.Name[0].Quoted || !x.Name[0].Is("week") || len(x.Args) != 1 ||
			x.Star || x.Distinct || x.Over != nil || x.OrderBy != nil || x.Limit != nil || x.Nulls != 0 {
			return nil
		}
		arg, ok := x.Args[0].(*ColumnRef)
		if !ok || len(arg.Parts) != 1 || arg.Parts[0].Quoted {
			return nil
		}
		if day, ok := lookupLower(weekdays, arg.Parts[0].Name); ok {
			return &DatePart{At: x.At, Name: "WEEK", Arg: day}
		}
	}
	return nil
}

// parseDatePart parses a date part keyword where one is required (EXTRACT).
func (p *parser) parseDatePart() (*DatePart, *Error) {
	t := p.tok()
	if t.kind != tWord {
		return nil, p.errExpected("a date part")
	}
	name, ok := lookupLower(datePartNames, p.text(t))
	if !ok {
		return nil, p.errExpected("a date part")
	}
	dp := &DatePart{At: p.tokPos(t), Name: name}
	p.advance()
	if name == "WEEK" && p.is(tLParen) {
		p.advance()
		d := p.tok()
		day, ok := "", false
		if d.kind == tWord {
			day, ok = lookupLower(weekdays, p.text(d))
		}
		if !ok {
			return nil, p.errExpected("a weekday")
		}
		p.advance()
		dp.Arg = day
		if err := p.expect(tRParen, ")"); err != nil {
			return nil, err
		}
	}
	return dp, nil
}

func (p *parser) parseWindowSpec() (*WindowSpec, *Error) {
	w := &WindowSpec{At: p.pos()}
	if err := p.expect(tLParen, "("); err != nil {
		return nil, err
	}
	var err *Error
	if p.acceptKw(kwPartition) {
		if err := p.expectKw(kwBy); err != nil {
			return nil, err
		}
		if w.PartitionBy, err = p.parseExprList(); err != nil {
			return nil, err
		}
	}
	if p.isKw(kwOrder) {
		if w.OrderBy, err = p.parseOrderBy(); err != nil {
			return nil, err
		}
	}
	if p.isKw(kwRows) || p.isKw(kwRange) {
		if w.Frame, err = p.parseFrame(); err != nil {
			return nil, err
		}
	}
	return w, p.expect(tRParen, ")")
}

func (p *parser) parseFrame() (*Frame, *Error) {
	f := &Frame{At: p.pos(), Unit: FrameRows}
	if p.isKw(kwRange) {
		f.Unit = FrameRange
	}
	p.advance()
	between := p.acceptKw(kwBetween)
	start, err := p.parseFrameBound()
	if err != nil {
		return nil, err
	}
	f.Start = start
	if between {
		if err := p.expectKw(kwAnd); err != nil {
			return nil, err
		}
		end, err := p.parseFrameBound()
		if err != nil {
			return nil, err
		}
		f.End = &end
	}
	return f, nil
}

func (p *parser) parseFrameBound() (FrameBound, *Error) {
	switch {
	case p.acceptKw(kwUnbounded):
		switch {
		case p.acceptKw(kwPreceding):
			return FrameBound{Kind: UnboundedPreceding}, nil
		case p.acceptKw(kwFollowing):
			return FrameBound{Kind: UnboundedFollowing}, nil
		}
		return FrameBound{}, p.errExpected("PRECEDING or FOLLOWING")
	case p.isKw(kwCurrent) && tokIsKw(p.peek(1), kwRow):
		p.i += 2
		return FrameBound{Kind: CurrentRow}, nil
	}
	off, err := p.parseBinary(precCmp + 1)
	if err != nil {
		return FrameBound{}, err
	}
	switch {
	case p.acceptKw(kwPreceding):
		return FrameBound{Kind: Preceding, Offset: off}, nil
	case p.acceptKw(kwFollowing):
		return FrameBound{Kind: Following, Offset: off}, nil
	}
	return FrameBound{}, p.errExpected("PRECEDING or FOLLOWING")
}

func (p *parser) parseCase(at Pos) (Expr, *Error) {
	p.advance() // CASE
	c := &Case{At: at}
	var err *Error
	if !p.isKw(kwWhen) {
		if c.Operand, err = p.parseExpr(); err != nil {
			return nil, err
		}
	}
	for p.isKw(kwWhen) {
		w := &When{At: p.pos()}
		p.advance()
		if w.Cond, err = p.parseExpr(); err != nil {
			return nil, err
		}
		if err := p.expectKw(kwThen); err != nil {
			return nil, err
		}
		if w.Result, err = p.parseExpr(); err != nil {
			return nil, err
		}
		c.Whens = append(c.Whens, w)
	}
	if len(c.Whens) == 0 {
		return nil, p.errExpected("WHEN")
	}
	if p.acceptKw(kwElse) {
		if c.Else, err = p.parseExpr(); err != nil {
			return nil, err
		}
	}
	return c, p.expectKw(kwEnd)
}

// parseCast parses CAST(x AS type) or SAFE_CAST(x AS type).
func (p *parser) parseCast(at Pos, safe bool) (Expr, *Error) {
	p.advance() // CAST / SAFE_CAST
	if err := p.expect(tLParen, "("); err != nil {
		return nil, err
	}
	x, err := p.parseExpr()
	if err != nil {
		return nil, err
	}
	if err := p.expectKw(kwAs); err != nil {
		return nil, err
	}
	typ, err := p.parseType()
	if err != nil {
		return nil, err
	}
	return &Cast{At: at, X: x, Type: typ, Safe: safe}, p.expect(tRParen, ")")
}

// parseExtract parses EXTRACT(part FROM x [AT TIME ZONE tz]).
func (p *parser) parseExtract(at Pos) (Expr, *Error) {
	p.advance() // EXTRACT
	if err := p.expect(tLParen, "("); err != nil {
		return nil, err
	}
	part, err := p.parseDatePart()
	if err != nil {
		return nil, err
	}
	if err := p.expectKw(kwFrom); err != nil {
		return nil, err
	}
	e := &Extract{At: at, Part: part}
	if e.X, err = p.parseExpr(); err != nil {
		return nil, err
	}
	if p.acceptKw(kwAt) {
		if err := p.expectKw(kwTime); err != nil {
			return nil, err
		}
		if err := p.expectKw(kwZone); err != nil {
			return nil, err
		}
		if e.TimeZone, err = p.parseExpr(); err != nil {
			return nil, err
		}
	}
	return e, p.expect(tRParen, ")")
}

// parseInterval parses INTERVAL value unit.
func (p *parser) parseInterval(at Pos) (Expr, *Error) {
	p.advance() // INTERVAL
	if err := p.enter(); err != nil {
		return nil, err
	}
	v, err := p.parseUnary()
	p.leave()
	if err != nil {
		return nil, err
	}
	t := p.tok()
	unit, ok := "", false
	if t.kind == tWord {
		unit, ok = lookupLower(intervalUnits, p.text(t))
	}
	if !ok {
		return nil, p.errExpected("a date part (e.g. DAY, HOUR, MINUTE)")
	}
	p.advance()
	return &Interval{At: at, Value: v, Unit: unit}, nil
}

// parseArray parses ARRAY(subquery), ARRAY[...] and ARRAY<T>[...].
func (p *parser) parseArray(at Pos) (Expr, *Error) {
	p.advance() // ARRAY
	switch p.tok().kind {
	case tLParen:
		q, err := p.parseParenQuery()
		if err != nil {
			return nil, err
		}
		return &ArraySubquery{At: at, Query: q}, nil
	case tLBrack:
		return p.parseArrayElems(at, nil)
	case tLt:
		p.advance()
		elem, err := p.parseType()
		if err != nil {
			return nil, err
		}
		if err := p.expectTypeClose(); err != nil {
			return nil, err
		}
		if !p.is(tLBrack) {
			return nil, p.errExpected("[")
		}
		return p.parseArrayElems(at, elem)
	}
	return nil, p.errExpected("( or [")
}

// parseArrayElems parses [a, b, ...] at the current '['.
func (p *parser) parseArrayElems(at Pos, elem *TypeName) (Expr, *Error) {
	p.advance() // [
	a := &ArrayLit{At: at, Type: elem}
	if p.accept(tRBrack) {
		return a, nil
	}
	var err *Error
	if a.Elems, err = p.parseExprList(); err != nil {
		return nil, err
	}
	return a, p.expect(tRBrack, "]")
}

// parseStruct parses STRUCT(a AS x, b) and STRUCT<...>(...).
func (p *parser) parseStruct(at Pos) (Expr, *Error) {
	s := &StructLit{At: at}
	if p.peek(1).kind == tLt {
		typ, err := p.parseType()
		if err != nil {
			return nil, err
		}
		s.Type = typ
	} else {
		p.advance() // STRUCT
	}
	if err := p.expect(tLParen, "("); err != nil {
		return nil, err
	}
	if p.accept(tRParen) {
		return s, nil
	}
	for {
		e, err := p.parseExpr()
		if err != nil {
			return nil, err
		}
		f := StructField{Expr: e}
		if p.acceptKw(kwAs) {
			id, err := p.parseIdent()
			if err != nil {
				return nil, err
			}
			f.Alias = &id
		}
		s.Fields = append(s.Fields, f)
		if !p.accept(tComma) {
			break
		}
	}
	return s, p.expect(tRParen, ")")
}
