// Package parser reads the BigQuery Standard SQL dialect that Logflare query
// endpoints and Supabase Studio send: lexer, syntax tree, parser, printer,
// parameter extraction, Logflare's validation rules, and the merging of a
// consumer query into a sandboxable endpoint query.
//
// # Entry points
//
//   - Parse: one query → *Query (syntax errors are *Error, formatted like
//     Logflare's sqlparser-rs errors: "sql parser error: Expected: ...,
//     found: ... at Line: l, Column: c").
//   - ParseStatements: every ';'-separated statement; statements that are
//     not queries come back as *OtherStatement so validation can name them.
//   - Validate / ValidateQuery: Logflare's rules with its exact messages
//     ("Only SELECT queries allowed", "restricted wildcard (*) in a result
//     column", "can't find source x", ...), and resolution of every table
//     name to a CTE in scope or a known source.
//   - Sandbox: the endpoint's CTEs plus the consumer's query (`sql=`).
//   - Parameters: the @names of a query, in order, once each.
//   - Format: canonical SQL that parses back to an Equal tree.
//   - Walk / Inspect (read) and Rewrite (replace nodes, bottom-up).
//
// # Dialect coverage
//
// Queries: WITH [RECURSIVE] (several CTEs, nested WITH inside parentheses),
// SELECT [DISTINCT] with aliases (AS optional) and a trailing comma before
// FROM, `*`, `t.*` and `* EXCEPT (...)` (parsed, rejected by validation),
// UNION/INTERSECT/EXCEPT [ALL|DISTINCT], parenthesised query bodies, ORDER
// BY (expressions, aliases, ordinals, ASC/DESC, NULLS FIRST/LAST), LIMIT and
// OFFSET (literals or @params), WHERE, GROUP BY, HAVING, QUALIFY.
//
// FROM: plain, dotted and backticked table names (`cloudflare.logs.prod` is
// one name), aliases, comma joins, CROSS/INNER/LEFT/RIGHT/FULL [OUTER] JOIN
// with ON or USING (ON optional for a join to UNNEST), UNNEST(x) [AS a]
// [WITH OFFSET [AS o]], subqueries, parenthesised join groups, and table
// function calls (parsed only so that validation can reject them by name,
// e.g. EXTERNAL_QUERY).
//
// Expressions, by BigQuery precedence (lowest first): OR; AND; NOT;
// comparisons = != <> < <= > >=, [NOT] LIKE, [NOT] BETWEEN, [NOT] IN (list |
// subquery | UNNEST(x)), IS [NOT] NULL/TRUE/FALSE/UNKNOWN, IS [NOT] DISTINCT
// FROM; |; ^; &; << >>; + -; * / ||; unary - + ~; postfix field access,
// subscripts (a[i], a[OFFSET(i)], a[ORDINAL(i)], a[SAFE_OFFSET(i)],
// a[SAFE_ORDINAL(i)]) and Postgres casts x::type. Literals: integers
// (decimal, 0x hex), floats, strings ('...', "...", triple-quoted, raw r'...',
// with BigQuery escapes and Studio's doubled ” quote), bytes b'...', TRUE,
// FALSE, NULL, typed literals (TIMESTAMP '...', DATE, DATETIME, TIME, JSON,
// NUMERIC, BIGNUMERIC), INTERVAL n unit, @params. CASE (simple and
// searched), CAST/SAFE_CAST to scalar, ARRAY<T> and STRUCT<...> types (and
// Postgres spellings: text, int, bigint, boolean, float, timestamptz, ...),
// function calls with dotted or backticked names, COUNT(*), DISTINCT, IGNORE
// NULLS, ORDER BY and LIMIT inside aggregates, window functions OVER
// (PARTITION BY ... ORDER BY ... ROWS|RANGE frame), EXTRACT(part FROM x [AT
// TIME ZONE tz]), date part arguments of TIMESTAMP_TRUNC, DATE_TRUNC,
// *_DIFF and LAST_DAY (as DatePart nodes), CURRENT_TIMESTAMP with or without
// parentheses, IF/LEFT/RIGHT calls, ARRAY(subquery), [..] and ARRAY[..]
// literals, STRUCT(a AS x, b), EXISTS(subquery), scalar subqueries.
// Comments: -- and # to end of line, /* ... */.
//
// Identifiers keep their spelling and whether they were backticked. Reserved
// words are BigQuery's, narrowed to those the grammar needs, so TIMESTAMP,
// DATE, TIME, LEVEL, STATUS, TYPE, USER, COUNT, OFFSET... work as names;
// after a dot any word is a name (m.from).
//
// # Syntax tree
//
// The node types form closed sets behind interfaces with unexported marker
// methods: Statement (*Query, *OtherStatement), QueryBody (*Select, *SetOp,
// *Query), TableExpr (*TableName, *SubqueryTable, *UnnestTable, *TableFunc,
// *Join) and Expr (see its doc). A type switch over one of them can list every case.
// Every node records where it starts (Pos: byte offset, line, column).
//
// The tree is normalised so that one meaning has one shape: grouping
// parentheses are dropped (the tree's shape is the grouping), `x::t` is a
// Cast like CAST(x AS t), a minus sign before a number is part of the
// literal, `(a).b` is the path a.b, chains (AND/OR, joins, set operations)
// are left-deep. That is also what makes the printer's output re-parse to an
// Equal tree.
//
// # Parsing
//
// The whole input is tokenised first (tokens are 16 bytes: kind and offsets;
// line and column are computed from the offset when a node or an error needs
// them). The parser is recursive descent with precedence climbing for
// operators and never backtracks: where `(` may open either a subquery or an
// expression, an expression list or a join group, it decides from the
// precomputed matching parenthesis. Scratch buffers are pooled; the tree
// itself is carved from chunks per parse, so a tree holds no pooled memory.
//
// # Limits
//
// Inputs over MaxInputBytes, nesting over MaxNesting and trees higher than
// MaxTreeHeight are errors, so no input can make the parser (or a consumer
// that recurses over the tree) use unbounded memory or stack. The parser
// never panics.
package parser
