package search

import (
	"strings"

	"github.com/sediment/sediment/internal/vec"
	"github.com/sediment/sediment/lql"
	"github.com/sediment/sediment/sql/scan"
)

// SchemaOf adapts a source's scan schema (engine Snapshot.Schema) to the
// types the LQL parser checks clauses against:
//
//   - a scalar path has its query type (a path whose events disagreed has
//     the engine's widened type: INT64 with FLOAT64 is a float, other
//     mixes are strings);
//   - a path that only ever held objects is a record (not queryable);
//   - an array path is an array of its element type, or of records;
//   - a path under an array of records (metadata.items.name, with
//     metadata.items an array) has the type of that element field, as the
//     SQL translation unnests the array and reads the field per element.
//
// A nil schema gives a Schema that knows only the base columns.
func SchemaOf(s *scan.Schema) lql.Schema { return sourceSchema{s} }

type sourceSchema struct{ s *scan.Schema }

// Lookup implements lql.Schema.
func (a sourceSchema) Lookup(path string) (lql.FieldType, bool) {
	if f := a.s.Lookup(path); f != nil {
		return fieldType(f.Type, f.Record, f.Array, f.ElemType), true
	}
	// A field of the elements of an array of records: find the array
	// among the path's prefixes, longest first.
	for dot := strings.LastIndexByte(path, '.'); dot > 0; dot = strings.LastIndexByte(path[:dot], '.') {
		f := a.s.Lookup(path[:dot])
		if f == nil || !f.Array {
			continue
		}
		rel := path[dot+1:]
		for i := range f.ElemFields {
			if ef := &f.ElemFields[i]; ef.Path == rel {
				return fieldType(ef.Type, ef.Record, false, vec.Unknown), true
			}
		}
		return lql.FieldType{}, false
	}
	return lql.FieldType{}, false
}

// fieldType maps one field's scan description to an LQL type. A path that
// held scalars is read as its scalar type even if some events had an
// object or an array there (that is how the SQL engine reads it).
func fieldType(t vec.Type, record, array bool, elem vec.Type) lql.FieldType {
	switch {
	case t != vec.Unknown:
		return lql.FieldType{Kind: scalarKind(t)}
	case array && elem != vec.Unknown:
		return lql.FieldType{Kind: scalarKind(elem), Array: true}
	case array:
		return lql.FieldType{Kind: lql.TypeObject, Array: true}
	case record:
		return lql.FieldType{Kind: lql.TypeObject}
	}
	// A path that only ever held nulls: any operand is compared as text.
	return lql.FieldType{Kind: lql.TypeString}
}

func scalarKind(t vec.Type) lql.TypeKind {
	switch t {
	case vec.Bool:
		return lql.TypeBool
	case vec.Int64:
		return lql.TypeInt
	case vec.Float64:
		return lql.TypeFloat
	case vec.Timestamp:
		return lql.TypeTimestamp
	case vec.Datetime, vec.Date:
		return lql.TypeDatetime
	}
	return lql.TypeString
}
