package lql

import (
	"errors"
	"strconv"
	"strings"
	"time"
)

// Encode writes q as canonical LQL: the from clause, the selects, the
// filters in order, then the chart as `c:<agg>(<field>) c:group_by(t::<period>)`,
// separated by single spaces. Parsing the result with the same Options (clock,
// zone, schema) gives a Query equal to q. Timestamps are written in UTC with
// `Z`, brace ranges as plain ranges, shorthands as their canonical names
// (`last@5minute`), level ranges back as `m.level:a..b`.
//
// Every Query that Parse returns can be encoded; an error means a
// hand-built Query that LQL cannot express.
func Encode(q *Query) (string, error) {
	if q == nil {
		return "", nil
	}
	var b strings.Builder
	sep := func() {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
	}
	if q.From != "" {
		if !allNameChars(q.From) {
			return "", errors.New("lql: cannot encode from table " + strconv.Quote(q.From))
		}
		b.WriteString("f:" + q.From)
	}
	for _, s := range q.Selects {
		sep()
		if err := encodeSelect(&b, s); err != nil {
			return "", err
		}
	}
	for i := range q.Filters {
		sep()
		if err := encodeFilter(&b, &q.Filters[i]); err != nil {
			return "", err
		}
	}
	if q.Chart != nil {
		sep()
		if err := encodeChart(&b, q.Chart); err != nil {
			return "", err
		}
	}
	return b.String(), nil
}

// String returns Encode(q), or a description of why q cannot be encoded.
func (q *Query) String() string {
	s, err := Encode(q)
	if err != nil {
		return "<" + err.Error() + ">"
	}
	return s
}

// keywordHeads are the clause prefixes that are not field paths.
var keywordHeads = map[string]bool{
	"f": true, "from": true, "c": true, "chart": true,
	"s": true, "select": true, "t": true, "timestamp": true,
}

// writtenPath returns how a field path is written so that it parses back to
// itself: `metadata.` as `m.`. A filter clause's path cannot be one of the
// clause keywords (f, s, t, ...); inside s: and c: clauses it can.
func writtenPath(path string, clauseHead bool) (string, error) {
	if norm, msg := normalisePath(path); msg != "" || norm != path || (clauseHead && keywordHeads[path]) {
		return "", errors.New("lql: cannot encode field path " + strconv.Quote(path))
	}
	if strings.HasPrefix(path, "metadata.") {
		return "m." + path[len("metadata."):], nil
	}
	return path, nil
}

func encodeSelect(b *strings.Builder, s Select) error {
	if s.Path == Wildcard {
		if s.Alias != "" {
			return errors.New("lql: cannot encode s:* with an alias")
		}
		b.WriteString("s:*")
		return nil
	}
	p, err := writtenPath(s.Path, false)
	if err != nil {
		return err
	}
	b.WriteString("s:" + p)
	if s.Alias != "" {
		if !allNameChars(s.Alias) {
			return errors.New("lql: cannot encode select alias " + strconv.Quote(s.Alias))
		}
		b.WriteString("@" + s.Alias)
	}
	return nil
}

func encodeChart(b *strings.Builder, c *Chart) error {
	if c.Aggregate < AggCount || c.Aggregate > AggP99 || c.Period < PeriodSecond || c.Period > PeriodDay {
		return errors.New("lql: cannot encode chart rule")
	}
	arg := "*"
	if c.Path != "timestamp" {
		p, err := writtenPath(c.Path, false)
		if err != nil {
			return err
		}
		arg = p
	} else if c.Aggregate.numeric() {
		return errors.New("lql: cannot encode chart " + c.Aggregate.String() + "(*)")
	}
	b.WriteString("c:" + c.Aggregate.String() + "(" + arg + ") c:group_by(t::" + c.Period.String() + ")")
	return nil
}

func encodeFilter(b *strings.Builder, f *Filter) error {
	if f.Negate {
		b.WriteByte('-')
	}
	if f.Path == "event_message" && (f.Op == OpContains || f.Op == OpRegex) {
		if f.Value.Kind != KindString {
			return errors.New("lql: cannot encode event_message filter with a " + f.Value.Kind.String() + " value")
		}
		if f.Op == OpRegex {
			b.WriteByte('~')
		}
		if isWordSafe(f.Value.Str) {
			b.WriteString(f.Value.Str)
		} else {
			writeQuoted(b, f.Value.Str)
		}
		return nil
	}
	if f.Op == OpContains {
		return errors.New("lql: cannot encode a contains filter on " + strconv.Quote(f.Path))
	}

	var path string
	if f.Path == "timestamp" {
		path = "t"
	} else {
		p, err := writtenPath(f.Path, true)
		if err != nil {
			return err
		}
		path = p
	}
	b.WriteString(path)
	b.WriteString(f.Op.String())

	if f.Shorthand != "" {
		ok := f.Op == OpRange
		if f.Shorthand == "now" {
			ok = f.Op == OpEq || f.Op == OpGt || f.Op == OpGte || f.Op == OpLt || f.Op == OpLte
		}
		if !ok {
			return errors.New("lql: cannot encode shorthand " + strconv.Quote(f.Shorthand) + " with operator " + f.Op.String())
		}
		b.WriteString(f.Shorthand)
		return nil
	}

	switch f.Op {
	case OpRange:
		if len(f.Values) != 2 {
			return errors.New("lql: a range filter needs two values")
		}
		for i, v := range f.Values {
			if i == 1 {
				b.WriteString("..")
			}
			s, ok := rangeSideText(v)
			if !ok {
				return errors.New("lql: cannot encode range end " + valueDebug(v))
			}
			b.WriteString(s)
		}
		return timestampPathCheck(f)
	case OpIn:
		lo, hi, ok := levelRunEnds(f)
		if !ok {
			return errors.New("lql: only metadata.level ranges can be encoded as IN")
		}
		b.WriteString(lo + ".." + hi)
		return nil
	case OpRegex, OpArrayRegex:
		if f.Value.Kind != KindString {
			return errors.New("lql: a regular expression must be a string")
		}
		if f.Value.Str != "" && allNameChars(f.Value.Str) {
			b.WriteString(f.Value.Str)
		} else {
			writeQuoted(b, f.Value.Str)
		}
		return nil
	case OpEq, OpGt, OpGte, OpLt, OpLte, OpArrayContains:
		if f.Value.Kind == KindNull && f.Op != OpEq {
			return errors.New("lql: NULL needs the `:` operator")
		}
		if err := timestampPathCheck(f); err != nil {
			return err
		}
		return writeScalar(b, f.Value)
	}
	return errors.New("lql: cannot encode operator " + f.Op.String())
}

// timestampPathCheck: a `t:` clause always parses as a timestamp
// comparison or range.
func timestampPathCheck(f *Filter) error {
	if f.Path != "timestamp" {
		return nil
	}
	vals := f.Values
	switch f.Op {
	case OpRange:
	case OpEq, OpGt, OpGte, OpLt, OpLte:
		vals = []Value{f.Value}
	default:
		return errors.New("lql: cannot encode operator " + f.Op.String() + " on timestamp")
	}
	for _, v := range vals {
		if v.Kind != KindTimestamp {
			return errors.New("lql: timestamp filters need timestamp values, got " + valueDebug(v))
		}
	}
	return nil
}

// writeScalar writes a single operand so that it re-parses to the same
// Value.
func writeScalar(b *strings.Builder, v Value) error {
	switch v.Kind {
	case KindNull:
		b.WriteString("NULL")
	case KindBool:
		b.WriteString(strconv.FormatBool(v.Bool))
	case KindInt:
		b.WriteString(strconv.FormatInt(v.Int, 10))
	case KindFloat:
		s, ok := floatText(v.Float)
		if !ok {
			return errors.New("lql: cannot encode float " + valueDebug(v))
		}
		b.WriteString(s)
	case KindString:
		if isBareString(v.Str) {
			b.WriteString(v.Str)
		} else {
			writeQuoted(b, v.Str)
		}
	case KindTimestamp:
		b.WriteString(timestampText(v.Int))
	case KindDatetime:
		b.WriteString(datetimeText(v.Int))
	default:
		return errors.New("lql: cannot encode value " + valueDebug(v))
	}
	return nil
}

// rangeSideText writes one end of `a..b`: numbers, dates and timestamps
// only, unquoted.
func rangeSideText(v Value) (string, bool) {
	switch v.Kind {
	case KindInt:
		return strconv.FormatInt(v.Int, 10), true
	case KindFloat:
		return floatText(v.Float)
	case KindString:
		return v.Str, rangeSideClass(v.Str) != sideInvalid
	case KindTimestamp:
		return timestampText(v.Int), true
	case KindDatetime:
		return datetimeText(v.Int), true
	}
	return "", false
}

// floatText writes a float that re-parses as a float: plain decimal
// notation, always with a fractional part.
func floatText(x float64) (string, bool) {
	s := strconv.FormatFloat(x, 'f', -1, 64)
	if strings.ContainsAny(s, "IN") { // Inf, NaN
		return "", false
	}
	if !strings.Contains(s, ".") {
		s += ".0"
	}
	return s, true
}

func timestampText(us int64) string {
	return time.UnixMicro(us).UTC().Format("2006-01-02T15:04:05.999999Z07:00")
}

func datetimeText(us int64) string {
	return time.UnixMicro(us).UTC().Format("2006-01-02T15:04:05.999999")
}

// isBareString reports a string value that can be written unquoted and still
// parse as that string: a [A-Za-z0-9_]+ word that is not a number, a
// boolean or NULL.
func isBareString(s string) bool {
	return s != "" && allNameChars(s) && !isIntText(s) && s != "true" && s != "false" && s != "NULL"
}

// isWordSafe reports an event_message search text that can be written as a
// bare word.
func isWordSafe(s string) bool {
	if s == "" || s[0] == '-' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isWordChar(s[i]) || s[i] == '\\' {
			return false
		}
	}
	return true
}

func writeQuoted(b *strings.Builder, s string) {
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		if s[i] == '"' || s[i] == '\\' {
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	b.WriteByte('"')
}

// levelRunEnds returns the ends of an OpIn filter that is a level range.
func levelRunEnds(f *Filter) (lo, hi string, ok bool) {
	if f.Path != LevelPath || len(f.Values) == 0 {
		return "", "", false
	}
	first := -1
	for i, v := range f.Values {
		if v.Kind != KindString {
			return "", "", false
		}
		idx := levelIndex(v.Str)
		if idx < 0 || (i > 0 && idx != first+i) {
			return "", "", false
		}
		if i == 0 {
			first = idx
		}
	}
	return levels[first], levels[first+len(f.Values)-1], true
}

func valueDebug(v Value) string {
	switch v.Kind {
	case KindInt, KindTimestamp, KindDatetime:
		return v.Kind.String() + " " + strconv.FormatInt(v.Int, 10)
	case KindFloat:
		return "float " + strconv.FormatFloat(v.Float, 'g', -1, 64)
	case KindString:
		return "string " + strconv.Quote(v.Str)
	case KindBool:
		return "boolean " + strconv.FormatBool(v.Bool)
	}
	return v.Kind.String()
}
