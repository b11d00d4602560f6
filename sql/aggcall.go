package sql

import (
	"fmt"
	"strings"

	"github.com/sediment/sediment/internal/vec"
)

// aggregateNames are the aggregate functions the executor implements.
var aggregateNames = map[string]bool{
	"count": true, "countif": true, "sum": true, "avg": true, "min": true, "max": true,
	"any_value": true, "approx_quantiles": true, "logical_and": true, "logical_or": true,
	"string_agg": true, "array_agg": true, "approx_count_distinct": true,
}

// AggCall is one aggregate of an AggregateNode.
type AggCall struct {
	Name     string // lower case
	Args     []Expr // Star: none
	Star     bool
	Distinct bool
	// Param is approx_quantiles' number of buckets; Sep string_agg's
	// delimiter.
	Param int64
	Sep   string
	// ARRAY_AGG and STRING_AGG may order their values and keep the first
	// Limit (-1: all): the last len(OrderDesc) Args are the ordering keys.
	OrderDesc      []bool
	OrderNullsLast []bool
	Limit          int64
	// IgnoreNulls is ARRAY_AGG(x IGNORE NULLS).
	IgnoreNulls bool
	T           ColType
	Out         Column
}

// valueArgs are the arguments that are not ordering keys.
func (a *AggCall) valueArgs() []Expr { return a.Args[:len(a.Args)-len(a.OrderDesc)] }

// orderKeys are the ARRAY_AGG/STRING_AGG ordering keys.
func (a *AggCall) orderKeys() []Expr { return a.Args[len(a.Args)-len(a.OrderDesc):] }

func (a *AggCall) String() string {
	var parts []string
	if a.Star {
		parts = append(parts, "*")
	}
	for _, x := range a.valueArgs() {
		parts = append(parts, x.String())
	}
	d := ""
	if a.Distinct {
		d = "DISTINCT "
	}
	tail := ""
	if a.IgnoreNulls {
		tail += " IGNORE NULLS"
	}
	for i, k := range a.orderKeys() {
		if i == 0 {
			tail += " ORDER BY "
		} else {
			tail += ", "
		}
		tail += k.String()
		if a.OrderDesc[i] {
			tail += " DESC"
		}
		if a.OrderNullsLast[i] != a.OrderDesc[i] {
			tail += map[bool]string{true: " NULLS LAST", false: " NULLS FIRST"}[a.OrderNullsLast[i]]
		}
	}
	if a.Limit >= 0 && len(a.OrderDesc) > 0 || a.Limit > 0 {
		tail += fmt.Sprintf(" LIMIT %d", a.Limit)
	}
	return fmt.Sprintf("%s(%s%s%s)", a.Name, d, strings.Join(parts, ", "), tail)
}

// aggResultType returns the result type of an aggregate over argument type t.
func aggResultType(name string, t ColType) (ColType, error) {
	switch name {
	case "count", "countif", "approx_count_distinct":
		return ColType{V: vec.Int64}, nil
	case "sum":
		switch t.V {
		case vec.Int64, vec.Bool:
			return ColType{V: vec.Int64}, nil
		case vec.Float64, vec.Unknown:
			return ColType{V: vec.Float64}, nil
		}
		return ColType{}, fmt.Errorf("No matching signature for aggregate function SUM for argument types: %s", t)
	case "avg":
		if t.V == vec.Int64 || t.V == vec.Float64 || t.V == vec.Unknown {
			return ColType{V: vec.Float64}, nil
		}
		return ColType{}, fmt.Errorf("No matching signature for aggregate function AVG for argument types: %s", t)
	case "min", "max", "any_value":
		if t.V == vec.RowRef || t.V == vec.List {
			if name == "any_value" {
				return t, nil
			}
			return ColType{}, fmt.Errorf("%s does not support argument type %s", strings.ToUpper(name), t)
		}
		return t, nil
	case "logical_and", "logical_or":
		if t.V != vec.Bool && t.V != vec.Unknown {
			return ColType{}, fmt.Errorf("No matching signature for aggregate function %s for argument types: %s", strings.ToUpper(name), t)
		}
		return ColType{V: vec.Bool}, nil
	case "string_agg":
		return ColType{V: vec.String}, nil
	case "approx_quantiles":
		if t.V != vec.Int64 && t.V != vec.Float64 && t.V != vec.Timestamp && t.V != vec.String && t.V != vec.Unknown {
			return ColType{}, fmt.Errorf("APPROX_QUANTILES does not support argument type %s", t)
		}
		return ColType{V: vec.List, Elem: t.V}, nil
	case "array_agg":
		if t.V == vec.List || t.V == vec.RowRef {
			return ColType{}, fmt.Errorf("ARRAY_AGG of %s is not supported", t)
		}
		return ColType{V: vec.List, Elem: t.V}, nil
	}
	return ColType{}, fmt.Errorf("Function not found: %s", name)
}
