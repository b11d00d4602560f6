package parser

// Operator precedence, lowest first, as in BigQuery's operator table.
const (
	precOr = iota + 1
	precAnd
	precNot
	precCmp // = != < > <= >= [NOT] LIKE/BETWEEN/IN, IS [NOT] ...
	precBitOr
	precBitXor
	precBitAnd
	precShift
	precAdd // + -
	precMul // * / ||
	precUnary
	precPrimary
)

// parseExpr parses a full expression. It is the entry point for every
// nested expression (parentheses, arguments, CASE arms), so it counts
// nesting.
func (p *parser) parseExpr() (Expr, *Error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	e, err := p.parseBinary(precOr)
	p.leave()
	return e, err
}

// infixKind classifies the infix operator at the current token.
type infixKind uint8

const (
	infixNone infixKind = iota
	infixBinary
	infixIs
	infixLike
	infixBetween
	infixIn
)

// infixAt returns the infix operator at the current token. not reports a
// `NOT LIKE/BETWEEN/IN` (two tokens).
func (p *parser) infixAt() (kind infixKind, op BinaryOp, prec int, not bool) {
	t := p.tok()
	switch t.kind {
	case tEq:
		return infixBinary, OpEq, precCmp, false
	case tNe:
		return infixBinary, OpNe, precCmp, false
	case tLt:
		return infixBinary, OpLt, precCmp, false
	case tLe:
		return infixBinary, OpLe, precCmp, false
	case tGt:
		return infixBinary, OpGt, precCmp, false
	case tGe:
		return infixBinary, OpGe, precCmp, false
	case tPipe:
		return infixBinary, OpBitOr, precBitOr, false
	case tCaret:
		return infixBinary, OpBitXor, precBitXor, false
	case tAmp:
		return infixBinary, OpBitAnd, precBitAnd, false
	case tShl:
		return infixBinary, OpShl, precShift, false
	case tShr:
		return infixBinary, OpShr, precShift, false
	case tPlus:
		return infixBinary, OpAdd, precAdd, false
	case tMinus:
		return infixBinary, OpSub, precAdd, false
	case tStar:
		return infixBinary, OpMul, precMul, false
	case tSlash:
		return infixBinary, OpDiv, precMul, false
	case tConcat:
		return infixBinary, OpConcat, precMul, false
	case tWord:
		switch t.kw {
		case kwOr:
			return infixBinary, OpOr, precOr, false
		case kwAnd:
			return infixBinary, OpAnd, precAnd, false
		case kwIs:
			return infixIs, 0, precCmp, false
		case kwLike:
			return infixLike, 0, precCmp, false
		case kwBetween:
			return infixBetween, 0, precCmp, false
		case kwIn:
			return infixIn, 0, precCmp, false
		case kwNot:
			n := p.peek(1)
			if n.kind == tWord {
				switch n.kw {
				case kwLike:
					return infixLike, 0, precCmp, true
				case kwBetween:
					return infixBetween, 0, precCmp, true
				case kwIn:
					return infixIn, 0, precCmp, true
				}
			}
		}
	}
	return infixNone, 0, 0, false
}

// parseBinary parses an expression whose infix operators all bind at least
// as tightly as minPrec (precedence climbing). Left-associative chains are
// built in a loop, so `a OR b OR ...` does not recurse per operator.
func (p *parser) parseBinary(minPrec int) (Expr, *Error) {
	var left Expr
	if p.isKw(kwNot) {
		at := p.pos()
		p.advance()
		if err := p.enter(); err != nil {
			return nil, err
		}
		x, err := p.parseBinary(precNot)
		p.leave()
		if err != nil {
			return nil, err
		}
		left = &Unary{At: at, Op: OpNot, X: x}
	} else {
		var err *Error
		if left, err = p.parseUnary(); err != nil {
			return nil, err
		}
	}
	for {
		kind, op, prec, not := p.infixAt()
		if kind == infixNone || prec < minPrec {
			return left, nil
		}
		opAt := p.pos()
		p.advance()
		if not {
			p.advance()
		}
		var err *Error
		switch kind {
		case infixBinary:
			var right Expr
			if right, err = p.parseBinary(prec + 1); err != nil {
				return nil, err
			}
			b := p.binaries.alloc()
			*b = Binary{At: left.Pos(), OpAt: opAt, Op: op, L: left, R: right}
			left = b
		case infixIs:
			left, err = p.parseIsTail(left, opAt)
		case infixLike:
			var pat Expr
			if pat, err = p.parseBinary(precCmp + 1); err != nil {
				return nil, err
			}
			left = &Like{At: left.Pos(), OpAt: opAt, X: left, Not: not, Pattern: pat}
		case infixBetween:
			left, err = p.parseBetweenTail(left, opAt, not)
		case infixIn:
			left, err = p.parseInTail(left, opAt, not)
		}
		if err != nil {
			return nil, err
		}
	}
}

// parseIsTail parses what follows IS: [NOT] NULL|TRUE|FALSE|UNKNOWN or
// [NOT] DISTINCT FROM expr.
func (p *parser) parseIsTail(x Expr, opAt Pos) (Expr, *Error) {
	not := p.acceptKw(kwNot)
	is := &Is{At: x.Pos(), OpAt: opAt, X: x, Not: not}
	t := p.tok()
	if t.kind == tWord {
		switch t.kw {
		case kwNull:
			is.What = IsNull
		case kwTrue:
			is.What = IsTrue
		case kwFalse:
			is.What = IsFalse
		case kwUnknown:
			is.What = IsUnknown
		case kwDistinct:
			p.advance()
			if err := p.expectKw(kwFrom); err != nil {
				return nil, err
			}
			y, err := p.parseBinary(precCmp + 1)
			if err != nil {
				return nil, err
			}
			op := OpIsDistinctFrom
			if not {
				op = OpIsNotDistinctFrom
			}
			return &Binary{At: x.Pos(), OpAt: opAt, Op: op, L: x, R: y}, nil
		}
	}
	if is.What == 0 {
		return nil, p.errExpected("NULL, TRUE, FALSE, UNKNOWN or DISTINCT FROM")
	}
	p.advance()
	return is, nil
}

func (p *parser) parseBetweenTail(x Expr, opAt Pos, not bool) (Expr, *Error) {
	lo, err := p.parseBinary(precCmp + 1)
	if err != nil {
		return nil, err
	}
	if err := p.expectKw(kwAnd); err != nil {
		return nil, err
	}
	hi, err := p.parseBinary(precCmp + 1)
	if err != nil {
		return nil, err
	}
	return &Between{At: x.Pos(), OpAt: opAt, X: x, Not: not, Lo: lo, Hi: hi}, nil
}

// parseInTail parses what follows [NOT] IN: UNNEST(expr), (subquery) or
// (list).
func (p *parser) parseInTail(x Expr, opAt Pos, not bool) (Expr, *Error) {
	in := &In{At: x.Pos(), OpAt: opAt, X: x, Not: not}
	if p.acceptKw(kwUnnest) {
		if err := p.expect(tLParen, "("); err != nil {
			return nil, err
		}
		e, err := p.parseExpr()
		if err != nil {
			return nil, err
		}
		in.Unnest = e
		return in, p.expect(tRParen, ")")
	}
	if !p.is(tLParen) {
		return nil, p.errExpected("(")
	}
	// `IN ((SELECT 1), 2)` is a list that starts like a subquery.
	if p.parenIsQuery() {
		q, err := p.parseParenQuery()
		if err != nil {
			return nil, err
		}
		in.Query = q
		return in, nil
	}
	list, err := p.parseParenExprList()
	if err != nil {
		return nil, err
	}
	in.List = list
	return in, nil
}

func (p *parser) parseParenExprList() ([]Expr, *Error) {
	if err := p.expect(tLParen, "("); err != nil {
		return nil, err
	}
	list, err := p.parseExprList()
	if err != nil {
		return nil, err
	}
	return list, p.expect(tRParen, ")")
}

// parseUnary parses prefix - + ~ and then a postfix expression. A minus sign
// directly before a numeric literal is folded into the literal.
func (p *parser) parseUnary() (Expr, *Error) {
	t := p.tok()
	var op UnaryOp
	switch t.kind {
	case tMinus:
		if n := p.peek(1); n.kind == tInt || n.kind == tFloat {
			at := p.tokPos(t)
			p.advance()
			lit, err := p.parseNumber(at, true)
			if err != nil {
				return nil, err
			}
			return p.parsePostfixOps(lit)
		}
		op = OpNeg
	case tPlus:
		op = OpPlus
	case tTilde:
		op = OpBitNot
	default:
		return p.parsePostfix()
	}
	at := p.tokPos(t)
	p.advance()
	if err := p.enter(); err != nil {
		return nil, err
	}
	x, err := p.parseUnary()
	p.leave()
	if err != nil {
		return nil, err
	}
	return &Unary{At: at, Op: op, X: x}, nil
}

func (p *parser) parsePostfix() (Expr, *Error) {
	x, err := p.parsePrimary()
	if err != nil {
		return nil, err
	}
	return p.parsePostfixOps(x)
}

// parsePostfixOps applies field access, subscripts and `::type` casts.
func (p *parser) parsePostfixOps(x Expr) (Expr, *Error) {
	for {
		switch p.tok().kind {
		case tDot:
			if !isFieldNameTok(p.peek(1)) {
				p.advance()
				return nil, p.errExpected("identifier")
			}
			p.advance()
			field := p.identOf(p.advance())
			if cr, ok := x.(*ColumnRef); ok {
				cr.Parts = append(cr.Parts, field)
				continue
			}
			x = &FieldAccess{At: x.Pos(), X: x, Field: field}
		case tLBrack:
			var err *Error
			if x, err = p.parseSubscript(x); err != nil {
				return nil, err
			}
		case tColons:
			p.advance()
			typ, err := p.parseType()
			if err != nil {
				return nil, err
			}
			x = &Cast{At: x.Pos(), X: x, Type: typ}
		default:
			return x, nil
		}
	}
}

var subscriptModes = map[string]SubscriptMode{
	"offset": SubscriptOffset, "ordinal": SubscriptOrdinal,
	"safe_offset": SubscriptSafeOffset, "safe_ordinal": SubscriptSafeOrdinal,
}

func (p *parser) parseSubscript(x Expr) (Expr, *Error) {
	p.advance() // [
	s := &Subscript{At: x.Pos(), X: x, Mode: SubscriptPlain}
	if t := p.tok(); t.kind == tWord && p.peek(1).kind == tLParen {
		if mode, ok := lookupLower(subscriptModes, p.text(t)); ok {
			s.Mode = mode
			p.i += 2
		}
	}
	var err *Error
	if s.Index, err = p.parseExpr(); err != nil {
		return nil, err
	}
	if s.Mode != SubscriptPlain {
		if err := p.expect(tRParen, ")"); err != nil {
			return nil, err
		}
	}
	return s, p.expect(tRBrack, "]")
}
