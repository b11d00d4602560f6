package lql

import "fmt"

// Error is a parse error. Msg uses Logflare's wording where Logflare has
// one (the HTTP layer returns it to clients unchanged); otherwise it names
// the clause and what was expected.
type Error struct {
	// Clause is the offending clause as written (up to the next whitespace
	// when the clause could not be delimited).
	Clause string
	// Offset is the byte offset of Clause in the query.
	Offset int
	// Msg is the message Error returns.
	Msg string
}

// Error implements error.
func (e *Error) Error() string { return e.Msg }

// Messages shared by several call sites. Those quoting Logflare keep its
// exact text (including its punctuation).
const (
	msgBlankAlias   = "Error while parsing select clause: select alias cannot be blank, expected alias name after @. For example, s:my_field@my_alias"
	msgNotQueryable = "Field type `map` is not queryable."
)

func msgFieldValue(path, v string) string {
	return fmt.Sprintf("Error while parsing `%s` field metadata filter value: %s", path, v)
}

func msgTimestampValue(v string) string {
	return fmt.Sprintf("Error while parsing timestamp filter value: expected ISO8601 string, Unix timestamp, range or shorthand, got '%s'", v)
}

func msgNotInSchema(path string) string {
	return fmt.Sprintf("LQL parser error: path `%s` not present in source schema.", path)
}

func msgExpected(typ, path, v string) string {
	if typ == "boolean" {
		// Logflare capitalises this one.
		return fmt.Sprintf("Query syntax error: Expected boolean for %s, got: '%s'", path, v)
	}
	return fmt.Sprintf("Query syntax error: expected %s for %s, got: '%s'", typ, path, v)
}

func msgUnparsable(rest string) string {
	return "LQL parser doesn't know how to handle this part: " + rest
}
