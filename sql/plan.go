package sql

import (
	"fmt"
	"strings"

	"github.com/sediment/sediment/internal/vec"
	"github.com/sediment/sediment/sql/scan"
)

// ColID identifies a column of a plan, unique within a query. Expressions
// refer to columns by id, so that nodes can grow new columns (a field a
// query reads through a record, threaded up from the scan) without breaking
// references made before.
type ColID int

// ColType is a column's type in a plan.
type ColType struct {
	V vec.Type
	// Elem is the scalar element type of an ARRAY (V == vec.List); Unknown
	// when the elements are records.
	Elem vec.Type
	// Single marks a record (V == vec.RowRef) that is one STRUCT value, as an
	// unnested alias is, rather than BigQuery's REPEATED RECORD that a
	// stored object reads as; it only changes how results are written.
	Single bool
}

func (t ColType) String() string {
	if t.V == vec.List {
		if t.Elem == vec.Unknown {
			return "ARRAY<STRUCT>"
		}
		return "ARRAY<" + t.Elem.String() + ">"
	}
	return t.V.String()
}

// Column is one output column of a plan node.
type Column struct {
	ID   ColID
	Name string
	T    ColType
}

// Node is a logical plan node. Cols lists its output columns in order.
// Filter, Sort, Limit, TopK, Join, Unnest, RecordAlias and Window pass every
// input column through (so a column added below them appears above them
// too); Project, Aggregate, Union and Values define their own.
type Node interface {
	Cols() []Column
	Inputs() []Node
}

// ScanNode reads one source.
type ScanNode struct {
	Table scan.Table
	Alias string
	req   scan.Request
	cols  []Column
	// byPath dedupes requested columns: key kind/type/path.
	byPath map[string]ColID
	// pushed remembers that filters were pushed (for plan printing).
	Pushed []string
}

func (n *ScanNode) Cols() []Column { return n.cols }
func (n *ScanNode) Inputs() []Node { return nil }

// FilterNode keeps rows whose Cond is TRUE.
type FilterNode struct {
	In   Node
	Cond Expr
}

func (n *FilterNode) Cols() []Column { return n.In.Cols() }
func (n *FilterNode) Inputs() []Node { return []Node{n.In} }

// ProjectNode computes Exprs as its columns. A column whose expression is
// a ColRef to an input column of the same id passes it through.
type ProjectNode struct {
	In    Node
	Exprs []Expr
	Out   []Column
}

func (n *ProjectNode) Cols() []Column { return n.Out }
func (n *ProjectNode) Inputs() []Node { return []Node{n.In} }

// AggregateNode groups by Keys and computes Aggs; its columns are the keys
// then the aggregates.
type AggregateNode struct {
	In   Node
	Keys []Expr
	Aggs []*AggCall
	Out  []Column
}

func (n *AggregateNode) Cols() []Column { return n.Out }
func (n *AggregateNode) Inputs() []Node { return []Node{n.In} }

// SortKey is one ordering key.
type SortKey struct {
	E         Expr
	Desc      bool
	NullsLast bool
}

// SortNode orders rows.
type SortNode struct {
	In   Node
	Keys []SortKey
}

func (n *SortNode) Cols() []Column { return n.In.Cols() }
func (n *SortNode) Inputs() []Node { return []Node{n.In} }

// LimitNode passes Offset rows by, then at most Count rows (Count < 0: no
// limit).
type LimitNode struct {
	In     Node
	Count  int64
	Offset int64
}

func (n *LimitNode) Cols() []Column { return n.In.Cols() }
func (n *LimitNode) Inputs() []Node { return []Node{n.In} }

// TopKNode is a Sort followed by a Limit, computed without sorting
// everything.
type TopKNode struct {
	In     Node
	Keys   []SortKey
	Count  int64
	Offset int64
}

func (n *TopKNode) Cols() []Column { return n.In.Cols() }
func (n *TopKNode) Inputs() []Node { return []Node{n.In} }

// DistinctNode removes duplicate rows.
type DistinctNode struct{ In Node }

func (n *DistinctNode) Cols() []Column { return n.In.Cols() }
func (n *DistinctNode) Inputs() []Node { return []Node{n.In} }

// JoinKind is the kind of a JoinNode.
type JoinKind uint8

const (
	JoinInner JoinKind = iota + 1
	JoinLeft
	JoinCross
)

// JoinNode joins Left and Right. Its columns are Left's then Right's. For
// an equi-join, LeftKeys/RightKeys are the equality pairs and Cond the rest.
type JoinNode struct {
	Kind      JoinKind
	Left      Node
	Right     Node
	Cond      Expr
	LeftKeys  []Expr
	RightKeys []Expr
}

func (n *JoinNode) Cols() []Column {
	l := n.Left.Cols()
	r := n.Right.Cols()
	out := make([]Column, 0, len(l)+len(r))
	return append(append(out, l...), r...)
}
func (n *JoinNode) Inputs() []Node { return []Node{n.Left, n.Right} }

// UnnestNode produces one row per element of the array Arr (an expression
// over In's columns), with the element as column Elem (and its offset as
// Offset when WithOffset). Outer keeps rows whose array is empty or NULL
// (with a NULL element), as LEFT JOIN UNNEST ... ON TRUE does.
type UnnestNode struct {
	In     Node
	Arr    Expr
	Elem   Column
	Offset *Column
	Outer  bool
	// Fields are element fields read by the query (records), each a column.
	Fields []unnestField
	// arrSource, when the array comes straight from a scan column, lets
	// element fields be requested from the scan.
	arrScan *ScanNode
	arrCol  int // index in arrScan.req.Columns
	// elemChild is the struct child holding the whole element when the
	// scan's elements are records (-1: the element vector itself).
	elemChild int
}

type unnestField struct {
	path  string
	col   Column
	child int // child index in the scan's element struct
}

func (n *UnnestNode) Cols() []Column {
	out := append([]Column(nil), n.In.Cols()...)
	out = append(out, n.Elem)
	if n.Offset != nil {
		out = append(out, *n.Offset)
	}
	for _, f := range n.Fields {
		out = append(out, f.col)
	}
	return out
}
func (n *UnnestNode) Inputs() []Node { return []Node{n.In} }

// RecordAliasNode names a record column of its input (`CROSS JOIN
// UNNEST(t.metadata) AS m` where metadata is one object per row, not an
// array). Alias has the same values as Src; with Outer false, rows whose
// record is NULL are dropped, as the cross join of an empty array drops
// them.
type RecordAliasNode struct {
	In    Node
	Src   ColID
	Alias Column
	Outer bool
}

func (n *RecordAliasNode) Cols() []Column {
	return append(append([]Column(nil), n.In.Cols()...), n.Alias)
}
func (n *RecordAliasNode) Inputs() []Node { return []Node{n.In} }

// UnionNode concatenates its inputs (UNION ALL); Maps[i][c] is the input
// column feeding output column c for input i.
type UnionNode struct {
	Ins  []Node
	Out  []Column
	Maps [][]ColID
	// fields remembers the columns made for fields read through a record
	// column of the union (key: column, path, want), so that a field named
	// twice (in SELECT and GROUP BY) is one column.
	fields map[string]ColID
}

func (n *UnionNode) Cols() []Column { return n.Out }
func (n *UnionNode) Inputs() []Node { return n.Ins }

// ValuesNode produces one row with no columns (SELECT without FROM).
type ValuesNode struct{}

func (n *ValuesNode) Cols() []Column { return nil }
func (n *ValuesNode) Inputs() []Node { return nil }

// colIndex returns the position of id in cols, or -1.
func colIndex(cols []Column, id ColID) int {
	for i, c := range cols {
		if c.ID == id {
			return i
		}
	}
	return -1
}

// Explain renders a plan as an indented tree (for tests and debugging).
func Explain(n Node) string {
	var b strings.Builder
	explain(&b, n, 0)
	return b.String()
}

func explain(b *strings.Builder, n Node, depth int) {
	pad := strings.Repeat("  ", depth)
	switch n := n.(type) {
	case *ScanNode:
		fmt.Fprintf(b, "%sScan %s", pad, n.Table.Name())
		var cols []string
		for _, c := range n.req.Columns {
			cols = append(cols, c.Path)
		}
		fmt.Fprintf(b, " cols=[%s]", strings.Join(cols, ","))
		if n.req.TimeMin != scan.MinTime || n.req.TimeMax != scan.MaxTime {
			fmt.Fprintf(b, " time=[%d,%d]", n.req.TimeMin, n.req.TimeMax)
		}
		for _, p := range n.Pushed {
			fmt.Fprintf(b, " where(%s)", p)
		}
		switch n.req.Order {
		case scan.Descending:
			b.WriteString(" order=desc")
		case scan.Ascending:
			b.WriteString(" order=asc")
		}
		if n.req.Limit > 0 {
			fmt.Fprintf(b, " limit=%d", n.req.Limit)
		}
		b.WriteString("\n")
		return
	case *FilterNode:
		fmt.Fprintf(b, "%sFilter %s\n", pad, n.Cond)
	case *ProjectNode:
		var parts []string
		for i, e := range n.Exprs {
			parts = append(parts, fmt.Sprintf("%s=%s", n.Out[i].Name, e))
		}
		fmt.Fprintf(b, "%sProject %s\n", pad, strings.Join(parts, ", "))
	case *AggregateNode:
		var keys, aggs []string
		for _, k := range n.Keys {
			keys = append(keys, k.String())
		}
		for _, a := range n.Aggs {
			aggs = append(aggs, a.String())
		}
		fmt.Fprintf(b, "%sAggregate keys=[%s] aggs=[%s]\n", pad, strings.Join(keys, ", "), strings.Join(aggs, ", "))
	case *SortNode:
		fmt.Fprintf(b, "%sSort %s\n", pad, sortKeysString(n.Keys))
	case *TopKNode:
		fmt.Fprintf(b, "%sTopK %d offset %d by %s\n", pad, n.Count, n.Offset, sortKeysString(n.Keys))
	case *LimitNode:
		fmt.Fprintf(b, "%sLimit %d offset %d\n", pad, n.Count, n.Offset)
	case *DistinctNode:
		fmt.Fprintf(b, "%sDistinct\n", pad)
	case *WindowNode:
		fmt.Fprintf(b, "%s%s\n", pad, n.explainLine())
	case *JoinNode:
		fmt.Fprintf(b, "%sJoin kind=%d cond=%v keys=%d\n", pad, n.Kind, n.Cond, len(n.LeftKeys))
	case *UnnestNode:
		fmt.Fprintf(b, "%sUnnest %s outer=%v\n", pad, n.Arr, n.Outer)
	case *RecordAliasNode:
		fmt.Fprintf(b, "%sRecordAlias %s outer=%v\n", pad, n.Alias.Name, n.Outer)
	case *UnionNode:
		fmt.Fprintf(b, "%sUnionAll\n", pad)
	case *ValuesNode:
		fmt.Fprintf(b, "%sValues\n", pad)
	case *emptyNode:
		fmt.Fprintf(b, "%sEmpty\n", pad)
	case *projectCount:
		fmt.Fprintf(b, "%sCountFromUnits\n", pad)
		explain(b, n.scan, depth+1)
	}
	for _, in := range n.Inputs() {
		explain(b, in, depth+1)
	}
}

func sortKeysString(keys []SortKey) string {
	var parts []string
	for _, k := range keys {
		s := k.E.String()
		if k.Desc {
			s += " desc"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, ", ")
}
