package parser

import (
	"strconv"
	"unicode/utf8"
)

// Parse parses sql, which must hold exactly one query (a trailing ';' is
// allowed). Errors:
//   - *Error for a syntax error, an input over MaxInputBytes or nesting over
//     MaxNesting / MaxTreeHeight;
//   - *ValidationError of kind KindEmpty (no statement), KindNotSelect (a
//     statement that is not a query) or KindMultipleStatements.
//
// Parse does not apply the other validation rules; see Validate.
func Parse(sql string) (*Query, error) {
	stmts, err := ParseStatements(sql)
	if err != nil {
		return nil, err
	}
	return singleQuery(stmts, KindNotSelect)
}

// singleQuery applies Logflare's statement rules, in Logflare's order: no
// statement at all, then any non-query statement, then more than one.
func singleQuery(stmts []Statement, notSelect ValidationKind) (*Query, error) {
	if len(stmts) == 0 {
		return nil, &ValidationError{Kind: KindEmpty}
	}
	for _, st := range stmts {
		if o, ok := st.(*OtherStatement); ok {
			return nil, &ValidationError{Kind: notSelect, Name: o.Keyword, Pos: o.At}
		}
	}
	if len(stmts) > 1 {
		return nil, &ValidationError{Kind: KindMultipleStatements, Pos: stmts[1].Pos()}
	}
	return stmts[0].(*Query), nil
}

// ParseStatements parses every ';'-separated statement of sql. Queries are
// parsed fully; other statements (INSERT, CREATE, SET, ...) are recognised by
// their leading keyword and returned as *OtherStatement. Empty statements
// (";;") are skipped, so "" and ";" give no statements and no error.
func ParseStatements(sql string) ([]Statement, error) {
	stmts, _, err := parseStatements(sql)
	if err != nil {
		return nil, err
	}
	return stmts, nil
}

// parseStatements is ParseStatements, also returning the parser (for tests
// that check its internal bounds).
func parseStatements(sql string) ([]Statement, *parser, *Error) {
	if len(sql) > MaxInputBytes {
		return nil, nil, &Error{
			Msg: "Query is " + strconv.Itoa(len(sql)) + " bytes, more than the maximum of " +
				strconv.Itoa(MaxInputBytes),
			Pos: Pos{Line: 1, Col: 1},
		}
	}
	sc := getScratch()
	defer sc.release()
	lx, lerr := lex(sql, sc)
	if lerr != nil {
		return nil, nil, lerr
	}
	sc.match = matchParens(lx.toks, sc.match[:0], &sc.parenStack)
	p := &parser{
		lx: lx, src: sql, toks: lx.toks, values: lx.values, match: sc.match, splitGt: -1,
		exprStack: sc.exprStack[:0], itemStack: sc.itemStack[:0],
	}
	defer func() { sc.exprStack, sc.itemStack = p.exprStack, p.itemStack }()
	var stmts []Statement
	for {
		for p.accept(tSemi) {
		}
		if p.is(tEOF) {
			break
		}
		st, err := p.parseStatement()
		if err != nil {
			return nil, nil, err
		}
		if q, ok := st.(*Query); ok && p.treeHeightBound(lx.chainToks) > MaxTreeHeight {
			if herr := checkHeight(q); herr != nil {
				return nil, nil, herr
			}
		}
		stmts = append(stmts, st)
		if !p.is(tSemi) && !p.is(tEOF) {
			return nil, nil, p.errExpected("end of statement")
		}
	}
	return stmts, p, nil
}

// matchParens pairs every '(' token with its ')' (unpaired ones get -1),
// appending to match and using *stack as scratch.
func matchParens(toks []token, match []int32, stack *[]int32) []int32 {
	match = reuse(match, len(toks))[:len(toks)]
	st := (*stack)[:0]
	defer func() { *stack = st }()
	for i := range toks {
		match[i] = -1
		switch toks[i].kind {
		case tLParen:
			st = append(st, int32(i))
		case tRParen:
			if n := len(st); n > 0 {
				match[st[n-1]] = int32(i)
				st = st[:n-1]
			}
		}
	}
	return match
}

// treeHeightBound is an upper bound of the height of any tree parsed so
// far, cheap enough to skip the exact check for ordinary queries. Along any
// root-to-leaf path, levels come either from recursion, which enter counts
// (at most treeLevelsPerNesting levels per nesting level: e.g. Query, Select,
// SelectItem before the next parseExpr), or from loops that extend a chain by
// one level per chain token.
func (p *parser) treeHeightBound(chainToks int) int {
	const treeLevelsPerNesting = 6
	return treeLevelsPerNesting*(p.maxDepth+1) + chainToks
}

// parser is a recursive-descent parser over the token slice. Each parse
// function returns its node or the first error; nothing panics.
type parser struct {
	lx     *lexer
	src    string
	toks   []token
	values []string
	// match[i] is the index of the ')' closing the '(' at toks[i], or -1.
	match []int32
	i     int
	depth int // current nesting, bounded by MaxNesting
	// maxDepth is the deepest nesting reached.
	maxDepth int
	// splitGt is the index of a '>>' token whose first '>' has closed a
	// type (see expectTypeClose), or -1.
	splitGt int

	// Allocation (see alloc.go).
	colRefs   slab[ColumnRef]
	items     slab[SelectItem]
	idents    slab[Ident]
	binaries  slab[Binary]
	strs      slab[StringLit]
	funcs     slab[FuncCall]
	identBuf  []Ident
	exprStack []Expr
	itemStack []*SelectItem
}

func (p *parser) tok() *token { return &p.toks[p.i] }

// peek returns the token n positions ahead (the EOF token past the end).
func (p *parser) peek(n int) *token {
	j := p.i + n
	if j >= len(p.toks) {
		j = len(p.toks) - 1
	}
	return &p.toks[j]
}

func (p *parser) advance() *token {
	t := &p.toks[p.i]
	if t.kind != tEOF {
		p.i++
	}
	return t
}

func (p *parser) pos() Pos { return p.tokPos(p.tok()) }

func (p *parser) tokPos(t *token) Pos { return p.lx.pos(int(t.off)) }

func (p *parser) text(t *token) string { return p.src[t.off:t.end] }

func (p *parser) is(k tokKind) bool { return p.toks[p.i].kind == k }

func (p *parser) accept(k tokKind) bool {
	if p.is(k) {
		p.i++
		return true
	}
	return false
}

func (p *parser) expect(k tokKind, what string) *Error {
	if p.accept(k) {
		return nil
	}
	return p.errExpected(what)
}

func (p *parser) isKw(k keyword) bool {
	t := &p.toks[p.i]
	return t.kind == tWord && t.kw == k
}

func (p *parser) acceptKw(k keyword) bool {
	if p.isKw(k) {
		p.i++
		return true
	}
	return false
}

func (p *parser) expectKw(k keyword) *Error {
	if p.acceptKw(k) {
		return nil
	}
	return p.errExpected(keywordNames[k])
}

// tokIsKw reports whether t is the keyword k.
func tokIsKw(t *token, k keyword) bool { return t.kind == tWord && t.kw == k }

func (p *parser) errExpected(what string) *Error {
	t := p.tok()
	if t.kind == tIllegal {
		return p.illegalTokenError(t)
	}
	return &Error{Msg: "Expected: " + what + ", found: " + describeToken(p.src, *t), Pos: p.tokPos(t)}
}

// illegalTokenError describes a character no SQL construct starts with.
func (p *parser) illegalTokenError(t *token) *Error {
	text := p.src[t.off:t.end]
	if text[0] == '@' {
		return &Error{Msg: "Expected: parameter name, found: @", Pos: p.tokPos(t)}
	}
	r, _ := utf8.DecodeRuneInString(text)
	return &Error{Msg: "Unexpected character " + quoteRune(r), Pos: p.tokPos(t)}
}

// enter counts one level of nesting; every recursive path through the
// grammar goes through it, so recursion is bounded by MaxNesting.
func (p *parser) enter() *Error {
	p.depth++
	if p.depth > p.maxDepth {
		p.maxDepth = p.depth
	}
	if p.depth > MaxNesting {
		return &Error{Msg: "Query nesting exceeds the maximum depth of " + strconv.Itoa(MaxNesting), Pos: p.pos()}
	}
	return nil
}

func (p *parser) leave() { p.depth-- }

// isNameTok reports whether t can be used as a name: a backticked identifier
// or an unquoted word that is not a reserved keyword.
func isNameTok(t *token) bool {
	return t.kind == tQuoted || (t.kind == tWord && !reserved[t.kw])
}

// isFieldNameTok reports whether t can follow a dot in a path: any word,
// reserved or not, or a backticked identifier.
func isFieldNameTok(t *token) bool { return t.kind == tQuoted || t.kind == tWord }

// identOf builds the Ident of a word or backticked token.
func (p *parser) identOf(t *token) Ident {
	if t.kind == tQuoted {
		return Ident{At: p.tokPos(t), Name: p.values[t.val], Quoted: true}
	}
	return Ident{At: p.tokPos(t), Name: p.text(t)}
}

// parseIdent parses a name (unquoted non-reserved word or backticked).
func (p *parser) parseIdent() (Ident, *Error) {
	t := p.tok()
	if !isNameTok(t) {
		return Ident{}, p.errExpected("identifier")
	}
	p.i++
	return p.identOf(t), nil
}

// parseOptAlias parses `[AS] alias` if present.
func (p *parser) parseOptAlias() (*Ident, *Error) {
	if p.acceptKw(kwAs) {
		id, err := p.parseIdent()
		if err != nil {
			return nil, err
		}
		a := p.idents.alloc()
		*a = id
		return a, nil
	}
	if isNameTok(p.tok()) {
		a := p.idents.alloc()
		*a = p.identOf(p.advance())
		return a, nil
	}
	return nil, nil
}

// ---------------------------------------------------------------------------
// Statements

// otherStatementKeywords are leading keywords of statements that are not
// queries. They are recognised so validation can answer "Only SELECT queries
// allowed" instead of a syntax error.
var otherStatementKeywords = map[string]bool{
	"insert": true, "update": true, "delete": true, "merge": true, "truncate": true,
	"drop": true, "create": true, "alter": true, "grant": true, "revoke": true,
	"set": true, "call": true, "execute": true, "exec": true, "copy": true,
	"declare": true, "begin": true, "commit": true, "rollback": true, "start": true,
	"end": true, "show": true, "do": true, "export": true, "load": true, "assert": true,
	"raise": true, "return": true, "explain": true, "describe": true, "desc": true,
	"use": true, "vacuum": true, "analyze": true, "lock": true, "unlock": true,
	"replace": true, "upsert": true, "values": true, "table": true, "loop": true,
	"while": true, "repeat": true, "for": true, "if": true, "break": true,
	"leave": true, "continue": true, "iterate": true, "comment": true, "refresh": true,
	"cluster": true, "reindex": true, "listen": true, "notify": true, "unlisten": true,
	"prepare": true, "deallocate": true, "savepoint": true, "release": true,
	"abort": true, "checkpoint": true, "discard": true, "fetch": true, "move": true,
	"close": true, "optimize": true, "kill": true, "rename": true, "attach": true,
	"detach": true, "undrop": true, "system": true, "install": true, "pragma": true,
}

// dmlAfterWith are the statements a WITH clause may introduce besides a query.
var dmlAfterWith = map[string]bool{"insert": true, "update": true, "delete": true, "merge": true}

func (p *parser) parseStatement() (Statement, *Error) {
	t := p.tok()
	switch {
	case tokIsKw(t, kwSelect) || t.kind == tLParen:
		return p.parseQuery()
	case tokIsKw(t, kwWith):
		start := p.i
		if err := p.enter(); err != nil {
			return nil, err
		}
		defer p.leave()
		with, err := p.parseWith()
		if err != nil {
			return nil, err
		}
		if w := p.tok(); w.kind == tWord {
			if _, ok := lookupLower(dmlAfterWith, p.text(w)); ok {
				return p.skipOtherStatement(start, p.i), nil
			}
		}
		return p.parseQueryAfterWith(p.tokPos(&p.toks[start]), with)
	case t.kind == tWord:
		if _, ok := lookupLower(otherStatementKeywords, p.text(t)); ok {
			return p.skipOtherStatement(p.i, p.i), nil
		}
	}
	return nil, p.errExpected("an SQL statement")
}

// skipOtherStatement consumes a non-query statement starting at token start
// up to the next ';' outside parentheses. kwTok is the token naming it.
func (p *parser) skipOtherStatement(start, kwTok int) *OtherStatement {
	depth := 0
	for {
		t := p.tok()
		if t.kind == tEOF || (t.kind == tSemi && depth <= 0) {
			break
		}
		switch t.kind {
		case tLParen:
			depth++
		case tRParen:
			depth--
		}
		p.i++
	}
	first := &p.toks[start]
	end := first.end
	if p.i > start {
		end = p.toks[p.i-1].end
	}
	return &OtherStatement{
		At:      p.tokPos(first),
		Keyword: upperASCII(p.text(&p.toks[kwTok])),
		Text:    p.src[first.off:end],
	}
}

func upperASCII(s string) string {
	for i := 0; i < len(s); i++ {
		if 'a' <= s[i] && s[i] <= 'z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if 'a' <= b[j] && b[j] <= 'z' {
					b[j] -= 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}

// ---------------------------------------------------------------------------
// Queries

// parseQuery parses [WITH ...] body [ORDER BY] [LIMIT] [OFFSET].
func (p *parser) parseQuery() (*Query, *Error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer p.leave()
	start := p.pos()
	var with *With
	if p.isKw(kwWith) {
		var err *Error
		if with, err = p.parseWith(); err != nil {
			return nil, err
		}
	}
	return p.parseQueryAfterWith(start, with)
}

func (p *parser) parseQueryAfterWith(start Pos, with *With) (*Query, *Error) {
	body, err := p.parseSetOps(1)
	if err != nil {
		return nil, err
	}
	q := &Query{At: start, With: with, Body: body}
	if p.isKw(kwOrder) {
		if q.OrderBy, err = p.parseOrderBy(); err != nil {
			return nil, err
		}
	}
	if p.acceptKw(kwLimit) {
		if q.Limit, err = p.parseExpr(); err != nil {
			return nil, err
		}
	}
	if p.acceptKw(kwOffset) {
		if q.Offset, err = p.parseExpr(); err != nil {
			return nil, err
		}
	}
	return q, nil
}

func (p *parser) parseWith() (*With, *Error) {
	w := &With{At: p.pos()}
	p.advance() // WITH
	w.Recursive = p.acceptKw(kwRecursive)
	for {
		at := p.pos()
		name, err := p.parseIdent()
		if err != nil {
			return nil, err
		}
		if err := p.expectKw(kwAs); err != nil {
			return nil, err
		}
		if err := p.expect(tLParen, "("); err != nil {
			return nil, err
		}
		q, err := p.parseQuery()
		if err != nil {
			return nil, err
		}
		if err := p.expect(tRParen, ")"); err != nil {
			return nil, err
		}
		w.CTEs = append(w.CTEs, &CTE{At: at, Name: name, Query: q})
		if !p.accept(tComma) {
			return w, nil
		}
	}
}

// setOpAt returns the set operator at the current token and its precedence
// (INTERSECT binds tighter than UNION and EXCEPT), or 0.
func (p *parser) setOpAt() (SetOpKind, int) {
	t := p.tok()
	if t.kind != tWord {
		return 0, 0
	}
	switch t.kw {
	case kwUnion:
		return Union, 1
	case kwExcept:
		return Except, 1
	case kwIntersect:
		return Intersect, 2
	}
	return 0, 0
}

// parseSetOps parses a chain of set operations whose operators bind at least
// as tightly as minPrec. Chains are built iteratively, left-deep.
func (p *parser) parseSetOps(minPrec int) (QueryBody, *Error) {
	left, err := p.parseSetOperand()
	if err != nil {
		return nil, err
	}
	for {
		op, prec := p.setOpAt()
		if op == 0 || prec < minPrec {
			return left, nil
		}
		p.advance()
		quant := QuantNone
		if p.acceptKw(kwAll) {
			quant = QuantAll
		} else if p.acceptKw(kwDistinct) {
			quant = QuantDistinct
		}
		right, err := p.parseSetOps(prec + 1)
		if err != nil {
			return nil, err
		}
		left = &SetOp{At: left.Pos(), Op: op, Quantifier: quant, Left: left, Right: right}
	}
}

// parseSetOperand parses a SELECT or a parenthesised query. Parentheses that
// only group (no WITH, ORDER BY, LIMIT or OFFSET inside) are dropped.
func (p *parser) parseSetOperand() (QueryBody, *Error) {
	switch {
	case p.isKw(kwSelect):
		return p.parseSelect()
	case p.is(tLParen):
		p.advance()
		q, err := p.parseQuery()
		if err != nil {
			return nil, err
		}
		if err := p.expect(tRParen, ")"); err != nil {
			return nil, err
		}
		if q.With == nil && q.OrderBy == nil && q.Limit == nil && q.Offset == nil {
			return q.Body, nil
		}
		return q, nil
	}
	return nil, p.errExpected("SELECT, VALUES, or a subquery in the query body")
}

func (p *parser) parseSelect() (*Select, *Error) {
	s := &Select{At: p.pos()}
	p.advance() // SELECT
	if p.acceptKw(kwDistinct) {
		s.Distinct = true
	} else {
		p.acceptKw(kwAll)
	}
	start := len(p.itemStack)
	for {
		item, err := p.parseSelectItem()
		if err != nil {
			// A failed attempt may be retried another way (see
			// parseParenExpr): leave the shared stack as it was.
			p.itemStack = p.itemStack[:start]
			return nil, err
		}
		p.itemStack = append(p.itemStack, item)
		if !p.accept(tComma) {
			break
		}
		// BigQuery allows a trailing comma at the end of the select list.
		if t := p.tok(); tokIsKw(t, kwFrom) || t.kind == tRParen || t.kind == tSemi || t.kind == tEOF {
			break
		}
	}
	s.Items = p.finishItems(start)
	var err *Error
	if p.acceptKw(kwFrom) {
		if s.From, err = p.parseFrom(); err != nil {
			return nil, err
		}
	}
	if p.acceptKw(kwWhere) {
		if s.Where, err = p.parseExpr(); err != nil {
			return nil, err
		}
	}
	if p.isKw(kwGroup) {
		p.advance()
		if err := p.expectKw(kwBy); err != nil {
			return nil, err
		}
		if s.GroupBy, err = p.parseExprList(); err != nil {
			return nil, err
		}
	}
	if p.acceptKw(kwHaving) {
		if s.Having, err = p.parseExpr(); err != nil {
			return nil, err
		}
	}
	if p.acceptKw(kwQualify) {
		if s.Qualify, err = p.parseExpr(); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// parseExprList parses expr {, expr}.
func (p *parser) parseExprList() ([]Expr, *Error) {
	start := len(p.exprStack)
	for {
		e, err := p.parseExpr()
		if err != nil {
			p.exprStack = p.exprStack[:start]
			return nil, err
		}
		p.exprStack = append(p.exprStack, e)
		if !p.accept(tComma) {
			return p.finishExprs(start), nil
		}
	}
}

func (p *parser) parseSelectItem() (*SelectItem, *Error) {
	item := p.items.alloc()
	item.At = p.pos()
	if p.is(tStar) {
		p.advance()
		item.Star = true
		return item, p.parseStarExcept(item)
	}
	// A qualified wildcard: name {. name} . *
	if isNameTok(p.tok()) {
		k := p.i + 1
		for k+1 < len(p.toks) && p.toks[k].kind == tDot {
			next := &p.toks[k+1]
			if next.kind == tStar {
				parts := p.identRun((k - p.i + 1) / 2)
				for j := p.i; j < k; j += 2 {
					parts[(j-p.i)/2] = p.identOf(&p.toks[j])
				}
				item.Expr = &ColumnRef{At: item.At, Parts: parts}
				item.Star = true
				p.i = k + 2
				return item, p.parseStarExcept(item)
			}
			if !isFieldNameTok(next) {
				break
			}
			k += 2
		}
	}
	e, err := p.parseExpr()
	if err != nil {
		return nil, err
	}
	item.Expr = e
	if item.Alias, err = p.parseOptAlias(); err != nil {
		return nil, err
	}
	return item, nil
}

// parseStarExcept parses the `EXCEPT (a, b)` that may follow a wildcard.
func (p *parser) parseStarExcept(item *SelectItem) *Error {
	if !p.isKw(kwExcept) || p.peek(1).kind != tLParen {
		return nil
	}
	p.i += 2
	for {
		id, err := p.parseIdent()
		if err != nil {
			return err
		}
		item.Except = append(item.Except, id)
		if !p.accept(tComma) {
			break
		}
	}
	return p.expect(tRParen, ")")
}

// parseOrderBy parses ORDER BY key {, key}.
func (p *parser) parseOrderBy() ([]*OrderItem, *Error) {
	p.advance() // ORDER
	if err := p.expectKw(kwBy); err != nil {
		return nil, err
	}
	var items []*OrderItem
	for {
		it := &OrderItem{At: p.pos()}
		var err *Error
		if it.Expr, err = p.parseExpr(); err != nil {
			return nil, err
		}
		if p.acceptKw(kwDesc) {
			it.Desc = true
		} else {
			p.acceptKw(kwAsc)
		}
		if p.acceptKw(kwNulls) {
			switch {
			case p.acceptKw(kwFirst):
				it.Nulls = NullsFirst
			case p.acceptKw(kwLast):
				it.Nulls = NullsLast
			default:
				return nil, p.errExpected("FIRST or LAST")
			}
		}
		items = append(items, it)
		if !p.accept(tComma) {
			return items, nil
		}
	}
}

// parenIsQuery decides, without backtracking, whether the '(' at the
// current token opens a query or something else (an expression, an
// expression list, a join group). The parenthesised text is a query when it
// starts with SELECT or WITH, or when it starts with a parenthesised query
// that is followed by the closing ')', a set operator, ORDER BY, LIMIT or
// OFFSET; `((SELECT 1) + 1)` and `((SELECT 1), 2)` are not queries. It looks
// only at leading parentheses, using the precomputed matching ')', so each
// decision costs one step per nested leading '('.
func (p *parser) parenIsQuery() bool {
	i := p.i
	for {
		j := i + 1
		if j >= len(p.toks) {
			return false
		}
		t := &p.toks[j]
		if tokIsKw(t, kwSelect) || tokIsKw(t, kwWith) {
			return true
		}
		if t.kind != tLParen {
			return false
		}
		close := p.match[j]
		if close < 0 {
			return false
		}
		switch next := &p.toks[close+1]; {
		case next.kind == tRParen:
			i = j // the content is exactly (X): decide on X
		case next.kind == tWord && (next.kw == kwUnion || next.kw == kwIntersect || next.kw == kwExcept ||
			next.kw == kwOrder || next.kw == kwLimit || next.kw == kwOffset):
			i = j // X <set op> ...: a query if X is one
		default:
			return false
		}
	}
}

// parseParenQuery parses `( query )`.
func (p *parser) parseParenQuery() (*Query, *Error) {
	if err := p.expect(tLParen, "("); err != nil {
		return nil, err
	}
	q, err := p.parseQuery()
	if err != nil {
		return nil, err
	}
	if err := p.expect(tRParen, ")"); err != nil {
		return nil, err
	}
	return q, nil
}
