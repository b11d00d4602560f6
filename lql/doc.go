// Package lql parses Logflare Query Language (LQL) search strings, writes
// them back in canonical form, and translates them to BigQuery-dialect SQL
// (docs/compat/logflare.md §9, and §6.9 for the `lql=` endpoint
// parameter). The in-process evaluator used by drop rules and live tail is
// lql (match.go); it implements the same semantics as ToSQL.
//
// # Grammar
//
// A query is 0 to 100 clauses separated by whitespace, all ANDed. A clause
// may start with `-` (negation; filters only). Clauses, tried in order:
//
//	f:<name>, from:<name>          table (a CTE for lql=); at most one
//	c:<agg>(<field>), chart:...    count(*), countd(f), avg|sum|max|p50|p95|p99(f); `*` is timestamp
//	c:group_by(t::<period>)        second|s, minute|m, hour|h, day|d; all c: clauses merge
//	s:<field>[@alias], select:...  `*`, m.<path> or <path>; `@` with no name is an error
//	t:<op><time>, timestamp:...    see Timestamps
//	<path><op><value>              m.a.b (= metadata.a.b), metadata.a.b, project, a.b.c
//	"phrase", ~"regex"             event_message contains / matches; \" and \\ are escapes
//	word, ~regex                   the same, unquoted
//
// Operators: `:` `:>` `:>=` `:<` `:<=` `:~` (regex) `:@>` (array contains)
// `:@>~` (array element matches). Values: `a..b` ranges of numbers or dates,
// ISO dates and date-times, numbers (negative and decimal too), NULL,
// "quoted", (parenthesised), and [A-Za-z0-9_]+ words. A regex operand may
// also be any unquoted run of non-blank characters.
//
// `metadata.level:<level>..<level>` (also `m.level:`) covers the syslog
// levels debug, info, notice, warning, error, critical, alert, emergency
// between the two ends. Logflare expands it into one equality per level,
// which ANDed together can never hold; here it is one filter, OpIn:
// `level IN ('info', 'notice', 'warning', 'error')`.
//
// # Types
//
// With Options.Schema every field path must exist ("LQL parser error: path
// `x` not present in source schema."), records are not queryable ("Field
// type `map` is not queryable."), and values are cast to the column type:
// `m.status:abc` on an integer column is "Query syntax error: expected
// integer for metadata.status, got: 'abc'"; a number on a string column is
// the string as written. Array columns take `:@>`/`:@>~`; regexes need
// string columns; timestamp and datetime columns take every `t:` value form.
// Without a schema: true/false are booleans, then integers (too large for
// int64: floats), decimals are floats, quoted values and everything else are
// strings. The base columns id and event_message are strings either way.
//
// # Timestamps
//
// `t:` takes YYYY-MM-DD, YYYY-MM-DDThh:mm:ss[.fraction][Z|±hh:mm], Unix time
// of 10, 13 or 16 digits (s, ms, µs), `a..b`, brace ranges
// (t:2022-04-{07..09}T00:{00..40}:00.{001..314} is the range from the low
// components to the high ones), and shorthands now, today, yesterday,
// this@<unit>, last@<unit>, last@<n><unit> (n up to 4 digits; units
// s|second(s), m|minute(s), h|hour(s), d|day(s), w|week(s), mm|month(s),
// y|year(s)). Values with an offset are absolute; values without one, and
// dates and shorthands, are read in Options.Location (UTC by default). Choices
// where Logflare is silent or unhelpful:
//   - a date alone with `:` (t:2024-01-01) is that whole day, and a date as
//     the upper end of a range runs to the end of that day; with <, >, <=, >=
//     a date is its midnight;
//   - weeks start on Monday (this@week);
//   - last@N<unit> runs from now truncated to the unit (to the day for
//     weeks, months and years, as in Logflare), shifted back N units, to
//     now; months and years clamp the day (March 31 minus a month is the
//     last day of February);
//   - today and yesterday end at their last microsecond; shorthand upper
//     ends are Options.Now exactly (Logflare truncates to the second);
//   - 16-digit Unix values keep their microseconds (Logflare keeps ms).
//
// # Errors and limits
//
// Parse returns *Error, whose message is Logflare's where Logflare has one.
// Input is limited to MaxQueryBytes and MaxClauses and must be UTF-8; words
// may contain non-ASCII characters (Logflare's are ASCII only). Regexes are
// checked at parse time with RE2 syntax.
package lql
