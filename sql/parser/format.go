package parser

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Format prints a node as canonical SQL on one line: keywords in upper case,
// identifiers as written (backticked when they were, or when they must be),
// string literals single-quoted with BigQuery escapes, explicit AS before
// aliases, parentheses exactly where precedence needs them.
//
// For any tree produced by the parser, parsing Format's output gives a tree
// Equal to it. Trees built or rewritten by code round-trip as long as they
// respect the parser's invariants (e.g. no FieldAccess on a ColumnRef, no
// Join without ON except to an UNNEST).
func Format(n Node) string {
	var p printer
	p.node(n)
	return p.b.String()
}

type printer struct {
	b strings.Builder
}

func (p *printer) str(s string) { p.b.WriteString(s) }

func (p *printer) node(n Node) {
	switch x := n.(type) {
	case nil:
	case *OtherStatement:
		p.str(x.Text)
	case *Query:
		p.query(x)
	case *Select, *SetOp:
		p.body(x.(QueryBody))
	case *With:
		p.with(x)
	case *CTE:
		p.cte(x)
	case *SelectItem:
		p.selectItem(x)
	case *OrderItem:
		p.orderItem(x)
	case TableExpr:
		p.table(x)
	case *When:
		p.str("WHEN ")
		p.expr(x.Cond, precOr)
		p.str(" THEN ")
		p.expr(x.Result, precOr)
	case *WindowSpec:
		p.window(x)
	case Expr:
		p.expr(x, precOr)
	}
}

func (p *printer) query(q *Query) {
	if q.With != nil {
		p.with(q.With)
		p.str(" ")
	}
	p.body(q.Body)
	if len(q.OrderBy) > 0 {
		p.str(" ORDER BY ")
		p.orderItems(q.OrderBy)
	}
	if q.Limit != nil {
		p.str(" LIMIT ")
		p.expr(q.Limit, precOr)
	}
	if q.Offset != nil {
		p.str(" OFFSET ")
		p.expr(q.Offset, precOr)
	}
}

func (p *printer) with(w *With) {
	p.str("WITH ")
	if w.Recursive {
		p.str("RECURSIVE ")
	}
	for i, c := range w.CTEs {
		if i > 0 {
			p.str(", ")
		}
		p.cte(c)
	}
}

func (p *printer) cte(c *CTE) {
	p.ident(c.Name, false)
	p.str(" AS (")
	p.query(c.Query)
	p.str(")")
}

func (p *printer) body(b QueryBody) {
	switch x := b.(type) {
	case *Select:
		p.selectCore(x)
	case *SetOp:
		p.setOperand(x, x.Left, false)
		p.str(" ")
		p.str(x.Op.String())
		switch x.Quantifier {
		case QuantAll:
			p.str(" ALL")
		case QuantDistinct:
			p.str(" DISTINCT")
		}
		p.str(" ")
		p.setOperand(x, x.Right, true)
	case *Query:
		p.str("(")
		p.query(x)
		p.str(")")
	}
}

// setOperand prints an operand of a set operation. Chains are left-deep, so
// a set operation on the right, or one of a different kind on the left,
// needs parentheses.
func (p *printer) setOperand(parent *SetOp, b QueryBody, right bool) {
	if s, ok := b.(*SetOp); ok && (right || s.Op != parent.Op || s.Quantifier != parent.Quantifier) {
		p.str("(")
		p.body(s)
		p.str(")")
		return
	}
	p.body(b)
}

func (p *printer) selectCore(s *Select) {
	p.str("SELECT ")
	if s.Distinct {
		p.str("DISTINCT ")
	}
	for i, it := range s.Items {
		if i > 0 {
			p.str(", ")
		}
		p.selectItem(it)
	}
	if s.From != nil {
		p.str(" FROM ")
		p.table(s.From)
	}
	if s.Where != nil {
		p.str(" WHERE ")
		p.expr(s.Where, precOr)
	}
	if len(s.GroupBy) > 0 {
		p.str(" GROUP BY ")
		p.exprList(s.GroupBy)
	}
	if s.Having != nil {
		p.str(" HAVING ")
		p.expr(s.Having, precOr)
	}
	if s.Qualify != nil {
		p.str(" QUALIFY ")
		p.expr(s.Qualify, precOr)
	}
}

func (p *printer) selectItem(it *SelectItem) {
	if it.Star {
		if it.Expr != nil {
			p.expr(it.Expr, precPrimary)
			p.str(".")
		}
		p.str("*")
		if len(it.Except) > 0 {
			p.str(" EXCEPT (")
			for i, id := range it.Except {
				if i > 0 {
					p.str(", ")
				}
				p.ident(id, false)
			}
			p.str(")")
		}
		return
	}
	p.expr(it.Expr, precOr)
	p.alias(it.Alias)
}

func (p *printer) alias(a *Ident) {
	if a != nil {
		p.str(" AS ")
		p.ident(*a, false)
	}
}

func (p *printer) orderItems(items []*OrderItem) {
	for i, it := range items {
		if i > 0 {
			p.str(", ")
		}
		p.orderItem(it)
	}
}

func (p *printer) orderItem(it *OrderItem) {
	p.expr(it.Expr, precOr)
	if it.Desc {
		p.str(" DESC")
	}
	switch it.Nulls {
	case NullsFirst:
		p.str(" NULLS FIRST")
	case NullsLast:
		p.str(" NULLS LAST")
	}
}

func (p *printer) table(t TableExpr) {
	switch x := t.(type) {
	case *TableName:
		for i, part := range x.Parts {
			if i > 0 {
				p.str(".")
			}
			p.ident(part, i > 0)
		}
		p.alias(x.Alias)
	case *SubqueryTable:
		p.str("(")
		p.query(x.Query)
		p.str(")")
		p.alias(x.Alias)
	case *TableFunc:
		p.funcCall(x.Call)
		p.alias(x.Alias)
	case *UnnestTable:
		p.str("UNNEST(")
		p.expr(x.Expr, precOr)
		p.str(")")
		p.alias(x.Alias)
		if x.WithOffset {
			p.str(" WITH OFFSET")
			p.alias(x.OffsetAlias)
		}
	case *Join:
		p.table(x.Left)
		if x.Kind == JoinComma {
			p.str(", ")
		} else {
			p.str(" ")
			p.str(x.Kind.String())
			p.str(" ")
		}
		if _, nested := x.Right.(*Join); nested {
			p.str("(")
			p.table(x.Right)
			p.str(")")
		} else {
			p.table(x.Right)
		}
		if x.On != nil {
			p.str(" ON ")
			p.expr(x.On, precOr)
		}
		if len(x.Using) > 0 {
			p.str(" USING (")
			for i, id := range x.Using {
				if i > 0 {
					p.str(", ")
				}
				p.ident(id, false)
			}
			p.str(")")
		}
	}
}

func (p *printer) exprList(list []Expr) {
	for i, e := range list {
		if i > 0 {
			p.str(", ")
		}
		p.expr(e, precOr)
	}
}

// exprPrec is the precedence an expression prints at: a parent that needs
// more must parenthesise it.
func exprPrec(e Expr) int {
	switch x := e.(type) {
	case *Binary:
		return binaryPrec(x.Op)
	case *Like, *Between, *In, *Is:
		return precCmp
	case *Unary:
		if x.Op == OpNot {
			return precNot
		}
		return precUnary
	}
	return precPrimary
}

func binaryPrec(op BinaryOp) int {
	switch op {
	case OpOr:
		return precOr
	case OpAnd:
		return precAnd
	case OpEq, OpNe, OpLt, OpLe, OpGt, OpGe, OpIsDistinctFrom, OpIsNotDistinctFrom:
		return precCmp
	case OpBitOr:
		return precBitOr
	case OpBitXor:
		return precBitXor
	case OpBitAnd:
		return precBitAnd
	case OpShl, OpShr:
		return precShift
	case OpAdd, OpSub:
		return precAdd
	}
	return precMul
}

var binaryOpText = map[BinaryOp]string{
	OpOr: "OR", OpAnd: "AND", OpEq: "=", OpNe: "!=", OpLt: "<", OpLe: "<=", OpGt: ">",
	OpGe: ">=", OpIsDistinctFrom: "IS DISTINCT FROM", OpIsNotDistinctFrom: "IS NOT DISTINCT FROM",
	OpBitOr: "|", OpBitXor: "^", OpBitAnd: "&", OpShl: "<<", OpShr: ">>", OpAdd: "+",
	OpSub: "-", OpMul: "*", OpDiv: "/", OpConcat: "||",
}

// expr prints e, parenthesised if it binds less tightly than minPrec.
func (p *printer) expr(e Expr, minPrec int) {
	if exprPrec(e) < minPrec {
		p.str("(")
		p.exprInner(e)
		p.str(")")
		return
	}
	p.exprInner(e)
}

// postfixBase prints the operand of a subscript or field access. Literals
// are parenthesised so that `(-1)[0]` or `(1).x` do not lex differently.
func (p *printer) postfixBase(e Expr) {
	switch e.(type) {
	case *IntLit, *FloatLit:
		p.str("(")
		p.exprInner(e)
		p.str(")")
	default:
		p.expr(e, precPrimary)
	}
}

func (p *printer) exprInner(e Expr) {
	switch x := e.(type) {
	case *ColumnRef:
		for i, part := range x.Parts {
			if i > 0 {
				p.str(".")
			}
			p.ident(part, i > 0)
		}
	case *Param:
		p.str("@")
		p.str(x.Name)
	case *IntLit:
		p.str(strconv.FormatInt(x.Value, 10))
	case *FloatLit:
		p.str(formatFloat(x.Value))
	case *StringLit:
		p.quoted(x.Value, '\'', false)
	case *BytesLit:
		p.str("B")
		p.quoted(x.Value, '\'', true)
	case *BoolLit:
		if x.Value {
			p.str("TRUE")
		} else {
			p.str("FALSE")
		}
	case *NullLit:
		p.str("NULL")
	case *TypedLit:
		p.str(x.Type.String())
		p.str(" ")
		p.quoted(x.Value, '\'', false)
	case *Interval:
		p.str("INTERVAL ")
		p.expr(x.Value, precUnary)
		p.str(" ")
		p.str(x.Unit)
	case *DatePart:
		p.datePart(x)
	case *Unary:
		p.unary(x)
	case *Binary:
		prec := binaryPrec(x.Op)
		leftPrec := prec
		if prec == precCmp {
			leftPrec = prec + 1 // comparisons do not chain without parentheses
		}
		p.expr(x.L, leftPrec)
		p.str(" ")
		p.str(binaryOpText[x.Op])
		p.str(" ")
		p.expr(x.R, prec+1)
	case *Like:
		p.expr(x.X, precCmp+1)
		p.str(notText(x.Not, " NOT LIKE ", " LIKE "))
		p.expr(x.Pattern, precCmp+1)
	case *Between:
		p.expr(x.X, precCmp+1)
		p.str(notText(x.Not, " NOT BETWEEN ", " BETWEEN "))
		p.expr(x.Lo, precCmp+1)
		p.str(" AND ")
		p.expr(x.Hi, precCmp+1)
	case *In:
		p.expr(x.X, precCmp+1)
		p.str(notText(x.Not, " NOT IN ", " IN "))
		switch {
		case x.Unnest != nil:
			p.str("UNNEST(")
			p.expr(x.Unnest, precOr)
			p.str(")")
		case x.Query != nil:
			p.str("(")
			p.query(x.Query)
			p.str(")")
		default:
			p.str("(")
			p.exprList(x.List)
			p.str(")")
		}
	case *Is:
		p.expr(x.X, precCmp+1)
		p.str(notText(x.Not, " IS NOT ", " IS "))
		switch x.What {
		case IsNull:
			p.str("NULL")
		case IsTrue:
			p.str("TRUE")
		case IsFalse:
			p.str("FALSE")
		case IsUnknown:
			p.str("UNKNOWN")
		}
	case *FuncCall:
		p.funcCall(x)
	case *Extract:
		p.str("EXTRACT(")
		if x.Part != nil {
			p.datePart(x.Part)
		}
		p.str(" FROM ")
		p.expr(x.X, precOr)
		if x.TimeZone != nil {
			p.str(" AT TIME ZONE ")
			p.expr(x.TimeZone, precOr)
		}
		p.str(")")
	case *Case:
		p.str("CASE")
		if x.Operand != nil {
			p.str(" ")
			p.expr(x.Operand, precOr)
		}
		for _, w := range x.Whens {
			p.str(" WHEN ")
			p.expr(w.Cond, precOr)
			p.str(" THEN ")
			p.expr(w.Result, precOr)
		}
		if x.Else != nil {
			p.str(" ELSE ")
			p.expr(x.Else, precOr)
		}
		p.str(" END")
	case *Cast:
		if x.Safe {
			p.str("SAFE_CAST(")
		} else {
			p.str("CAST(")
		}
		p.expr(x.X, precOr)
		p.str(" AS ")
		p.typeName(x.Type)
		p.str(")")
	case *Subscript:
		p.postfixBase(x.X)
		p.str("[")
		mode := ""
		switch x.Mode {
		case SubscriptOffset:
			mode = "OFFSET"
		case SubscriptOrdinal:
			mode = "ORDINAL"
		case SubscriptSafeOffset:
			mode = "SAFE_OFFSET"
		case SubscriptSafeOrdinal:
			mode = "SAFE_ORDINAL"
		}
		if mode != "" {
			p.str(mode)
			p.str("(")
			p.expr(x.Index, precOr)
			p.str(")")
		} else {
			p.expr(x.Index, precOr)
		}
		p.str("]")
	case *FieldAccess:
		if _, isPath := x.X.(*ColumnRef); isPath {
			// Not built by the parser; parenthesised it still reads as a path.
			p.str("(")
			p.exprInner(x.X)
			p.str(")")
		} else {
			p.postfixBase(x.X)
		}
		p.str(".")
		p.ident(x.Field, true)
	case *ArrayLit:
		if x.Type != nil {
			p.str("ARRAY<")
			p.typeName(x.Type)
			p.str(">")
		}
		p.str("[")
		p.exprList(x.Elems)
		p.str("]")
	case *ArraySubquery:
		p.str("ARRAY(")
		p.query(x.Query)
		p.str(")")
	case *StructLit:
		if x.Type != nil {
			p.typeName(x.Type)
		} else {
			p.str("STRUCT")
		}
		p.str("(")
		for i, f := range x.Fields {
			if i > 0 {
				p.str(", ")
			}
			p.expr(f.Expr, precOr)
			p.alias(f.Alias)
		}
		p.str(")")
	case *Exists:
		p.str("EXISTS(")
		p.query(x.Query)
		p.str(")")
	case *ScalarSubquery:
		p.str("(")
		p.query(x.Query)
		p.str(")")
	}
}

func notText(not bool, yes, no string) string {
	if not {
		return yes
	}
	return no
}

func (p *printer) unary(x *Unary) {
	switch x.Op {
	case OpNot:
		p.str("NOT ")
		p.expr(x.X, precNot)
		return
	case OpNeg:
		p.str("-")
		// `-(1)` must not print as `-1` (a folded literal), nor `-(-x)` as
		// `--x` (a comment).
		switch y := x.X.(type) {
		case *IntLit, *FloatLit:
			p.str("(")
			p.exprInner(y)
			p.str(")")
			return
		case *Unary:
			if y.Op == OpNeg {
				p.str("(")
				p.exprInner(y)
				p.str(")")
				return
			}
		}
	case OpPlus:
		p.str("+")
	case OpBitNot:
		p.str("~")
	}
	p.expr(x.X, precUnary)
}

func (p *printer) funcCall(f *FuncCall) {
	for i, part := range f.Name {
		if i > 0 {
			p.str(".")
		}
		p.funcNamePart(part, i)
	}
	p.str("(")
	if f.Star {
		p.str("*")
	} else {
		if f.Distinct {
			p.str("DISTINCT ")
		}
		p.exprList(f.Args)
		switch f.Nulls {
		case IgnoreNulls:
			p.str(" IGNORE NULLS")
		case RespectNulls:
			p.str(" RESPECT NULLS")
		}
		if len(f.OrderBy) > 0 {
			p.str(" ORDER BY ")
			p.orderItems(f.OrderBy)
		}
		if f.Limit != nil {
			p.str(" LIMIT ")
			p.expr(f.Limit, precOr)
		}
	}
	p.str(")")
	if f.Over != nil {
		p.str(" OVER ")
		p.window(f.Over)
	}
}

// funcNamePart prints one part of a function name. IF, LEFT and RIGHT are
// reserved but callable, so they print bare.
func (p *printer) funcNamePart(id Ident, i int) {
	if i == 0 && !id.Quoted && keywordFuncs[lookupKeyword(id.Name)] {
		p.str(id.Name)
		return
	}
	p.ident(id, i > 0)
}

func (p *printer) window(w *WindowSpec) {
	p.str("(")
	sep := ""
	if len(w.PartitionBy) > 0 {
		p.str("PARTITION BY ")
		p.exprList(w.PartitionBy)
		sep = " "
	}
	if len(w.OrderBy) > 0 {
		p.str(sep)
		p.str("ORDER BY ")
		p.orderItems(w.OrderBy)
		sep = " "
	}
	if f := w.Frame; f != nil {
		p.str(sep)
		if f.Unit == FrameRange {
			p.str("RANGE ")
		} else {
			p.str("ROWS ")
		}
		if f.End != nil {
			p.str("BETWEEN ")
			p.frameBound(f.Start)
			p.str(" AND ")
			p.frameBound(*f.End)
		} else {
			p.frameBound(f.Start)
		}
	}
	p.str(")")
}

func (p *printer) frameBound(b FrameBound) {
	switch b.Kind {
	case UnboundedPreceding:
		p.str("UNBOUNDED PRECEDING")
	case UnboundedFollowing:
		p.str("UNBOUNDED FOLLOWING")
	case CurrentRow:
		p.str("CURRENT ROW")
	case Preceding, Following:
		if b.Offset != nil {
			p.expr(b.Offset, precCmp+1)
		}
		if b.Kind == Preceding {
			p.str(" PRECEDING")
		} else {
			p.str(" FOLLOWING")
		}
	}
}

func (p *printer) datePart(d *DatePart) {
	p.str(d.Name)
	if d.Arg != "" {
		p.str("(")
		p.str(d.Arg)
		p.str(")")
	}
}

func (p *printer) typeName(t *TypeName) {
	if t == nil {
		return
	}
	p.str(t.Name)
	switch t.Kind {
	case TypeArray:
		p.str("<")
		p.typeName(t.Elem)
		p.str(">")
	case TypeStruct:
		p.str("<")
		for i, f := range t.Fields {
			if i > 0 {
				p.str(", ")
			}
			if f.Name != nil {
				p.ident(*f.Name, false)
				p.str(" ")
			}
			p.typeName(f.Type)
		}
		p.str(">")
	}
	if len(t.Params) > 0 {
		p.str("(")
		for i, v := range t.Params {
			if i > 0 {
				p.str(", ")
			}
			p.str(strconv.FormatInt(v, 10))
		}
		p.str(")")
	}
}

// formatFloat prints a float so that it lexes back as a float literal with
// the same value.
func formatFloat(v float64) string {
	s := strconv.FormatFloat(v, 'g', -1, 64)
	if !strings.ContainsAny(s, ".eEn") { // n: NaN/Inf, which literals never produce
		s += ".0"
	}
	return s
}

// ident prints a name: bare when it was written bare and still lexes as the
// same name, backticked otherwise. afterDot is true for path parts after the
// first, where reserved words are allowed bare.
func (p *printer) ident(id Ident, afterDot bool) {
	if !id.Quoted && isBareName(id.Name) && (afterDot || !isReservedWord(id.Name)) {
		p.str(id.Name)
		return
	}
	p.quoted(id.Name, '`', false)
}

// isBareName reports whether s lexes as one unquoted word.
func isBareName(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		switch {
		case r < utf8.RuneSelf && isIdentStart(byte(r)):
		case r < utf8.RuneSelf && isDigit(byte(r)):
			if i == 0 {
				return false
			}
		case r >= utf8.RuneSelf && (unicode.IsLetter(r) || unicode.IsDigit(r)):
		default:
			return false
		}
	}
	return true
}

// quoted prints s between quote characters with BigQuery escapes. Bytes that
// are not valid UTF-8 (and, for bytes literals, every non-ASCII byte) print
// as \xhh so the output is valid UTF-8 and decodes to the same bytes.
func (p *printer) quoted(s string, quote byte, bytes bool) {
	const hex = "0123456789abcdef"
	b := &p.b
	b.WriteByte(quote)
	for i := 0; i < len(s); {
		c := s[i]
		switch c {
		case '\\':
			b.WriteString(`\\`)
		case quote:
			b.WriteByte('\\')
			b.WriteByte(quote)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			if c < 0x20 || c == 0x7f || (c >= utf8.RuneSelf && bytes) {
				b.WriteString(`\x`)
				b.WriteByte(hex[c>>4])
				b.WriteByte(hex[c&0xf])
				break
			}
			if c < utf8.RuneSelf {
				b.WriteByte(c)
				break
			}
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
				b.WriteString(`\x`)
				b.WriteByte(hex[c>>4])
				b.WriteByte(hex[c&0xf])
				break
			}
			b.WriteString(s[i : i+size])
			i += size
			continue
		}
		i++
	}
	b.WriteByte(quote)
}
