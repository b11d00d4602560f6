package parser

import (
	"strconv"
	"strings"
)

// parseType parses a data type: a scalar type name (BigQuery or Postgres
// spelling, optionally with parameters), ARRAY<T> or STRUCT<[name] T, ...>.
func (p *parser) parseType() (*TypeName, *Error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer p.leave()
	t := p.tok()
	if t.kind != tWord {
		return nil, p.errExpected("a data type")
	}
	typ := &TypeName{At: p.tokPos(t), Name: p.text(t)}
	switch t.kw {
	case kwArray:
		p.advance()
		typ.Kind = TypeArray
		if err := p.expect(tLt, "<"); err != nil {
			return nil, err
		}
		elem, err := p.parseType()
		if err != nil {
			return nil, err
		}
		typ.Elem = elem
		return typ, p.expectTypeClose()
	case kwStruct:
		p.advance()
		typ.Kind = TypeStruct
		if err := p.expect(tLt, "<"); err != nil {
			return nil, err
		}
		if p.is(tGt) || p.is(tShr) {
			return typ, p.expectTypeClose()
		}
		for {
			var f StructTypeField
			// A field name is followed by its type (a word); an unnamed
			// field's type is followed by ',', '>', '<' or '('.
			if isNameTok(p.tok()) && p.peek(1).kind == tWord {
				id := p.identOf(p.advance())
				f.Name = &id
			}
			ft, err := p.parseType()
			if err != nil {
				return nil, err
			}
			f.Type = ft
			typ.Fields = append(typ.Fields, f)
			if !p.accept(tComma) {
				break
			}
		}
		return typ, p.expectTypeClose()
	}
	kind, ok := lookupLower(typeKinds, typ.Name)
	if !ok {
		return nil, p.errExpected("a data type")
	}
	p.advance()
	typ.Kind = kind
	// Postgres' two-word spelling.
	if strings.EqualFold(typ.Name, "double") {
		if n := p.tok(); n.kind == tWord && strings.EqualFold(p.text(n), "precision") {
			typ.Name += " " + p.text(n)
			p.advance()
		}
	}
	if p.is(tLParen) {
		p.advance()
		for {
			n := p.tok()
			if n.kind != tInt {
				return nil, p.errExpected("a type parameter")
			}
			v, err := strconv.ParseInt(p.text(n), 0, 64)
			if err != nil {
				return nil, &Error{Msg: "Invalid type parameter: " + p.text(n), Pos: p.tokPos(n)}
			}
			typ.Params = append(typ.Params, v)
			p.advance()
			if !p.accept(tComma) {
				break
			}
		}
		if err := p.expect(tRParen, ")"); err != nil {
			return nil, err
		}
	}
	return typ, nil
}

// expectTypeClose consumes the '>' closing ARRAY<...> or STRUCT<...>. A '>>'
// token closes two nested types: the first call consumes its first half
// (recorded in splitGt, the token is left in place), the second call the
// rest. Tokens are never modified.
func (p *parser) expectTypeClose() *Error {
	switch p.tok().kind {
	case tGt:
		p.advance()
		return nil
	case tShr:
		if p.splitGt == p.i {
			p.splitGt = -1
			p.advance()
		} else {
			p.splitGt = p.i
		}
		return nil
	}
	return p.errExpected(">")
}
