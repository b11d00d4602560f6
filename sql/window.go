package sql

import (
	"fmt"
	"strconv"
	"strings"
)

// WindowNode computes window (analytic) function calls over its input: its
// columns are the input's, passed through untouched and in input order,
// then one column per call. It sits where BigQuery evaluates windows: after
// WHERE, GROUP BY and HAVING, before QUALIFY, DISTINCT, ORDER BY and LIMIT.
// Calls with the same PARTITION BY and ORDER BY share one partitioning and
// sort at execution.
type WindowNode struct {
	In    Node
	Funcs []*WindowFunc
}

func (n *WindowNode) Cols() []Column {
	in := n.In.Cols()
	out := make([]Column, 0, len(in)+len(n.Funcs))
	out = append(out, in...)
	for _, f := range n.Funcs {
		out = append(out, f.Out)
	}
	return out
}
func (n *WindowNode) Inputs() []Node { return []Node{n.In} }

// isOutput reports whether id is one of the node's window results.
func (n *WindowNode) isOutput(id ColID) bool {
	for _, f := range n.Funcs {
		if f.Out.ID == id {
			return true
		}
	}
	return false
}

// WindowFunc is one window function call, bound.
type WindowFunc struct {
	Name string // lower case: row_number, lag, sum, ...
	// Args are the value arguments (lag's value; an aggregate's argument).
	// Constant parameters (lag's offset, ntile's bucket count, nth_value's
	// N) are in N, lag's and lead's default in Default.
	Args         []Expr
	Star         bool // COUNT(*)
	Distinct     bool
	IgnoreNulls  bool
	RespectNulls bool // written for PERCENTILE_CONT/DISC, which ignore NULLs by default
	N            int64
	P            float64 // PERCENTILE_CONT/DISC's percentile
	Default      Expr
	// Agg is set for aggregate functions used as window functions (sum,
	// count, ...); its Args are Args.
	Agg       *AggCall
	Partition []Expr
	Order     []SortKey
	// Frame is the effective frame of an aggregate or of
	// first_value/last_value/nth_value (the default one when none was
	// written); Unit is frameNone for the other functions.
	Frame WindowFrame
	T     ColType
	Out   Column
}

// frameUnit says how a frame's bounds are measured.
type frameUnit uint8

const (
	frameNone  frameUnit = iota // the function takes no frame
	frameRows                   // physical rows
	frameRange                  // values of the single ORDER BY key (peers for CURRENT ROW)
)

// boundKind is one end of a frame.
type boundKind uint8

const (
	boundUnboundedPreceding boundKind = iota + 1
	boundPreceding
	boundCurrentRow
	boundFollowing
	boundUnboundedFollowing
)

func (k boundKind) String() string {
	switch k {
	case boundUnboundedPreceding:
		return "UNBOUNDED PRECEDING"
	case boundPreceding:
		return "OFFSET PRECEDING"
	case boundCurrentRow:
		return "CURRENT ROW"
	case boundFollowing:
		return "OFFSET FOLLOWING"
	case boundUnboundedFollowing:
		return "UNBOUNDED FOLLOWING"
	}
	return "?"
}

// frameBound is one end of a frame; the offset of an OFFSET bound is N
// (ROWS, RANGE over INT64) or F (RANGE over FLOAT64).
type frameBound struct {
	Kind boundKind
	N    int64
	F    float64
}

// WindowFrame is a frame: the rows of the partition, relative to the
// current row, a function reads.
type WindowFrame struct {
	Unit       frameUnit
	Start, End frameBound
	// FloatKey marks a RANGE frame with offsets over a FLOAT64 key.
	FloatKey bool
}

// wholePartition reports whether the frame is every row of the partition.
func (f WindowFrame) wholePartition() bool {
	return f.Start.Kind == boundUnboundedPreceding && f.End.Kind == boundUnboundedFollowing
}

func (f WindowFrame) String() string {
	if f.Unit == frameNone {
		return ""
	}
	unit := "ROWS"
	if f.Unit == frameRange {
		unit = "RANGE"
	}
	return fmt.Sprintf("%s BETWEEN %s AND %s", unit, f.boundString(f.Start), f.boundString(f.End))
}

func (f WindowFrame) boundString(b frameBound) string {
	off := strconv.FormatInt(b.N, 10)
	if f.FloatKey {
		off = strconv.FormatFloat(b.F, 'g', -1, 64)
	}
	switch b.Kind {
	case boundPreceding:
		return off + " PRECEDING"
	case boundFollowing:
		return off + " FOLLOWING"
	}
	return b.Kind.String()
}

// specKey identifies the partitioning and ordering of a call: calls with
// equal keys share one sort.
func (f *WindowFunc) specKey() string {
	var b strings.Builder
	b.WriteString("partition(")
	b.WriteString(joinExprs(f.Partition, ", "))
	b.WriteString(") order(")
	for i, k := range f.Order {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(k.E.String())
		if k.Desc {
			b.WriteString(" desc")
		}
		if k.NullsLast {
			b.WriteString(" nulls last")
		} else {
			b.WriteString(" nulls first")
		}
	}
	b.WriteString(")")
	return b.String()
}

// String renders the call (also its identity: equal strings are the same
// call, computed once).
func (f *WindowFunc) String() string {
	var args []string
	if f.Star {
		args = append(args, "*")
	}
	for _, a := range f.Args {
		args = append(args, a.String())
	}
	switch f.Name {
	case "lag", "lead", "ntile", "nth_value":
		args = append(args, strconv.FormatInt(f.N, 10))
	case "percentile_cont", "percentile_disc":
		args = append(args, strconv.FormatFloat(f.P, 'g', -1, 64))
	}
	if f.Default != nil {
		args = append(args, f.Default.String())
	}
	d := ""
	if f.Distinct {
		d = "DISTINCT "
	}
	nulls := ""
	if f.IgnoreNulls {
		nulls = " IGNORE NULLS"
	}
	if f.RespectNulls {
		nulls = " RESPECT NULLS"
	}
	var over []string
	if len(f.Partition) > 0 {
		over = append(over, "PARTITION BY "+joinExprs(f.Partition, ", "))
	}
	if len(f.Order) > 0 {
		over = append(over, "ORDER BY "+sortKeysString(f.Order))
	}
	if fr := f.Frame.String(); fr != "" {
		over = append(over, fr)
	}
	return fmt.Sprintf("%s(%s%s%s) OVER (%s)", f.Name, d, strings.Join(args, ", "), nulls, strings.Join(over, " "))
}

// explainLine is a WindowNode's line in Explain.
func (n *WindowNode) explainLine() string {
	parts := make([]string, len(n.Funcs))
	for i, f := range n.Funcs {
		parts[i] = fmt.Sprintf("%s=%s", f.Out.Name, f)
	}
	return "Window " + strings.Join(parts, ", ")
}
