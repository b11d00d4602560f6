package parser

import (
	"strconv"
	"strings"
	"testing"
)

// mustParse parses a single query or fails the test.
func mustParse(t testing.TB, sql string) *Query {
	t.Helper()
	q, err := Parse(sql)
	if err != nil {
		t.Fatalf("Parse(%q): %v", sql, err)
	}
	return q
}

// selectOf returns the query's body as a *Select or fails the test.
func selectOf(t testing.TB, q *Query) *Select {
	t.Helper()
	s, ok := q.Body.(*Select)
	if !ok {
		t.Fatalf("body is %T, want *Select", q.Body)
	}
	return s
}

// parseExprString parses "SELECT <s>" and returns the first item's
// expression.
func parseExprString(t testing.TB, s string) Expr {
	t.Helper()
	q := mustParse(t, "SELECT "+s)
	sel := selectOf(t, q)
	if len(sel.Items) != 1 {
		t.Fatalf("SELECT %s: %d items, want 1", s, len(sel.Items))
	}
	if sel.Items[0].Alias != nil {
		t.Fatalf("SELECT %s: unexpected alias %q", s, sel.Items[0].Alias.Name)
	}
	return sel.Items[0].Expr
}

// sx renders an expression as an S-expression that shows the tree's shape:
// operators with their operands in parentheses, names as written
// (`backticked` when quoted), strings Go-quoted, subqueries in {braces} as
// formatted SQL.
func sx(e Expr) string {
	var b strings.Builder
	sxTo(&b, e)
	return b.String()
}

func sxList(b *strings.Builder, list []Expr) {
	for i, e := range list {
		if i > 0 {
			b.WriteString(" ")
		}
		sxTo(b, e)
	}
}

func sxIdent(id Ident) string {
	if id.Quoted {
		return "`" + id.Name + "`"
	}
	return id.Name
}

func sxTo(b *strings.Builder, e Expr) {
	w := b.WriteString
	switch x := e.(type) {
	case nil:
		w("<nil>")
	case *ColumnRef:
		for i, p := range x.Parts {
			if i > 0 {
				w(".")
			}
			w(sxIdent(p))
		}
	case *Param:
		w("@" + x.Name)
	case *IntLit:
		w(strconv.FormatInt(x.Value, 10))
	case *FloatLit:
		w(formatFloat(x.Value))
	case *StringLit:
		w(strconv.Quote(x.Value))
	case *BytesLit:
		w("b" + strconv.Quote(x.Value))
	case *BoolLit:
		w(strings.ToUpper(strconv.FormatBool(x.Value)))
	case *NullLit:
		w("NULL")
	case *TypedLit:
		w("(" + x.Type.String() + " " + strconv.Quote(x.Value) + ")")
	case *Interval:
		w("(INTERVAL ")
		sxTo(b, x.Value)
		w(" " + x.Unit + ")")
	case *DatePart:
		w("<" + x.Name)
		if x.Arg != "" {
			w("(" + x.Arg + ")")
		}
		w(">")
	case *Unary:
		op := map[UnaryOp]string{OpNeg: "NEG", OpPlus: "PLUS", OpBitNot: "~", OpNot: "NOT"}[x.Op]
		w("(" + op + " ")
		sxTo(b, x.X)
		w(")")
	case *Binary:
		w("(" + binaryOpText[x.Op] + " ")
		sxTo(b, x.L)
		w(" ")
		sxTo(b, x.R)
		w(")")
	case *Like:
		w("(" + notText(x.Not, "NOT LIKE", "LIKE") + " ")
		sxTo(b, x.X)
		w(" ")
		sxTo(b, x.Pattern)
		w(")")
	case *Between:
		w("(" + notText(x.Not, "NOT BETWEEN", "BETWEEN") + " ")
		sxList(b, []Expr{x.X, x.Lo, x.Hi})
		w(")")
	case *In:
		w("(" + notText(x.Not, "NOT IN", "IN") + " ")
		sxTo(b, x.X)
		switch {
		case x.Unnest != nil:
			w(" UNNEST ")
			sxTo(b, x.Unnest)
		case x.Query != nil:
			w(" {" + Format(x.Query) + "}")
		default:
			w(" [")
			sxList(b, x.List)
			w("]")
		}
		w(")")
	case *Is:
		w("(" + notText(x.Not, "IS NOT ", "IS "))
		w(map[IsWhat]string{IsNull: "NULL", IsTrue: "TRUE", IsFalse: "FALSE", IsUnknown: "UNKNOWN"}[x.What] + " ")
		sxTo(b, x.X)
		w(")")
	case *FuncCall:
		for i, p := range x.Name {
			if i > 0 {
				w(".")
			}
			w(sxIdent(p))
		}
		w("(")
		if x.Star {
			w("*")
		}
		if x.Distinct {
			w("DISTINCT ")
		}
		for i, a := range x.Args {
			if i > 0 {
				w(", ")
			}
			sxTo(b, a)
		}
		switch x.Nulls {
		case IgnoreNulls:
			w(" IGNORE NULLS")
		case RespectNulls:
			w(" RESPECT NULLS")
		}
		for i, o := range x.OrderBy {
			if i == 0 {
				w(" ORDER BY ")
			} else {
				w(", ")
			}
			sxTo(b, o.Expr)
			if o.Desc {
				w(" DESC")
			}
		}
		if x.Limit != nil {
			w(" LIMIT ")
			sxTo(b, x.Limit)
		}
		w(")")
		if x.Over != nil {
			w(" OVER" + Format(x.Over))
		}
	case *Extract:
		w("(EXTRACT ")
		sxTo(b, x.Part)
		w(" ")
		sxTo(b, x.X)
		if x.TimeZone != nil {
			w(" AT ")
			sxTo(b, x.TimeZone)
		}
		w(")")
	case *Case:
		w("(CASE")
		if x.Operand != nil {
			w(" ")
			sxTo(b, x.Operand)
		}
		for _, wh := range x.Whens {
			w(" [")
			sxTo(b, wh.Cond)
			w(" ")
			sxTo(b, wh.Result)
			w("]")
		}
		if x.Else != nil {
			w(" ELSE ")
			sxTo(b, x.Else)
		}
		w(")")
	case *Cast:
		w(notText(x.Safe, "(SAFE_CAST ", "(CAST "))
		sxTo(b, x.X)
		w(" " + x.Type.Kind.String() + ")")
	case *Subscript:
		mode := map[SubscriptMode]string{SubscriptPlain: "[]", SubscriptOffset: "OFFSET",
			SubscriptOrdinal: "ORDINAL", SubscriptSafeOffset: "SAFE_OFFSET", SubscriptSafeOrdinal: "SAFE_ORDINAL"}[x.Mode]
		w("(" + mode + " ")
		sxTo(b, x.X)
		w(" ")
		sxTo(b, x.Index)
		w(")")
	case *FieldAccess:
		w("(. ")
		sxTo(b, x.X)
		w(" " + sxIdent(x.Field) + ")")
	case *ArrayLit:
		if x.Type != nil {
			w("ARRAY<" + x.Type.Kind.String() + ">")
		}
		w("[")
		sxList(b, x.Elems)
		w("]")
	case *ArraySubquery:
		w("(ARRAY {" + Format(x.Query) + "})")
	case *StructLit:
		w("(STRUCT")
		for _, f := range x.Fields {
			w(" ")
			sxTo(b, f.Expr)
			if f.Alias != nil {
				w(" AS " + sxIdent(*f.Alias))
			}
		}
		w(")")
	case *Exists:
		w("(EXISTS {" + Format(x.Query) + "})")
	case *ScalarSubquery:
		w("{" + Format(x.Query) + "}")
	default:
		w("<?>")
	}
}

// supabaseSources are the nine source names Logflare seeds in Supabase mode.
var supabaseSources = []string{
	"cloudflare.logs.prod", "postgres.logs", "deno-relay-logs", "deno-subhosting-events",
	"gotrue.logs.prod", "realtime.logs.prod", "storage.logs.prod.2", "postgREST.logs.prod",
	"pgbouncer.logs.prod",
}

// supabaseOpts knows the nine Supabase sources plus a plain `my_table`.
var supabaseOpts = ValidateOptions{KnownSource: func(name string) bool {
	if name == "my_table" {
		return true
	}
	for _, s := range supabaseSources {
		if s == name {
			return true
		}
	}
	return false
}}
