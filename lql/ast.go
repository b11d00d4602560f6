package lql

import "strconv"

// Query is a parsed LQL query: every filter must hold (clauses are ANDed),
// the select and chart rules shape the result, From names the table.
//
// A Query is plain data: Parse builds it, Encode writes it back, ToSQL and the
// in-process matcher (lql (match.go)) read it. Slices are nil when empty, so
// two parses of equivalent text are reflect.DeepEqual.
type Query struct {
	// Filters in the order they were written.
	Filters []Filter
	// Selects in the order they were written (s:/select: clauses).
	Selects []Select
	// Chart is the merge of all c:/chart: clauses, nil when there are none.
	Chart *Chart
	// From is the table named by f:/from:, "" when absent.
	From string
}

// Op is a filter's operator.
type Op uint8

// Filter operators. The numbers are not persisted anywhere.
const (
	// OpEq is `path:value`; with a Null Value it is `path IS NULL`.
	OpEq Op = iota + 1
	// OpGt is `path:>value`.
	OpGt
	// OpGte is `path:>=value`.
	OpGte
	// OpLt is `path:<value`.
	OpLt
	// OpLte is `path:<=value`.
	OpLte
	// OpRange is `path:a..b`, inclusive at both ends (SQL BETWEEN);
	// Values holds [a, b].
	OpRange
	// OpIn is the expansion of `metadata.level:a..b`: the field equals one
	// of Values (the syslog levels from a to b).
	OpIn
	// OpRegex is `path:~re` and, on event_message, `~re` / `~"re"`; the
	// Value is the RE2 pattern as a String.
	OpRegex
	// OpContains is a bare word or quoted phrase: event_message contains
	// the Value (case-sensitive substring).
	OpContains
	// OpArrayContains is `path:@>value`: the array field has an element
	// equal to Value.
	OpArrayContains
	// OpArrayRegex is `path:@>~re`: the array field has a string element
	// matching the pattern in Value.
	OpArrayRegex
)

// String returns the operator as LQL writes it after the field path.
func (o Op) String() string {
	switch o {
	case OpEq, OpRange, OpIn:
		return ":"
	case OpGt:
		return ":>"
	case OpGte:
		return ":>="
	case OpLt:
		return ":<"
	case OpLte:
		return ":<="
	case OpRegex:
		return ":~"
	case OpContains:
		return "contains"
	case OpArrayContains:
		return ":@>"
	case OpArrayRegex:
		return ":@>~"
	}
	return "op(" + strconv.Itoa(int(o)) + ")"
}

// Filter is one filter clause.
type Filter struct {
	// Path is the dotted field path: "event_message", "timestamp", "id",
	// "project", "metadata.response.status_code" (m. already rewritten).
	Path string
	// Op is the operator.
	Op Op
	// Value is the operand of single-valued operators.
	Value Value
	// Values holds [low, high] for OpRange and the members for OpIn.
	Values []Value
	// Negate is set by a leading `-`.
	Negate bool
	// Shorthand is the canonical timestamp shorthand the values were
	// computed from ("now", "today", "yesterday", "this@week",
	// "last@5minute"), "" otherwise. The encoder writes it instead of the
	// values, so a saved query keeps meaning "the last 5 minutes".
	Shorthand string
}

// IsNullTest reports whether f is `path:NULL` (negated or not).
func (f *Filter) IsNullTest() bool { return f.Op == OpEq && f.Value.Kind == KindNull }

// AcceptsNull reports whether f holds when its field is NULL (absent): true
// for `path:NULL` and for every negated clause except `-path:NULL`.
func (f *Filter) AcceptsNull() bool { return f.IsNullTest() != f.Negate }

// Kind is the type of a Value.
type Kind uint8

// Value kinds.
const (
	KindNull Kind = iota
	KindBool
	KindInt
	KindFloat
	KindString
	// KindTimestamp is an absolute instant, Int microseconds since the Unix
	// epoch (UTC).
	KindTimestamp
	// KindDatetime is a civil date and time without zone (BigQuery
	// DATETIME), Int microseconds since 1970-01-01T00:00:00 read as UTC.
	KindDatetime
)

// String returns the kind's name.
func (k Kind) String() string {
	switch k {
	case KindNull:
		return "null"
	case KindBool:
		return "boolean"
	case KindInt:
		return "integer"
	case KindFloat:
		return "float"
	case KindString:
		return "string"
	case KindTimestamp:
		return "timestamp"
	case KindDatetime:
		return "datetime"
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// Value is a typed filter operand.
type Value struct {
	Kind  Kind
	Bool  bool
	Int   int64 // KindInt; microseconds for KindTimestamp and KindDatetime
	Float float64
	Str   string
}

// NullValue returns the NULL operand.
func NullValue() Value { return Value{Kind: KindNull} }

// BoolValue returns a boolean operand.
func BoolValue(b bool) Value { return Value{Kind: KindBool, Bool: b} }

// IntValue returns an integer operand.
func IntValue(i int64) Value { return Value{Kind: KindInt, Int: i} }

// FloatValue returns a float operand.
func FloatValue(f float64) Value { return Value{Kind: KindFloat, Float: f} }

// StringValue returns a string operand.
func StringValue(s string) Value { return Value{Kind: KindString, Str: s} }

// TimestampValue returns an instant, in microseconds since the Unix epoch.
func TimestampValue(us int64) Value { return Value{Kind: KindTimestamp, Int: us} }

// DatetimeValue returns a civil date-time, in microseconds since
// 1970-01-01T00:00:00 read as UTC.
func DatetimeValue(us int64) Value { return Value{Kind: KindDatetime, Int: us} }

// Aggregate is a chart's aggregate function.
type Aggregate uint8

// Chart aggregates.
const (
	AggCount Aggregate = iota + 1
	AggCountDistinct
	AggAvg
	AggSum
	AggMax
	AggP50
	AggP95
	AggP99
)

var aggregateNames = [...]string{
	AggCount:         "count",
	AggCountDistinct: "countd",
	AggAvg:           "avg",
	AggSum:           "sum",
	AggMax:           "max",
	AggP50:           "p50",
	AggP95:           "p95",
	AggP99:           "p99",
}

// String returns the aggregate as LQL writes it (count, countd, avg, ...).
func (a Aggregate) String() string {
	if int(a) < len(aggregateNames) && aggregateNames[a] != "" {
		return aggregateNames[a]
	}
	return "aggregate(" + strconv.Itoa(int(a)) + ")"
}

// numeric reports whether the aggregate needs a numeric argument.
func (a Aggregate) numeric() bool {
	switch a {
	case AggAvg, AggSum, AggP50, AggP95, AggP99:
		return true
	}
	return false
}

// Period is a chart's time bucket.
type Period uint8

// Chart periods.
const (
	PeriodSecond Period = iota + 1
	PeriodMinute
	PeriodHour
	PeriodDay
)

// String returns the period's long LQL name (second, minute, hour, day).
func (p Period) String() string {
	switch p {
	case PeriodSecond:
		return "second"
	case PeriodMinute:
		return "minute"
	case PeriodHour:
		return "hour"
	case PeriodDay:
		return "day"
	}
	return "period(" + strconv.Itoa(int(p)) + ")"
}

// sqlPart is the TIMESTAMP_TRUNC date part for the period.
func (p Period) sqlPart() string {
	switch p {
	case PeriodSecond:
		return "SECOND"
	case PeriodMinute:
		return "MINUTE"
	case PeriodHour:
		return "HOUR"
	case PeriodDay:
		return "DAY"
	}
	return ""
}

// Chart is the merged chart rule: Aggregate(Path) per Period bucket of the
// event timestamp. Path is "timestamp" for `*`.
type Chart struct {
	Aggregate Aggregate
	Path      string
	Period    Period
}

// Select is one s:/select: clause. Path "*" is the wildcard (no projection
// change); Alias is "" unless written as `@alias`.
type Select struct {
	Path  string
	Alias string
}

// Wildcard is the Select path of `s:*`.
const Wildcard = "*"

// Syslog levels in severity order; `metadata.level:a..b` covers a slice of
// this list.
var levels = [...]string{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}

func levelIndex(s string) int {
	for i, l := range levels {
		if l == s {
			return i
		}
	}
	return -1
}

// LevelPath is the field the level-range shorthand applies to.
const LevelPath = "metadata.level"
