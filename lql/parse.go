package lql

import (
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Limits that keep hostile input (the query string of a public endpoint, a
// fuzzer) from costing more than a small, fixed amount of work.
const (
	// MaxQueryBytes is the longest query Parse accepts. Saved searches and
	// UI queries are a few hundred bytes; 100 clauses of long paths fit.
	MaxQueryBytes = 32 << 10
	// MaxClauses is Logflare's clause limit.
	MaxClauses = 100
	// MaxPathSegments bounds a field path's depth, and so the UNNEST joins
	// one clause can add (BigQuery itself nests records 15 deep at most).
	MaxPathSegments = 32
)

// Options carry everything Parse depends on besides the text, so that
// parsing is a pure function.
type Options struct {
	// Now is the clock for timestamp shorthands (now, today, last@5m, ...).
	// A query using a shorthand fails to parse when Now is zero.
	Now time.Time
	// Location is the display time zone: timestamps written without an
	// offset, dates, and shorthands are read in it. Nil means UTC.
	Location *time.Location
	// Schema, when set, types every field path (docs/compat/logflare.md
	// §9.4): unknown paths and records are errors and values are cast to
	// the column type. Nil means
	// best effort: true/false are booleans, then integers, floats, strings.
	Schema Schema
}

// Parse parses an LQL query. Blank input is an empty Query (no filter).
func Parse(q string, opts Options) (*Query, error) {
	return parse(q, opts, MaxQueryBytes)
}

// parse is Parse with the size limit as a parameter: the fuzz test re-parses
// encoder output, which may be longer than its input (escapes, expanded
// date ranges).
func parse(src string, opts Options, maxBytes int) (*Query, error) {
	if len(src) > maxBytes {
		return nil, &Error{Msg: "LQL query is too long: " + strconv.Itoa(len(src)) + " bytes, the limit is " + strconv.Itoa(maxBytes)}
	}
	if !utf8.ValidString(src) {
		return nil, &Error{Msg: "LQL query is not valid UTF-8"}
	}
	loc := opts.Location
	if loc == nil {
		loc = time.UTC
	}
	p := &parser{src: src, opts: opts, times: timeParser{now: opts.Now, loc: loc}}
	if err := p.run(); err != nil {
		return nil, err
	}
	return p.finish(), nil
}

type parser struct {
	src   string
	pos   int
	opts  Options
	times timeParser
	q     Query

	// Chart clauses merge: the aggregate from c:<agg>(...), the period from
	// c:group_by(...); a later clause of the same kind replaces an earlier.
	hasChart   bool
	chartAgg   Aggregate
	chartPath  string
	chartGroup Period
}

func (p *parser) run() error {
	clauses := 0
	for {
		p.skipSpace()
		if p.pos >= len(p.src) {
			return nil
		}
		if clauses == MaxClauses {
			return &Error{Clause: p.src[p.pos:], Offset: p.pos,
				Msg: "LQL query has more than " + strconv.Itoa(MaxClauses) + " clauses"}
		}
		clauses++
		if err := p.clause(); err != nil {
			return err
		}
	}
}

func (p *parser) finish() *Query {
	q := p.q
	if p.hasChart {
		c := &Chart{Aggregate: p.chartAgg, Path: p.chartPath, Period: p.chartGroup}
		if c.Aggregate == 0 {
			c.Aggregate, c.Path = AggCount, "timestamp"
		}
		if c.Period == 0 {
			c.Period = PeriodMinute
		}
		q.Chart = c
	}
	return &q
}

// isSpace is the clause separator: ASCII whitespace.
func isSpace(c byte) bool {
	return c == ' ' || c == '\n' || c == '\t' || c == '\r' || c == '\f' || c == '\v'
}

func (p *parser) skipSpace() {
	for p.pos < len(p.src) && isSpace(p.src[p.pos]) {
		p.pos++
	}
}

// tokenEnd returns the index of the first whitespace at or after i.
func (p *parser) tokenEnd(i int) int {
	for i < len(p.src) && !isSpace(p.src[i]) {
		i++
	}
	return i
}

// fail builds an Error for the clause starting at start.
func (p *parser) fail(start int, msg string) *Error {
	end := p.tokenEnd(start)
	if p.pos > end && p.pos <= len(p.src) {
		end = p.pos
	}
	return &Error{Clause: p.src[start:end], Offset: start, Msg: msg}
}

// isPathChar reports the characters of a field path: [A-Za-z0-9._].
func isPathChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_'
}

// isNameChar reports [A-Za-z0-9_], the characters of table names, aliases
// and bare values.
func isNameChar(c byte) bool { return c != '.' && isPathChar(c) }

// isWordChar reports the characters of a bare search word: Logflare's set
// plus any non-ASCII byte, so words in other scripts can be searched too.
func isWordChar(c byte) bool {
	if isPathChar(c) || c >= 0x80 {
		return true
	}
	return strings.IndexByte(`!%$^\+[]?(){}#&*-/<=>@;,|`, c) >= 0
}

// clause parses one clause at p.pos (not at whitespace).
func (p *parser) clause() error {
	start := p.pos
	negate := false
	if p.src[p.pos] == '-' {
		negate = true
		p.pos++
		if p.pos >= len(p.src) || isSpace(p.src[p.pos]) {
			return p.fail(start, "Error while parsing `-`: expected a clause after `-`")
		}
	}
	// Keyed clauses: a path followed by ':'.
	headEnd := p.pos
	for headEnd < len(p.src) && isPathChar(p.src[headEnd]) {
		headEnd++
	}
	if headEnd > p.pos && headEnd < len(p.src) && p.src[headEnd] == ':' {
		head := p.src[p.pos:headEnd]
		p.pos = headEnd + 1
		switch head {
		case "f", "from":
			return p.fromClause(start, negate)
		case "c", "chart":
			return p.chartClause(start, negate)
		case "s", "select":
			return p.selectClause(start, negate)
		case "t", "timestamp":
			return p.timestampClause(start, negate)
		}
		return p.fieldClause(start, negate, head)
	}
	op := OpContains
	if p.src[p.pos] == '~' {
		op = OpRegex
		p.pos++
		if p.pos >= len(p.src) || isSpace(p.src[p.pos]) {
			return p.fail(start, "Error while parsing `~`: expected a regular expression after `~`")
		}
	}
	var text string
	if p.src[p.pos] == '"' {
		s, err := p.quoted(start)
		if err != nil {
			return err
		}
		text = s
	} else {
		s, ok := p.word()
		if !ok {
			return p.fail(start, msgUnparsable(p.src[p.pos:]))
		}
		text = s
	}
	if op == OpRegex {
		if err := checkRegex(text); err != nil {
			return p.fail(start, err.Error())
		}
	}
	p.q.Filters = append(p.q.Filters, Filter{Path: "event_message", Op: op, Value: StringValue(text), Negate: negate})
	return nil
}

// unescape resolves the two escapes of quoted strings and words: `\"` is a
// quote and `\\` a backslash; any other backslash is kept as written, so
// regexes like `\d+` need no doubling.
func unescape(s string) string {
	if strings.IndexByte(s, '\\') < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && (s[i+1] == '"' || s[i+1] == '\\') {
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// quoted reads a "..." string at p.pos.
func (p *parser) quoted(start int) (string, error) {
	i := p.pos + 1
	for i < len(p.src) {
		switch p.src[i] {
		case '\\':
			if i+1 < len(p.src) && (p.src[i+1] == '"' || p.src[i+1] == '\\') {
				i += 2
				continue
			}
		case '"':
			s := unescape(p.src[p.pos+1 : i])
			p.pos = i + 1
			return s, nil
		}
		i++
	}
	return "", p.fail(start, "Error while parsing quoted string: missing closing `\"` in "+p.src[start:])
}

// word reads a bare search word at p.pos.
func (p *parser) word() (string, bool) {
	i := p.pos
	for i < len(p.src) {
		c := p.src[i]
		if c == '\\' && i+1 < len(p.src) && p.src[i+1] == '"' {
			i += 2
			continue
		}
		if !isWordChar(c) {
			break
		}
		i++
	}
	if i == p.pos {
		return "", false
	}
	s := unescape(p.src[p.pos:i])
	p.pos = i
	return s, true
}

// token reads up to the next whitespace.
func (p *parser) token() string {
	end := p.tokenEnd(p.pos)
	s := p.src[p.pos:end]
	p.pos = end
	return s
}

func (p *parser) fromClause(start int, negate bool) error {
	name := p.token()
	if negate {
		return p.fail(start, "Error while parsing from clause: a from clause cannot be negated")
	}
	if name == "" || !allNameChars(name) {
		return p.fail(start, "Error while parsing from clause: expected a table name ([A-Za-z0-9_]+), got '"+name+"'")
	}
	if p.q.From != "" {
		return p.fail(start, "Error while parsing from clause: only one from clause (f: or from:) is allowed, found f:"+p.q.From+" and f:"+name)
	}
	p.q.From = name
	return nil
}

func allNameChars(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isNameChar(s[i]) {
			return false
		}
	}
	return true
}

const chartExpected = "expected count(*), countd(<field>), avg|sum|max|p50|p95|p99(<field>) or group_by(t::second|minute|hour|day)"

func (p *parser) chartClause(start int, negate bool) error {
	tok := p.token()
	if negate {
		return p.fail(start, "Error while parsing chart clause: a chart clause cannot be negated")
	}
	bad := func() error {
		return p.fail(start, "Error while parsing chart clause: "+chartExpected+", got '"+tok+"'")
	}
	open := strings.IndexByte(tok, '(')
	if open < 0 || !strings.HasSuffix(tok, ")") {
		return bad()
	}
	fn, arg := tok[:open], tok[open+1:len(tok)-1]
	if fn == "group_by" {
		var unit string
		switch {
		case strings.HasPrefix(arg, "t::"):
			unit = arg[3:]
		case strings.HasPrefix(arg, "timestamp::"):
			unit = arg[len("timestamp::"):]
		default:
			return bad()
		}
		var per Period
		switch unit {
		case "second", "s":
			per = PeriodSecond
		case "minute", "m":
			per = PeriodMinute
		case "hour", "h":
			per = PeriodHour
		case "day", "d":
			per = PeriodDay
		default:
			return bad()
		}
		p.hasChart, p.chartGroup = true, per
		return nil
	}
	agg := Aggregate(0)
	for a := AggCount; a <= AggP99; a++ {
		if fn == a.String() {
			agg = a
		}
	}
	if agg == 0 {
		return bad()
	}
	path := "timestamp"
	if arg != "*" && arg != "timestamp" {
		var msg string
		if path, msg = normalisePath(arg); msg != "" {
			return p.fail(start, msg)
		}
	}
	if path == "timestamp" && agg.numeric() {
		return p.fail(start, "Error while parsing chart clause: "+agg.String()+" needs a numeric field, got '"+arg+"'")
	}
	if p.opts.Schema != nil && path != "timestamp" {
		t, msg := p.lookup(path)
		if msg != "" {
			return p.fail(start, msg)
		}
		if t.Kind == TypeObject {
			return p.fail(start, msgNotQueryable)
		}
		if agg.numeric() && (t.Array || !t.numeric()) {
			return p.fail(start, "Query syntax error: chart aggregate "+agg.String()+" needs a numeric field, `"+path+"` is "+t.String())
		}
	}
	p.hasChart, p.chartAgg, p.chartPath = true, agg, path
	return nil
}

func (p *parser) selectClause(start int, negate bool) error {
	tok := p.token()
	if negate {
		return p.fail(start, "Error while parsing select clause: a select clause cannot be negated")
	}
	path, alias := tok, ""
	if at := strings.IndexByte(tok, '@'); at >= 0 {
		path, alias = tok[:at], tok[at+1:]
		if alias == "" {
			return p.fail(start, msgBlankAlias)
		}
		if !allNameChars(alias) {
			return p.fail(start, "Error while parsing select clause: expected alias name ([A-Za-z0-9_]+) after @, got '"+alias+"'")
		}
	}
	if path == Wildcard {
		if alias != "" {
			return p.fail(start, "Error while parsing select clause: s:* cannot have an alias")
		}
		p.q.Selects = append(p.q.Selects, Select{Path: Wildcard})
		return nil
	}
	if path == "" {
		return p.fail(start, "Error while parsing select clause: expected *, m.<path> or <path>, got '"+tok+"'")
	}
	norm, msg := normalisePath(path)
	if msg != "" {
		return p.fail(start, msg)
	}
	if p.opts.Schema != nil {
		if _, msg := p.lookup(norm); msg != "" {
			return p.fail(start, msg)
		}
	}
	p.q.Selects = append(p.q.Selects, Select{Path: norm, Alias: alias})
	return nil
}

// normalisePath checks a written field path and rewrites `m.` to
// `metadata.`. msg is the error message for a malformed path.
func normalisePath(s string) (string, string) {
	if s == "" {
		return "", "Error while parsing field path: expected a field path ([A-Za-z0-9._]+)"
	}
	for i := 0; i < len(s); i++ {
		if !isPathChar(s[i]) {
			return "", "Error while parsing field path `" + s + "`: expected [A-Za-z0-9._]"
		}
	}
	if s[0] == '.' || s[len(s)-1] == '.' || strings.Contains(s, "..") {
		return "", "Error while parsing field path `" + s + "`: empty path segment"
	}
	if strings.Count(s, ".") >= MaxPathSegments {
		return "", "Error while parsing field path `" + s + "`: more than " + strconv.Itoa(MaxPathSegments) + " segments"
	}
	if strings.HasPrefix(s, "m.") {
		s = "metadata." + s[2:]
	}
	return s, ""
}

// lookup types a path with the schema (which must be set). msg is a
// Logflare error when the path is unknown.
func (p *parser) lookup(path string) (FieldType, string) {
	if t, ok := p.opts.Schema.Lookup(path); ok {
		return t, ""
	}
	if t, ok := baseColumnType(path); ok {
		return t, ""
	}
	return FieldType{}, msgNotInSchema(path)
}

// operator reads the operator after the ':' of a field clause.
func (p *parser) operator() Op {
	rest := p.src[p.pos:]
	for _, o := range []struct {
		s  string
		op Op
	}{{">=", OpGte}, {"<=", OpLte}, {">", OpGt}, {"<", OpLt}, {"~", OpRegex}, {"@>~", OpArrayRegex}, {"@>", OpArrayContains}} {
		if strings.HasPrefix(rest, o.s) {
			p.pos += len(o.s)
			return o.op
		}
	}
	return OpEq
}

func (p *parser) timestampClause(start int, negate bool) error {
	op := p.operator()
	text := p.token()
	switch op {
	case OpRegex, OpArrayContains, OpArrayRegex:
		return p.fail(start, "Error while parsing timestamp filter: operator `"+op.String()+"` does not apply to timestamps")
	}
	shown := text
	if shown == "" {
		shown = `""`
	}
	tv, terr := p.times.parse(text)
	if terr != nil {
		return p.fail(start, terr.message(shown))
	}
	f, msg := timeFilter("timestamp", op, tv, KindTimestamp)
	if msg != "" {
		return p.fail(start, "Error while parsing timestamp filter: "+msg)
	}
	f.Negate = negate
	p.q.Filters = append(p.q.Filters, f)
	return nil
}

// timeFilter turns a parsed timestamp operand into a filter. A date alone
// with `:` means that whole day; a range's date-only upper end is the end of
// that day. msg is set when the operator does not fit the operand.
func timeFilter(path string, op Op, tv timeValue, kind Kind) (Filter, string) {
	f := Filter{Path: path, Op: op, Shorthand: tv.shorthand}
	switch {
	case tv.isRange:
		if op != OpEq {
			return f, "a range needs the `:` operator, not `" + op.String() + "`"
		}
		hi := tv.hi.us
		if tv.hi.dateOnly {
			hi = tv.hi.dayEnd
		}
		f.Op, f.Values = OpRange, []Value{{Kind: kind, Int: tv.lo.us}, {Kind: kind, Int: hi}}
	case op == OpEq && tv.lo.dateOnly:
		f.Op, f.Values = OpRange, []Value{{Kind: kind, Int: tv.lo.us}, {Kind: kind, Int: tv.lo.dayEnd}}
	default:
		f.Value = Value{Kind: kind, Int: tv.lo.us}
	}
	return f, ""
}
