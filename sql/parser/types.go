package parser

import "strings"

// TypeKind is the BigQuery type a type name denotes. Postgres spellings used
// with `::` (text, int, bigint, boolean, float, timestamptz, jsonb, ...) map
// to the BigQuery type with the same meaning.
type TypeKind uint8

// Type kinds.
const (
	TypeInvalid TypeKind = iota
	TypeInt64
	TypeFloat64
	TypeNumeric
	TypeBigNumeric
	TypeString
	TypeBool
	TypeTimestamp
	TypeDatetime
	TypeDate
	TypeTime
	TypeBytes
	TypeJSON
	TypeInterval
	TypeArray
	TypeStruct
)

// String returns the BigQuery name of the type kind.
func (k TypeKind) String() string {
	switch k {
	case TypeInt64:
		return "INT64"
	case TypeFloat64:
		return "FLOAT64"
	case TypeNumeric:
		return "NUMERIC"
	case TypeBigNumeric:
		return "BIGNUMERIC"
	case TypeString:
		return "STRING"
	case TypeBool:
		return "BOOL"
	case TypeTimestamp:
		return "TIMESTAMP"
	case TypeDatetime:
		return "DATETIME"
	case TypeDate:
		return "DATE"
	case TypeTime:
		return "TIME"
	case TypeBytes:
		return "BYTES"
	case TypeJSON:
		return "JSON"
	case TypeInterval:
		return "INTERVAL"
	case TypeArray:
		return "ARRAY"
	case TypeStruct:
		return "STRUCT"
	}
	return "INVALID"
}

// TypeName is a data type as written in CAST, SAFE_CAST, `::`, ARRAY<T> and
// STRUCT<...>.
type TypeName struct {
	At   Pos
	Kind TypeKind
	// Name is the type's name as written, e.g. "INT64", "text",
	// "double precision", "ARRAY".
	Name string
	// Params are the parameters of a parameterised type: STRING(10),
	// NUMERIC(10, 2), varchar(255).
	Params []int64
	// Elem is the element type of an ARRAY.
	Elem *TypeName
	// Fields are the fields of a STRUCT.
	Fields []StructTypeField
}

// StructTypeField is one field of a STRUCT<...> type. Name is nil for an
// unnamed field (`STRUCT<INT64, STRING>`).
type StructTypeField struct {
	Name *Ident
	Type *TypeName
}

// typeKinds maps lower-case type names to kinds. ARRAY and STRUCT are handled
// separately because they take <...>.
var typeKinds = map[string]TypeKind{
	"int64": TypeInt64, "int": TypeInt64, "integer": TypeInt64, "bigint": TypeInt64,
	"smallint": TypeInt64, "tinyint": TypeInt64, "byteint": TypeInt64,
	"int2": TypeInt64, "int4": TypeInt64, "int8": TypeInt64,
	"float64": TypeFloat64, "float": TypeFloat64, "float4": TypeFloat64, "float8": TypeFloat64,
	"real": TypeFloat64, "double": TypeFloat64,
	"numeric": TypeNumeric, "decimal": TypeNumeric,
	"bignumeric": TypeBigNumeric, "bigdecimal": TypeBigNumeric,
	"string": TypeString, "text": TypeString, "varchar": TypeString, "char": TypeString,
	"bool": TypeBool, "boolean": TypeBool,
	"timestamp": TypeTimestamp, "timestamptz": TypeTimestamp,
	"datetime": TypeDatetime,
	"date":     TypeDate,
	"time":     TypeTime,
	"bytes":    TypeBytes, "bytea": TypeBytes,
	"json": TypeJSON, "jsonb": TypeJSON,
	"interval": TypeInterval,
}

// typedLiteralKinds are the type names that may prefix a string literal.
var typedLiteralKinds = map[string]TypeKind{
	"timestamp": TypeTimestamp, "date": TypeDate, "datetime": TypeDatetime,
	"time": TypeTime, "json": TypeJSON, "numeric": TypeNumeric, "decimal": TypeNumeric,
	"bignumeric": TypeBigNumeric, "bigdecimal": TypeBigNumeric,
}

// lookupLower looks word up in m ignoring case, without allocating for
// short words.
func lookupLower[V any](m map[string]V, word string) (V, bool) {
	var buf [16]byte
	if len(word) > len(buf) {
		v, ok := m[strings.ToLower(word)]
		return v, ok
	}
	for i := 0; i < len(word); i++ {
		c := word[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		buf[i] = c
	}
	v, ok := m[string(buf[:len(word)])]
	return v, ok
}
