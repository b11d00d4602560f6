package parser

import (
	"strconv"
	"strings"
)

// Limits on what the parser accepts. They keep allocations and recursion
// bounded whatever the input (the parser is fuzzed and faces the network).
const (
	// MaxInputBytes is the largest SQL text Parse accepts. Logflare endpoint
	// queries and Studio's generated SQL are a few KiB; 1 MiB leaves room for
	// hand-written monsters while bounding the token slice (~20 B per token).
	MaxInputBytes = 1 << 20

	// MaxNesting bounds how deeply constructs may nest: parentheses,
	// subqueries, function calls, CASE, unary operators, parenthesised
	// joins, nested types. It bounds the parser's own recursion.
	MaxNesting = 200

	// MaxTreeHeight bounds the height of the resulting AST. Long left-deep
	// chains (a OR b OR c ..., many joins, many UNION ALL branches) are parsed
	// iteratively but produce deep trees; every consumer of the AST (printer,
	// walker, planner) recurses over it, so the height is bounded too.
	MaxTreeHeight = 2000
)

// Pos is a position in the SQL source text.
type Pos struct {
	Offset int // byte offset, 0-based
	Line   int // 1-based
	Col    int // 1-based, counted in characters (runes), like sqlparser-rs
}

// String formats the position as "Line: l, Column: c", the way Logflare's
// parser errors name it.
func (p Pos) String() string {
	return "Line: " + strconv.Itoa(p.Line) + ", Column: " + strconv.Itoa(p.Col)
}

// Error is a syntax error. Its text imitates the errors Logflare returned from
// sqlparser-rs, e.g.
//
//	sql parser error: Expected: ), found: EOF at Line: 1, Column: 23
type Error struct {
	// Msg is the description without the "sql parser error: " prefix and the
	// position suffix, e.g. "Expected: ), found: EOF".
	Msg string
	// Pos is where the offending token starts.
	Pos Pos
}

// Error formats the error the way Logflare reports parser errors.
func (e *Error) Error() string {
	return "sql parser error: " + e.Msg + " at " + e.Pos.String()
}

// ValidationKind classifies a ValidationError so callers can react without
// matching message text.
type ValidationKind uint8

// Validation error kinds. Each has exactly one message (see ValidationError).
const (
	// KindEmpty: the text holds no statement. "Query cannot be empty".
	KindEmpty ValidationKind = iota + 1
	// KindNotSelect: a statement other than a query.
	// "Only SELECT queries allowed".
	KindNotSelect
	// KindMultipleStatements: more than one statement.
	// "Only singular query allowed".
	KindMultipleStatements
	// KindWildcard: `*` or `t.*` in a select list.
	// "restricted wildcard (*) in a result column".
	KindWildcard
	// KindRestrictedFunction: a call to a function on the deny list.
	// "Restricted function <name>".
	KindRestrictedFunction
	// KindUnknownSource: a table name that is neither a CTE in scope nor a
	// known source. "can't find source <name>".
	KindUnknownSource
	// KindSandboxNotSelect: the consumer query of a sandbox is not a query.
	// "Only SELECT queries allowed in sandboxed queries".
	KindSandboxNotSelect
	// KindSandboxTableNotInCTE: the consumer query of a sandbox reads a table
	// that is not a CTE. "Table not found in CTE: (<names>)".
	KindSandboxTableNotInCTE
	// KindSandboxNoWith: the endpoint query has no WITH clause, so it cannot
	// be sandboxed. Logflare silently ignores the consumer query in that
	// case; the caller decides (see Sandbox).
	KindSandboxNoWith
)

// ValidationError is a rule violation found after a successful parse. Error()
// returns exactly the message Logflare returns for the same rule.
type ValidationError struct {
	Kind ValidationKind
	// Name is the offending function or table name(s), when the kind has one.
	Name string
	// Pos is where the offending construct starts (zero when not applicable).
	Pos Pos
}

// Error returns Logflare's message for the violated rule.
func (e *ValidationError) Error() string {
	switch e.Kind {
	case KindEmpty:
		return "Query cannot be empty"
	case KindNotSelect:
		return "Only SELECT queries allowed"
	case KindMultipleStatements:
		return "Only singular query allowed"
	case KindWildcard:
		return "restricted wildcard (*) in a result column"
	case KindRestrictedFunction:
		return "Restricted function " + e.Name
	case KindUnknownSource:
		return "can't find source " + e.Name
	case KindSandboxNotSelect:
		return "Only SELECT queries allowed in sandboxed queries"
	case KindSandboxTableNotInCTE:
		return "Table not found in CTE: (" + e.Name + ")"
	case KindSandboxNoWith:
		return "Sandboxed queries require an endpoint query with a WITH clause"
	}
	return "invalid query"
}

// describeToken renders a token's source text for an error message the way
// sqlparser-rs does: the text as written, EOF at the end of input. Long tokens
// (string literals) are cut so messages stay readable.
func describeToken(src string, t token) string {
	if t.kind == tEOF {
		return "EOF"
	}
	s := src[t.off:t.end]
	const maxLen = 48
	if len(s) > maxLen {
		cut := maxLen
		for cut > 0 && !isRuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "..."
	}
	return strings.ReplaceAll(s, "\n", " ")
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }
