package parser

// parseFrom parses the table expression of a FROM clause: table primaries
// combined by commas and joins, left to right (BigQuery evaluates comma
// joins and explicit joins in order, so `a, b JOIN c` is (a, b) JOIN c).
func (p *parser) parseFrom() (TableExpr, *Error) {
	left, err := p.parseTablePrimary()
	if err != nil {
		return nil, err
	}
	for {
		kind, ok, err := p.parseJoinKeyword()
		if err != nil {
			return nil, err
		}
		if !ok {
			return left, nil
		}
		right, err := p.parseTablePrimary()
		if err != nil {
			return nil, err
		}
		j := &Join{At: left.Pos(), Kind: kind, Left: left, Right: right}
		if kind != JoinComma && kind != JoinCross {
			switch {
			case p.acceptKw(kwOn):
				if j.On, err = p.parseExpr(); err != nil {
					return nil, err
				}
			case p.acceptKw(kwUsing):
				if j.Using, err = p.parseUsing(); err != nil {
					return nil, err
				}
			default:
				// BigQuery lets a join to a correlated UNNEST omit the
				// condition: `LEFT JOIN UNNEST(metadata) f1`.
				if _, isUnnest := right.(*UnnestTable); !isUnnest {
					return nil, p.errExpected("ON or USING")
				}
			}
		}
		left = j
	}
}

// parseJoinKeyword consumes a comma or a join keyword sequence and reports
// the join kind, or ok=false when the FROM clause ends here.
func (p *parser) parseJoinKeyword() (JoinKind, bool, *Error) {
	t := p.tok()
	if t.kind == tComma {
		p.advance()
		return JoinComma, true, nil
	}
	if t.kind != tWord {
		return 0, false, nil
	}
	var kind JoinKind
	switch t.kw {
	case kwCross:
		kind = JoinCross
	case kwJoin:
		p.advance()
		return JoinInner, true, nil
	case kwInner:
		kind = JoinInner
	case kwLeft:
		kind = JoinLeft
	case kwRight:
		kind = JoinRight
	case kwFull:
		kind = JoinFull
	default:
		return 0, false, nil
	}
	p.advance()
	if kind == JoinLeft || kind == JoinRight || kind == JoinFull {
		p.acceptKw(kwOuter)
	}
	if err := p.expectKw(kwJoin); err != nil {
		return 0, false, err
	}
	return kind, true, nil
}

func (p *parser) parseUsing() ([]Ident, *Error) {
	if err := p.expect(tLParen, "("); err != nil {
		return nil, err
	}
	var ids []Ident
	for {
		id, err := p.parseIdent()
		if err != nil {
			return nil, err
		}
		ids = append(ids, id)
		if !p.accept(tComma) {
			break
		}
	}
	return ids, p.expect(tRParen, ")")
}

// parseTablePrimary parses one FROM item: a table name, a table function
// call, a subquery, an UNNEST, or a parenthesised join group.
func (p *parser) parseTablePrimary() (TableExpr, *Error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer p.leave()
	t := p.tok()
	at := p.tokPos(t)
	switch {
	case t.kind == tLParen:
		// `((SELECT ...) AS x JOIN y ON ...)` starts like a subquery but is
		// a join group.
		if p.parenIsQuery() {
			return p.parseSubqueryTable(at)
		}
		return p.parseJoinGroup()
	case tokIsKw(t, kwUnnest):
		return p.parseUnnestTable(at)
	case isNameTok(t):
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
			call, err := p.parseFuncCall(at, parts)
			if err != nil {
				return nil, err
			}
			alias, err := p.parseOptAlias()
			if err != nil {
				return nil, err
			}
			return &TableFunc{At: at, Call: call.(*FuncCall), Alias: alias}, nil
		}
		alias, err := p.parseOptAlias()
		if err != nil {
			return nil, err
		}
		return &TableName{At: at, Parts: parts, Alias: alias}, nil
	}
	return nil, p.errExpected("identifier")
}

func (p *parser) parseSubqueryTable(at Pos) (TableExpr, *Error) {
	q, err := p.parseParenQuery()
	if err != nil {
		return nil, err
	}
	alias, err := p.parseOptAlias()
	if err != nil {
		return nil, err
	}
	return &SubqueryTable{At: at, Query: q, Alias: alias}, nil
}

// parseJoinGroup parses `( from-items )`. The parentheses are not kept: the
// grouping is the shape of the returned tree.
func (p *parser) parseJoinGroup() (TableExpr, *Error) {
	p.advance() // (
	inner, err := p.parseFrom()
	if err != nil {
		return nil, err
	}
	if err := p.expect(tRParen, ")"); err != nil {
		return nil, err
	}
	return inner, nil
}

func (p *parser) parseUnnestTable(at Pos) (TableExpr, *Error) {
	p.advance() // UNNEST
	if err := p.expect(tLParen, "("); err != nil {
		return nil, err
	}
	e, err := p.parseExpr()
	if err != nil {
		return nil, err
	}
	if err := p.expect(tRParen, ")"); err != nil {
		return nil, err
	}
	u := &UnnestTable{At: at, Expr: e}
	if u.Alias, err = p.parseOptAlias(); err != nil {
		return nil, err
	}
	if p.isKw(kwWith) && tokIsKw(p.peek(1), kwOffset) {
		p.i += 2
		u.WithOffset = true
		if u.OffsetAlias, err = p.parseOptAlias(); err != nil {
			return nil, err
		}
	}
	return u, nil
}
