package lql

// TypeKind is the scalar type of a source column (or of an array column's
// elements), or TypeObject for records.
type TypeKind uint8

// Column types, as the source schema knows them.
const (
	TypeString TypeKind = iota + 1
	TypeInt
	TypeFloat
	TypeBool
	TypeTimestamp
	TypeDatetime
	// TypeObject is a record (BigQuery RECORD); records are not queryable
	// by filters, only walked through.
	TypeObject
)

// FieldType is the type of one field path in a source schema: a TypeKind,
// possibly repeated (an array of it).
type FieldType struct {
	Kind  TypeKind
	Array bool
}

// String names the type the way Logflare's messages do ("integer", "map",
// ...); arrays are "array<integer>".
func (t FieldType) String() string {
	var s string
	switch t.Kind {
	case TypeString:
		s = "string"
	case TypeInt:
		s = "integer"
	case TypeFloat:
		s = "float"
	case TypeBool:
		s = "boolean"
	case TypeTimestamp:
		s = "timestamp"
	case TypeDatetime:
		s = "datetime"
	case TypeObject:
		s = "map"
	default:
		s = "unknown"
	}
	if t.Array {
		return "array<" + s + ">"
	}
	return s
}

func (t FieldType) numeric() bool { return t.Kind == TypeInt || t.Kind == TypeFloat }

func (t FieldType) temporal() bool { return t.Kind == TypeTimestamp || t.Kind == TypeDatetime }

// Schema gives the type of a source's field paths. Paths are dotted and
// start at the top level ("metadata.response.status_code", "project").
//
// The base columns need not be listed: when Lookup does not know
// "timestamp", "id" or "event_message", they are taken as timestamp, string
// and string.
type Schema interface {
	Lookup(path string) (FieldType, bool)
}

// MapSchema is a Schema backed by a map, convenient for tests and callers
// that already hold a flat type map.
type MapSchema map[string]FieldType

// Lookup implements Schema.
func (m MapSchema) Lookup(path string) (FieldType, bool) {
	t, ok := m[path]
	return t, ok
}

// baseColumnType is the type of the three columns every source has.
func baseColumnType(path string) (FieldType, bool) {
	switch path {
	case "timestamp":
		return FieldType{Kind: TypeTimestamp}, true
	case "id", "event_message":
		return FieldType{Kind: TypeString}, true
	}
	return FieldType{}, false
}
