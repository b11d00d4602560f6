package predicate

import "cmp"

// Op is an ordered comparison.
type Op uint8

// The comparisons. The zero Op is Eq.
const (
	Eq Op = iota
	Ne
	Lt
	Le
	Gt
	Ge
)

// String returns the operator as SQL writes it.
func (op Op) String() string {
	switch op {
	case Eq:
		return "="
	case Ne:
		return "!="
	case Lt:
		return "<"
	case Le:
		return "<="
	case Gt:
		return ">"
	case Ge:
		return ">="
	}
	return "?"
}

// Flip returns the operator with its operands swapped: x < y is y > x.
func (op Op) Flip() Op {
	switch op {
	case Lt:
		return Gt
	case Le:
		return Ge
	case Gt:
		return Lt
	case Ge:
		return Le
	}
	return op
}

// Holds reports whether x op y. Floats follow IEEE 754, as BigQuery's
// comparisons do: a NaN operand makes every comparison false but !=.
func Holds[T cmp.Ordered](op Op, x, y T) bool {
	switch op {
	case Eq:
		return x == y
	case Ne:
		return x != y
	case Lt:
		return x < y
	case Le:
		return x <= y
	case Gt:
		return x > y
	}
	return x >= y
}

// Compare orders two values: -1, 0 or +1. Unlike cmp.Compare it has no
// NaN tests (which cost in per-row loops): floats that may be NaN go
// through CompareFloat, or the caller decides NaN first (ORDER BY puts it
// first).
func Compare[T cmp.Ordered](x, y T) int {
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}

// CompareInt is Compare for integers, written out: the generic one costs
// a few percent in lql's per-event matcher (BenchmarkMatch).
func CompareInt(x, y int64) int {
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}

// Unordered is what CompareFloat returns for a NaN operand.
const Unordered = 2

// CompareFloat orders two floats: -1, 0 or +1, or Unordered when either is
// NaN.
func CompareFloat(x, y float64) int {
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	case x == y:
		return 0
	}
	return Unordered
}

// HoldsOrder answers op from a three-way comparison (cmp.Compare,
// strings.Compare, CompareFloat). Unordered satisfies only Ne, as Holds
// does for a NaN.
func HoldsOrder(op Op, c int) bool {
	if c == Unordered {
		return op == Ne
	}
	switch op {
	case Eq:
		return c == 0
	case Ne:
		return c != 0
	case Lt:
		return c < 0
	case Le:
		return c <= 0
	case Gt:
		return c > 0
	}
	return c >= 0
}

// AppendMatches appends to out the index of every x of xs for which
// x op c holds: a column compared with a constant, one loop per operator.
func AppendMatches[T cmp.Ordered](out []int32, op Op, xs []T, c T) []int32 {
	switch op {
	case Eq:
		for i, x := range xs {
			if x == c {
				out = append(out, int32(i))
			}
		}
	case Ne:
		for i, x := range xs {
			if x != c {
				out = append(out, int32(i))
			}
		}
	case Lt:
		for i, x := range xs {
			if x < c {
				out = append(out, int32(i))
			}
		}
	case Le:
		for i, x := range xs {
			if x <= c {
				out = append(out, int32(i))
			}
		}
	case Gt:
		for i, x := range xs {
			if x > c {
				out = append(out, int32(i))
			}
		}
	case Ge:
		for i, x := range xs {
			if x >= c {
				out = append(out, int32(i))
			}
		}
	}
	return out
}
