package parser

import "strings"

// Node is any syntax tree node. The set of node types is closed: every type
// implementing Node is declared in this package, and each of the interfaces
// below (Statement, QueryBody, TableExpr, Expr) has an unexported marker
// method, so a type switch over one of them can list every case.
type Node interface {
	// Pos is where the node starts in the source (zero for nodes built by
	// code rather than parsed).
	Pos() Pos
	aNode()
}

// Statement is one top-level statement: *Query, or *OtherStatement for
// anything that is not a query (INSERT, CREATE, SET, ...).
type Statement interface {
	Node
	statementNode()
}

// QueryBody is what a query computes before ORDER BY/LIMIT: a *Select, a
// *SetOp, or a parenthesised *Query that has its own WITH, ORDER BY, LIMIT or
// OFFSET. (Parentheses around a body with none of those are not kept: the
// parser returns the inner body.)
type QueryBody interface {
	Node
	queryBodyNode()
}

// TableExpr is an item of a FROM clause: *TableName, *SubqueryTable,
// *UnnestTable, *TableFunc or *Join. Parenthesised join groups are not kept
// as nodes: `a LEFT JOIN (b CROSS JOIN c) ON ...` is a Join whose Right is a
// Join.
type TableExpr interface {
	Node
	tableExprNode()
}

// Expr is a scalar expression. The implementations are:
//
//	*ColumnRef *Param *IntLit *FloatLit *StringLit *BytesLit *BoolLit
//	*NullLit *TypedLit *Interval *DatePart *Unary *Binary *Like *Between
//	*In *Is *FuncCall *Extract *Case *Cast *Subscript *FieldAccess
//	*ArrayLit *ArraySubquery *StructLit *Exists *ScalarSubquery
type Expr interface {
	Node
	exprNode()
}

// Ident is a name as written: its original spelling (case preserved, escapes
// decoded) and whether it was `backticked`. Unquoted names that are keywords
// compare case-insensitively in SQL; use EqualFold or Is to compare.
type Ident struct {
	At     Pos
	Name   string
	Quoted bool
}

// Is reports whether the identifier names name, ignoring case.
func (id Ident) Is(name string) bool { return strings.EqualFold(id.Name, name) }

// ---------------------------------------------------------------------------
// Statements and queries

// OtherStatement is a statement that is not a query, recognised by its
// leading keyword(s) so that validation can reject it with "Only SELECT
// queries allowed". Its body is skipped up to the next top-level ';'.
type OtherStatement struct {
	At Pos
	// Keyword is the leading keyword in upper case, e.g. "INSERT", "CREATE".
	// For `WITH ... INSERT ...` it is the keyword after the WITH clause.
	Keyword string
	// Text is the statement's source text.
	Text string
}

// Query is a full query expression:
//
//	[WITH ctes] body [ORDER BY ...] [LIMIT n] [OFFSET m]
//
// ORDER BY, LIMIT and OFFSET apply to the whole body, including a set
// operation.
type Query struct {
	At      Pos
	With    *With // nil when there is no WITH clause
	Body    QueryBody
	OrderBy []*OrderItem
	Limit   Expr // nil, an *IntLit, a *Param, or another constant expression
	Offset  Expr // nil or as Limit
}

// With is a WITH clause. Each CTE is visible to the CTEs after it and to the
// query body; with RECURSIVE, also to itself.
type With struct {
	At        Pos
	Recursive bool
	CTEs      []*CTE
}

// CTE is one `name AS (query)` of a WITH clause.
type CTE struct {
	At    Pos
	Name  Ident
	Query *Query
}

// Select is a SELECT core.
type Select struct {
	At       Pos
	Distinct bool
	Items    []*SelectItem
	From     TableExpr // nil without FROM
	Where    Expr
	GroupBy  []Expr // expressions, output aliases (*ColumnRef) or ordinals (*IntLit)
	Having   Expr
	Qualify  Expr
}

// SelectItem is one entry of a select list: an expression with an optional
// alias, or a wildcard. `*` has Star set and Expr nil; `t.*` (or `expr.*`)
// has Star set and Expr the qualifier. Except lists the names of
// `* EXCEPT (a, b)`.
type SelectItem struct {
	At     Pos
	Expr   Expr
	Star   bool
	Except []Ident
	Alias  *Ident // nil when no alias was written
}

// SetOpKind is the operator of a set operation.
type SetOpKind uint8

// Set operators.
const (
	Union SetOpKind = iota + 1
	Intersect
	Except
)

// String returns the operator's SQL keyword.
func (k SetOpKind) String() string {
	switch k {
	case Union:
		return "UNION"
	case Intersect:
		return "INTERSECT"
	case Except:
		return "EXCEPT"
	}
	return "?"
}

// SetQuantifier is the ALL / DISTINCT of a set operation.
type SetQuantifier uint8

// Set quantifiers. QuantNone is a bare UNION (which BigQuery rejects and SQL
// defines as DISTINCT).
const (
	QuantNone SetQuantifier = iota
	QuantAll
	QuantDistinct
)

// SetOp is `Left op [ALL|DISTINCT] Right`. Chains are left-deep; INTERSECT
// binds tighter than UNION and EXCEPT.
type SetOp struct {
	At         Pos
	Op         SetOpKind
	Quantifier SetQuantifier
	Left       QueryBody
	Right      QueryBody
}

// NullsOrder is the NULLS FIRST / NULLS LAST of an ordering key.
type NullsOrder uint8

// Null orderings. NullsDefault means none was written.
const (
	NullsDefault NullsOrder = iota
	NullsFirst
	NullsLast
)

// OrderItem is one ORDER BY key. Expr may be an output alias (*ColumnRef) or
// an ordinal (*IntLit) at query level; the planner resolves them.
type OrderItem struct {
	At    Pos
	Expr  Expr
	Desc  bool
	Nulls NullsOrder
}

// ---------------------------------------------------------------------------
// FROM clause

// TableRef says what a TableName refers to. Validate sets it.
type TableRef uint8

// Table name resolutions.
const (
	RefUnresolved TableRef = iota // not validated yet
	RefCTE                        // a CTE in scope; TableName.CTE points to it
	RefSource                     // a source known to the caller
)

// TableName is a named table: a source or a CTE. Parts are the dotted parts
// as written: `a.b.c` unquoted has three parts; “ `cloudflare.logs.prod` “
// has one part named "cloudflare.logs.prod". Name() joins them with dots.
type TableName struct {
	At    Pos
	Parts []Ident
	Alias *Ident

	// Ref and CTE are set by Validate and Sandbox; they are resolution, not
	// syntax, and are ignored by Equal, Format and Walk.
	Ref TableRef `ast:"resolution"`
	CTE *CTE     `ast:"resolution"`
}

// Name returns the table's full name: the parts joined with ".".
func (t *TableName) Name() string {
	if len(t.Parts) == 1 {
		return t.Parts[0].Name
	}
	var b strings.Builder
	for i, p := range t.Parts {
		if i > 0 {
			b.WriteByte('.')
		}
		b.WriteString(p.Name)
	}
	return b.String()
}

// SubqueryTable is `(query) [AS] alias` in FROM.
type SubqueryTable struct {
	At    Pos
	Query *Query
	Alias *Ident
}

// UnnestTable is `UNNEST(expr) [AS] alias [WITH OFFSET [AS] offset_alias]`.
type UnnestTable struct {
	At          Pos
	Expr        Expr
	Alias       *Ident
	WithOffset  bool
	OffsetAlias *Ident // nil when WITH OFFSET has no alias
}

// TableFunc is a table-valued function call in FROM, such as
// `EXTERNAL_QUERY('conn', 'SELECT ...')`. Nothing Logflare allows is one:
// validation rejects it (as a restricted function or an unknown source); it
// is parsed so that the rejection names it.
type TableFunc struct {
	At    Pos
	Call  *FuncCall
	Alias *Ident
}

// JoinKind is the kind of a Join.
type JoinKind uint8

// Join kinds. JoinComma is the comma in `FROM a, b`: a cross join that
// BigQuery evaluates left to right like the explicit joins.
const (
	JoinComma JoinKind = iota + 1
	JoinCross
	JoinInner
	JoinLeft
	JoinRight
	JoinFull
)

// String returns the join's SQL spelling (JoinComma is ",").
func (k JoinKind) String() string {
	switch k {
	case JoinComma:
		return ","
	case JoinCross:
		return "CROSS JOIN"
	case JoinInner:
		return "JOIN"
	case JoinLeft:
		return "LEFT JOIN"
	case JoinRight:
		return "RIGHT JOIN"
	case JoinFull:
		return "FULL JOIN"
	}
	return "?"
}

// Join joins two table expressions. Chains are left-deep
// (`a JOIN b JOIN c` is Join(Join(a, b), c)); a parenthesised group on the
// right is a Join as Right. On and Using are both empty for comma and cross
// joins, and for INNER/LEFT joins of an UNNEST written without ON.
type Join struct {
	At    Pos
	Kind  JoinKind
	Left  TableExpr
	Right TableExpr
	On    Expr
	Using []Ident
}

// ---------------------------------------------------------------------------
// Expressions

// ColumnRef is a dotted name path: `a`, `t.a`, `m.request.path`,
// “ `request`.`method` “. Whether the first part is a table alias, a
// column, or a field of an unnested struct is for the planner to resolve.
// The parser never builds a FieldAccess on a ColumnRef: `(a).b` is the
// ColumnRef a.b.
type ColumnRef struct {
	At    Pos
	Parts []Ident
}

// Param is a named query parameter `@name`.
type Param struct {
	At   Pos
	Name string
}

// IntLit is an integer literal (decimal or 0x hex). A minus sign written
// directly before a numeric literal is folded into it: `-1` is IntLit{-1}.
type IntLit struct {
	At    Pos
	Value int64
}

// FloatLit is a floating point literal; a leading minus is folded as for
// IntLit.
type FloatLit struct {
	At    Pos
	Value float64
}

// StringLit is a string literal in any quoting ('...', "...", triple-quoted,
// raw), with escapes decoded.
type StringLit struct {
	At    Pos
	Value string
}

// BytesLit is a bytes literal b'...' with escapes decoded.
type BytesLit struct {
	At    Pos
	Value string
}

// BoolLit is TRUE or FALSE.
type BoolLit struct {
	At    Pos
	Value bool
}

// NullLit is NULL.
type NullLit struct {
	At Pos
}

// TypedLit is a literal introduced by a type name:
// `TIMESTAMP '2024-01-01 00:00:00+00'`, `DATE '2024-01-01'`, `DATETIME '...'`,
// `TIME '...'`, `JSON '...'`, `NUMERIC '1.5'`, `BIGNUMERIC '...'`. Value is the
// string as written (decoded); the planner parses it.
type TypedLit struct {
	At    Pos
	Type  TypeKind // TypeTimestamp, TypeDate, TypeDatetime, TypeTime, TypeJSON, TypeNumeric or TypeBigNumeric
	Value string
}

// Interval is `INTERVAL value unit`, e.g. `INTERVAL 1 HOUR`. Unit is the date
// part in upper case (MICROSECOND ... YEAR).
type Interval struct {
	At    Pos
	Value Expr
	Unit  string
}

// DatePart is a date part keyword used as a function argument:
// `TIMESTAMP_TRUNC(ts, MINUTE)`, `TIMESTAMP_DIFF(a, b, SECOND)`,
// `EXTRACT(HOUR FROM ts)`, `DATE_TRUNC(d, WEEK(MONDAY))`. Name is upper case
// (e.g. "MINUTE"); Arg is the upper-case weekday of WEEK(<weekday>), else "".
type DatePart struct {
	At   Pos
	Name string
	Arg  string
}

// UnaryOp is the operator of a Unary expression.
type UnaryOp uint8

// Unary operators.
const (
	OpNeg    UnaryOp = iota + 1 // -x
	OpPlus                      // +x
	OpBitNot                    // ~x
	OpNot                       // NOT x
)

// Unary is a prefix operator applied to X.
type Unary struct {
	At Pos
	Op UnaryOp
	X  Expr
}

// BinaryOp is the operator of a Binary expression.
type BinaryOp uint8

// Binary operators, lowest precedence first within the groups of the
// BigQuery precedence table.
const (
	OpOr BinaryOp = iota + 1
	OpAnd
	OpEq
	OpNe // != and <>
	OpLt
	OpLe
	OpGt
	OpGe
	OpIsDistinctFrom    // a IS DISTINCT FROM b
	OpIsNotDistinctFrom // a IS NOT DISTINCT FROM b
	OpBitOr
	OpBitXor
	OpBitAnd
	OpShl
	OpShr
	OpAdd
	OpSub
	OpMul
	OpDiv
	OpConcat // ||
)

// Binary is `L op R`. At is where L starts; OpAt is the operator's position.
type Binary struct {
	At   Pos
	OpAt Pos
	Op   BinaryOp
	L, R Expr
}

// Like is `X [NOT] LIKE Pattern`.
type Like struct {
	At      Pos
	OpAt    Pos
	X       Expr
	Not     bool
	Pattern Expr
}

// Between is `X [NOT] BETWEEN Lo AND Hi`.
type Between struct {
	At     Pos
	OpAt   Pos
	X      Expr
	Not    bool
	Lo, Hi Expr
}

// In is `X [NOT] IN ...` in one of three forms; exactly one of List (a
// parenthesised list), Query (a subquery) and Unnest (`IN UNNEST(expr)`) is
// set.
type In struct {
	At     Pos
	OpAt   Pos
	X      Expr
	Not    bool
	List   []Expr
	Query  *Query
	Unnest Expr
}

// IsWhat is what an Is expression tests for.
type IsWhat uint8

// Tests of an IS expression.
const (
	IsNull IsWhat = iota + 1
	IsTrue
	IsFalse
	IsUnknown
)

// Is is `X IS [NOT] NULL|TRUE|FALSE|UNKNOWN`.
type Is struct {
	At   Pos
	OpAt Pos
	X    Expr
	Not  bool
	What IsWhat
}

// NullHandling is the IGNORE NULLS / RESPECT NULLS of an aggregate or
// navigation function.
type NullHandling uint8

// Null handlings. NullsUnspecified means neither was written.
const (
	NullsUnspecified NullHandling = iota
	IgnoreNulls
	RespectNulls
)

// FuncCall is a function call, aggregate or window function. Name holds the
// dotted name parts as written (`net.host` is two parts, “ `some.function` “
// one quoted part, `SAFE.PARSE_DATE` two). CURRENT_TIMESTAMP, CURRENT_DATE,
// CURRENT_DATETIME and CURRENT_TIME written without parentheses are calls
// with no arguments. IF, LEFT and RIGHT calls are FuncCalls too.
type FuncCall struct {
	At       Pos
	Name     []Ident
	Args     []Expr
	Star     bool // COUNT(*)
	Distinct bool // COUNT(DISTINCT x)
	Nulls    NullHandling
	OrderBy  []*OrderItem // ARRAY_AGG(x ORDER BY y)
	Limit    Expr         // ARRAY_AGG(x LIMIT n)
	Over     *WindowSpec  // non-nil for a window function call
}

// FuncName returns the function's name parts joined with "." as written.
func (f *FuncCall) FuncName() string {
	if len(f.Name) == 1 {
		return f.Name[0].Name
	}
	var b strings.Builder
	for i, p := range f.Name {
		if i > 0 {
			b.WriteByte('.')
		}
		b.WriteString(p.Name)
	}
	return b.String()
}

// WindowSpec is the `OVER (...)` of a window function.
type WindowSpec struct {
	At          Pos
	PartitionBy []Expr
	OrderBy     []*OrderItem
	Frame       *Frame // nil when no frame clause was written
}

// FrameUnit is ROWS or RANGE.
type FrameUnit uint8

// Frame units.
const (
	FrameRows FrameUnit = iota + 1
	FrameRange
)

// BoundKind is the kind of a window frame bound.
type BoundKind uint8

// Frame bound kinds.
const (
	UnboundedPreceding BoundKind = iota + 1
	Preceding                    // <Offset> PRECEDING
	CurrentRow
	Following // <Offset> FOLLOWING
	UnboundedFollowing
)

// FrameBound is one end of a window frame.
type FrameBound struct {
	Kind   BoundKind
	Offset Expr // for Preceding and Following
}

// Frame is `ROWS|RANGE start` or `ROWS|RANGE BETWEEN start AND end`.
type Frame struct {
	At    Pos
	Unit  FrameUnit
	Start FrameBound
	End   *FrameBound // nil without BETWEEN
}

// Extract is `EXTRACT(part FROM X [AT TIME ZONE tz])`.
type Extract struct {
	At       Pos
	Part     *DatePart
	X        Expr
	TimeZone Expr
}

// Case is a CASE expression: simple when Operand is non-nil
// (`CASE x WHEN v THEN ...`), searched otherwise.
type Case struct {
	At      Pos
	Operand Expr
	Whens   []*When
	Else    Expr
}

// When is one `WHEN Cond THEN Result` arm of a Case.
type When struct {
	At     Pos
	Cond   Expr
	Result Expr
}

// Cast is `CAST(X AS type)`, `SAFE_CAST(X AS type)` or Postgres-style
// `X::type` (which is recorded exactly like CAST).
type Cast struct {
	At   Pos
	X    Expr
	Type *TypeName
	Safe bool
}

// SubscriptMode is how an array subscript counts.
type SubscriptMode uint8

// Subscript modes: a plain `a[i]` is zero-based like OFFSET.
const (
	SubscriptPlain SubscriptMode = iota + 1
	SubscriptOffset
	SubscriptOrdinal
	SubscriptSafeOffset
	SubscriptSafeOrdinal
)

// Subscript is `X[Index]`, `X[OFFSET(Index)]`, `X[ORDINAL(Index)]`,
// `X[SAFE_OFFSET(Index)]` or `X[SAFE_ORDINAL(Index)]`.
type Subscript struct {
	At    Pos
	X     Expr
	Index Expr
	Mode  SubscriptMode
}

// FieldAccess is `X.Field` where X is not a plain name path (for those the
// parser builds a longer ColumnRef), e.g. `a[0].b` or `f(x).y`.
type FieldAccess struct {
	At    Pos
	X     Expr
	Field Ident
}

// ArrayLit is `[a, b]`, `ARRAY[a, b]` or `ARRAY<T>[a, b]` (Type is the
// element type then, else nil).
type ArrayLit struct {
	At    Pos
	Type  *TypeName
	Elems []Expr
}

// ArraySubquery is `ARRAY(query)`.
type ArraySubquery struct {
	At    Pos
	Query *Query
}

// StructField is one field of a STRUCT constructor: an expression with an
// optional field name.
type StructField struct {
	Expr  Expr
	Alias *Ident
}

// StructLit is `STRUCT(a AS x, b)` or `STRUCT<x INT64, y STRING>(1, 'a')`
// (Type is then the declared struct type).
type StructLit struct {
	At     Pos
	Type   *TypeName
	Fields []StructField
}

// Exists is `EXISTS(query)`.
type Exists struct {
	At    Pos
	Query *Query
}

// ScalarSubquery is a parenthesised query used as a value: `(SELECT ...)`.
type ScalarSubquery struct {
	At    Pos
	Query *Query
}

// ---------------------------------------------------------------------------
// Pos (see Node) and the unexported marker methods that close the node sets.

func (n *OtherStatement) Pos() Pos { return n.At }
func (n *Query) Pos() Pos          { return n.At }
func (n *With) Pos() Pos           { return n.At }
func (n *CTE) Pos() Pos            { return n.At }
func (n *Select) Pos() Pos         { return n.At }
func (n *SelectItem) Pos() Pos     { return n.At }
func (n *SetOp) Pos() Pos          { return n.At }
func (n *OrderItem) Pos() Pos      { return n.At }
func (n *TableName) Pos() Pos      { return n.At }
func (n *SubqueryTable) Pos() Pos  { return n.At }
func (n *UnnestTable) Pos() Pos    { return n.At }
func (n *Join) Pos() Pos           { return n.At }
func (n *TableFunc) Pos() Pos      { return n.At }
func (n *ColumnRef) Pos() Pos      { return n.At }
func (n *Param) Pos() Pos          { return n.At }
func (n *IntLit) Pos() Pos         { return n.At }
func (n *FloatLit) Pos() Pos       { return n.At }
func (n *StringLit) Pos() Pos      { return n.At }
func (n *BytesLit) Pos() Pos       { return n.At }
func (n *BoolLit) Pos() Pos        { return n.At }
func (n *NullLit) Pos() Pos        { return n.At }
func (n *TypedLit) Pos() Pos       { return n.At }
func (n *Interval) Pos() Pos       { return n.At }
func (n *DatePart) Pos() Pos       { return n.At }
func (n *Unary) Pos() Pos          { return n.At }
func (n *Binary) Pos() Pos         { return n.At }
func (n *Like) Pos() Pos           { return n.At }
func (n *Between) Pos() Pos        { return n.At }
func (n *In) Pos() Pos             { return n.At }
func (n *Is) Pos() Pos             { return n.At }
func (n *FuncCall) Pos() Pos       { return n.At }
func (n *WindowSpec) Pos() Pos     { return n.At }
func (n *Extract) Pos() Pos        { return n.At }
func (n *Case) Pos() Pos           { return n.At }
func (n *When) Pos() Pos           { return n.At }
func (n *Cast) Pos() Pos           { return n.At }
func (n *Subscript) Pos() Pos      { return n.At }
func (n *FieldAccess) Pos() Pos    { return n.At }
func (n *ArrayLit) Pos() Pos       { return n.At }
func (n *ArraySubquery) Pos() Pos  { return n.At }
func (n *StructLit) Pos() Pos      { return n.At }
func (n *Exists) Pos() Pos         { return n.At }
func (n *ScalarSubquery) Pos() Pos { return n.At }

func (*OtherStatement) aNode() {}
func (*Query) aNode()          {}
func (*With) aNode()           {}
func (*CTE) aNode()            {}
func (*Select) aNode()         {}
func (*SelectItem) aNode()     {}
func (*SetOp) aNode()          {}
func (*OrderItem) aNode()      {}
func (*TableName) aNode()      {}
func (*SubqueryTable) aNode()  {}
func (*UnnestTable) aNode()    {}
func (*Join) aNode()           {}
func (*TableFunc) aNode()      {}
func (*ColumnRef) aNode()      {}
func (*Param) aNode()          {}
func (*IntLit) aNode()         {}
func (*FloatLit) aNode()       {}
func (*StringLit) aNode()      {}
func (*BytesLit) aNode()       {}
func (*BoolLit) aNode()        {}
func (*NullLit) aNode()        {}
func (*TypedLit) aNode()       {}
func (*Interval) aNode()       {}
func (*DatePart) aNode()       {}
func (*Unary) aNode()          {}
func (*Binary) aNode()         {}
func (*Like) aNode()           {}
func (*Between) aNode()        {}
func (*In) aNode()             {}
func (*Is) aNode()             {}
func (*FuncCall) aNode()       {}
func (*WindowSpec) aNode()     {}
func (*Extract) aNode()        {}
func (*Case) aNode()           {}
func (*When) aNode()           {}
func (*Cast) aNode()           {}
func (*Subscript) aNode()      {}
func (*FieldAccess) aNode()    {}
func (*ArrayLit) aNode()       {}
func (*ArraySubquery) aNode()  {}
func (*StructLit) aNode()      {}
func (*Exists) aNode()         {}
func (*ScalarSubquery) aNode() {}

func (*Query) statementNode()          {}
func (*OtherStatement) statementNode() {}

func (*Select) queryBodyNode() {}
func (*SetOp) queryBodyNode()  {}
func (*Query) queryBodyNode()  {}

func (*TableName) tableExprNode()     {}
func (*SubqueryTable) tableExprNode() {}
func (*UnnestTable) tableExprNode()   {}
func (*Join) tableExprNode()          {}
func (*TableFunc) tableExprNode()     {}

func (*ColumnRef) exprNode()      {}
func (*Param) exprNode()          {}
func (*IntLit) exprNode()         {}
func (*FloatLit) exprNode()       {}
func (*StringLit) exprNode()      {}
func (*BytesLit) exprNode()       {}
func (*BoolLit) exprNode()        {}
func (*NullLit) exprNode()        {}
func (*TypedLit) exprNode()       {}
func (*Interval) exprNode()       {}
func (*DatePart) exprNode()       {}
func (*Unary) exprNode()          {}
func (*Binary) exprNode()         {}
func (*Like) exprNode()           {}
func (*Between) exprNode()        {}
func (*In) exprNode()             {}
func (*Is) exprNode()             {}
func (*FuncCall) exprNode()       {}
func (*Extract) exprNode()        {}
func (*Case) exprNode()           {}
func (*Cast) exprNode()           {}
func (*Subscript) exprNode()      {}
func (*FieldAccess) exprNode()    {}
func (*ArrayLit) exprNode()       {}
func (*ArraySubquery) exprNode()  {}
func (*StructLit) exprNode()      {}
func (*Exists) exprNode()         {}
func (*ScalarSubquery) exprNode() {}
