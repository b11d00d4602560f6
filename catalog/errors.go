package catalog

import (
	"errors"
	"sort"
	"strings"
)

// ErrNotFound is returned when no source, endpoint or token has the given
// token or id.
var ErrNotFound = errors.New("catalog: not found")

// ValidationError lists what is wrong with a create or update, field by
// field, in the shape Logflare's 422 responses use: {"field": ["message"]}.
// Messages follow Ecto's wording ("can't be blank", "must be greater than or
// equal to 1", ...).
type ValidationError struct {
	Fields map[string][]string
}

// Error joins the messages as "field: message; ...", fields sorted.
func (e *ValidationError) Error() string {
	keys := make([]string, 0, len(e.Fields))
	for k := range e.Fields {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString("catalog: invalid: ")
	for i, k := range keys {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(k)
		b.WriteString(": ")
		b.WriteString(strings.Join(e.Fields[k], ", "))
	}
	return b.String()
}

// fieldErrors collects validation messages.
type fieldErrors map[string][]string

func (f fieldErrors) add(field, msg string) { f[field] = append(f[field], msg) }

// err returns nil when nothing was added.
func (f fieldErrors) err() error {
	if len(f) == 0 {
		return nil
	}
	return &ValidationError{Fields: f}
}

// Ecto's messages, which Logflare's 422 bodies carry.
const (
	msgBlank   = "can't be blank"
	msgTaken   = "has already been taken"
	msgInvalid = "is invalid"
)

func msgAtLeast(n string) string { return "must be greater than or equal to " + n }
func msgAtMost(n string) string  { return "must be less than or equal to " + n }
