package lql

import (
	"errors"
	"regexp/syntax"
	"strconv"
	"strings"
	"time"
)

// Field clauses: `<path><op><value>`, typed with the schema when there is
// one (docs/compat/logflare.md §9.4), best effort otherwise.

// rawValue is a field operand as written.
type rawValue struct {
	text   string // content, quotes or parentheses removed
	quoted bool   // written "..." or (...): always a string literal
	shown  string // as written, for messages
}

// fieldValue reads the operand after a field operator.
func (p *parser) fieldValue(start int, path string) (rawValue, error) {
	begin := p.pos
	if p.pos >= len(p.src) || isSpace(p.src[p.pos]) {
		return rawValue{shown: `""`}, nil
	}
	switch p.src[p.pos] {
	case '"':
		s, err := p.quoted(start)
		if err != nil {
			return rawValue{}, err
		}
		return rawValue{text: s, quoted: true, shown: p.src[begin:p.pos]}, nil
	case '(':
		end := strings.IndexByte(p.src[p.pos:], ')')
		if end < 0 {
			return rawValue{}, p.fail(start, msgFieldValue(path, p.src[p.pos:p.tokenEnd(p.pos)])+" (missing closing `)`)")
		}
		text := p.src[p.pos+1 : p.pos+end]
		p.pos += end + 1
		return rawValue{text: text, quoted: true, shown: p.src[begin:p.pos]}, nil
	}
	tok := p.token()
	return rawValue{text: tok, shown: tok}, nil
}

func (p *parser) fieldClause(start int, negate bool, head string) error {
	path, msg := normalisePath(head)
	if msg != "" {
		return p.fail(start, msg)
	}
	op := p.operator()
	rv, err := p.fieldValue(start, path)
	if err != nil {
		return err
	}
	f, msg := p.typedFilter(path, op, rv)
	if msg != "" {
		return p.fail(start, msg)
	}
	f.Negate = negate
	p.q.Filters = append(p.q.Filters, f)
	return nil
}

// typedFilter builds the filter for a field clause. msg is the error.
func (p *parser) typedFilter(path string, op Op, rv rawValue) (Filter, string) {
	f := Filter{Path: path, Op: op}
	if !rv.quoted && rv.text == "" {
		return f, msgFieldValue(path, rv.shown)
	}
	// The type of the path: from the schema, or the base columns' own.
	var ft FieldType
	typed := false
	if p.opts.Schema != nil {
		var msg string
		if ft, msg = p.lookup(path); msg != "" {
			return f, msg
		}
		if ft.Kind == TypeObject {
			return f, msgNotQueryable
		}
		typed = true
	} else if bt, ok := baseColumnType(path); ok {
		ft, typed = bt, true
	}

	if op == OpRegex || op == OpArrayRegex {
		if typed && (ft.Kind != TypeString || ft.Array != (op == OpArrayRegex)) {
			want := "a string"
			if op == OpArrayRegex {
				want = "an array<string>"
			}
			return f, "Query syntax error: operator `" + op.String() + "` needs " + want + " field, `" + path + "` is " + ft.String()
		}
		if err := checkRegex(rv.text); err != nil {
			return f, err.Error()
		}
		f.Value = StringValue(rv.text)
		return f, ""
	}

	isNull := !rv.quoted && rv.text == "NULL"
	if isNull {
		if op != OpEq {
			return f, msgFieldValue(path, "NULL") + " (NULL needs the `:` operator)"
		}
		f.Value = NullValue()
		return f, ""
	}

	if path == LevelPath && op == OpEq && !rv.quoted {
		if vals, ok := levelRange(rv.text); ok {
			if typed && (ft.Array || ft.Kind != TypeString) {
				return f, msgExpected(ft.String(), path, rv.text)
			}
			f.Op, f.Values = OpIn, vals
			return f, ""
		}
	}

	if typed {
		if op == OpArrayContains && !ft.Array {
			return f, "Query syntax error: operator `:@>` needs an array field, `" + path + "` is " + ft.String()
		}
		if op != OpArrayContains && ft.Array {
			return f, "Query syntax error: `" + path + "` is " + ft.String() + "; use `:@>` or `:@>~` to match its elements"
		}
		ft.Array = false
		if ft.temporal() {
			return p.temporalFilter(path, op, rv, ft)
		}
	}

	if lo, hi, ok := splitRange(rv.text); ok && !rv.quoted {
		if op != OpEq {
			return f, msgFieldValue(path, rv.shown) + " (a range needs the `:` operator)"
		}
		lc, hc := rangeSideClass(lo), rangeSideClass(hi)
		if lc == sideInvalid || lc != hc {
			return f, msgFieldValue(path, rv.shown)
		}
		lv, msg := castScalar(path, ft, typed, lo, false)
		if msg != "" {
			return f, msg
		}
		hv, msg := castScalar(path, ft, typed, hi, false)
		if msg != "" {
			return f, msg
		}
		f.Op, f.Values = OpRange, []Value{lv, hv}
		return f, ""
	}
	if !rv.quoted && !validBare(rv.text) {
		return f, msgFieldValue(path, rv.shown)
	}
	v, msg := castScalar(path, ft, typed, rv.text, rv.quoted)
	if msg != "" {
		return f, msg
	}
	f.Value = v
	return f, ""
}

// temporalFilter handles fields the schema types as timestamp or datetime:
// the operand is read like a `t:` value (ISO, Unix, ranges, shorthands).
// DATETIME columns hold civil times, so values without an offset are taken
// as written rather than in the display zone.
func (p *parser) temporalFilter(path string, op Op, rv rawValue, ft FieldType) (Filter, string) {
	tp, kind := p.times, KindTimestamp
	if ft.Kind == TypeDatetime {
		tp.loc, kind = time.UTC, KindDatetime
	}
	tv, terr := tp.parse(rv.text)
	if terr != nil {
		if terr.kind == timeErrNoClock {
			return Filter{}, terr.message(rv.text)
		}
		return Filter{}, msgExpected("datetime", path, rv.text)
	}
	if op == OpArrayContains {
		if tv.isRange {
			return Filter{}, msgExpected("datetime", path, rv.text)
		}
		return Filter{Path: path, Op: op, Value: Value{Kind: kind, Int: tv.lo.us}, Shorthand: tv.shorthand}, ""
	}
	f, msg := timeFilter(path, op, tv, kind)
	if msg != "" {
		return f, msgFieldValue(path, rv.shown) + " (" + msg + ")"
	}
	return f, ""
}

// castScalar turns one written value into an operand: cast to the column
// type when typed, else inferred (true/false, integer, float, string).
// Quoted values stay strings unless the column type says otherwise.
func castScalar(path string, ft FieldType, typed bool, text string, quoted bool) (Value, string) {
	if !typed {
		if quoted {
			return StringValue(text), ""
		}
		return inferValue(path, text)
	}
	switch ft.Kind {
	case TypeInt:
		if isIntText(text) {
			if n, err := strconv.ParseInt(text, 10, 64); err == nil {
				return IntValue(n), ""
			}
		}
		return Value{}, msgExpected("integer", path, text)
	case TypeFloat:
		if isIntText(text) || isDecimalText(text) {
			if x, err := strconv.ParseFloat(text, 64); err == nil {
				return FloatValue(x), ""
			}
		}
		return Value{}, msgExpected("float", path, text)
	case TypeBool:
		switch text {
		case "true":
			return BoolValue(true), ""
		case "false":
			return BoolValue(false), ""
		}
		return Value{}, msgExpected("boolean", path, text)
	}
	return StringValue(text), ""
}

// inferValue types an unquoted value without a schema.
func inferValue(path, text string) (Value, string) {
	switch {
	case text == "true":
		return BoolValue(true), ""
	case text == "false":
		return BoolValue(false), ""
	case isIntText(text):
		if n, err := strconv.ParseInt(text, 10, 64); err == nil {
			return IntValue(n), ""
		}
		fallthrough // too large for int64: keep it as a float
	case isDecimalText(text):
		x, err := strconv.ParseFloat(text, 64)
		if err != nil {
			return Value{}, msgFieldValue(path, text) + " (number out of range)"
		}
		return FloatValue(x), ""
	}
	return StringValue(text), ""
}

// isIntText matches -?[0-9]+.
func isIntText(s string) bool {
	s = strings.TrimPrefix(s, "-")
	return s != "" && allDigits(s)
}

// isDecimalText matches -?[0-9]+\.[0-9]+.
func isDecimalText(s string) bool {
	dot := strings.IndexByte(s, '.')
	return dot > 0 && isIntText(s[:dot]) && s[dot+1:] != "" && allDigits(s[dot+1:])
}

// isDateLiteral reports a valid ISO date or date-time literal.
func isDateLiteral(s string) bool {
	f, ok := scanISO(s)
	if !ok {
		return false
	}
	_, err := timeParser{loc: time.UTC}.fromFields(f)
	return err == nil
}

// validBare reports the unquoted values LQL allows (docs/compat/logflare.md
// §9.2): numbers, ISO dates and date-times, and [A-Za-z0-9_]+ words.
func validBare(s string) bool {
	return isIntText(s) || isDecimalText(s) || isDateLiteral(s) || allNameChars(s)
}

type sideClass uint8

const (
	sideInvalid sideClass = iota
	sideNumber
	sideDate
)

// rangeSideClass classifies one end of `a..b`: ranges are of numbers or of
// dates / date-times.
func rangeSideClass(s string) sideClass {
	switch {
	case isIntText(s) || isDecimalText(s):
		return sideNumber
	case isDateLiteral(s):
		return sideDate
	}
	return sideInvalid
}

// splitRange splits `a..b` at its only "..".
func splitRange(s string) (lo, hi string, ok bool) {
	i := strings.Index(s, "..")
	if i <= 0 || i+2 >= len(s) {
		return "", "", false
	}
	return s[:i], s[i+2:], true
}

// levelRange expands `debug..error` to the syslog levels between the two
// ends (in either order), in severity order.
func levelRange(s string) ([]Value, bool) {
	lo, hi, ok := splitRange(s)
	if !ok {
		return nil, false
	}
	a, b := levelIndex(lo), levelIndex(hi)
	if a < 0 || b < 0 {
		return nil, false
	}
	if a > b {
		a, b = b, a
	}
	vals := make([]Value, 0, b-a+1)
	for i := a; i <= b; i++ {
		vals = append(vals, StringValue(levels[i]))
	}
	return vals, true
}

// checkRegex validates an RE2 pattern (what BigQuery's REGEXP_CONTAINS and
// Go's regexp both accept).
func checkRegex(re string) error {
	if _, err := syntax.Parse(re, syntax.Perl); err != nil {
		detail := err.Error()
		var se *syntax.Error
		if errors.As(err, &se) {
			detail = se.Code.String()
			if se.Expr != "" && se.Expr != re {
				detail += ": `" + se.Expr + "`"
			}
		}
		return errors.New("Error while parsing regular expression `" + re + "`: " + detail)
	}
	return nil
}
