package engine

import (
	"github.com/sediment/sediment/internal/jsonstr"
	"slices"
	"strconv"
	"strings"

	"github.com/sediment/sediment/event"
	"github.com/sediment/sediment/internal/vec"
	"github.com/sediment/sediment/segment"
)

// recordBuilder rebuilds the nested value of a record (an object path, or
// the whole event when prefix is "") from the flattened columns under it.
// Within one event a path holds one value, so the columns of different
// types at one path never collide in a row.
type recordBuilder struct {
	cols []matCol
}

type matCol struct {
	rel []string // path relative to the prefix
	typ segment.ColType
	v   *vec.Vector
}

// recordLayout is what a recordBuilder needs of a part's columns: those
// under the prefix, split into path elements and sorted by them. A rare
// match's records are built block by block, each block's from vectors of
// its own; the layout of their part is computed once for all of them.
type recordLayout struct {
	cols []layoutCol
}

type layoutCol struct {
	rel []string // path relative to the prefix
	typ segment.ColType
	at  int // index in the part's column list given to newRecordLayout
}

// newRecordLayout returns the layout of the columns of cols under prefix.
func newRecordLayout(cols []colRef, prefix string) *recordLayout {
	l := &recordLayout{}
	for i, c := range cols {
		var rel string
		switch {
		case prefix == "":
			if c.path == "timestamp" || c.path == "id" || c.path == "event_message" {
				continue
			}
			rel = c.path
		case strings.HasPrefix(c.path, prefix+"."):
			rel = c.path[len(prefix)+1:]
		default:
			continue
		}
		l.cols = append(l.cols, layoutCol{rel: strings.Split(rel, "."), typ: c.typ, at: i})
	}
	slices.SortFunc(l.cols, func(x, y layoutCol) int { return slices.Compare(x.rel, y.rel) })
	return l
}

// builder returns a recordBuilder of the layout's columns whose values
// are vecs (indexed as the columns given to newRecordLayout).
func (l *recordLayout) builder(vecs []vec.Vector) *recordBuilder {
	b := &recordBuilder{cols: make([]matCol, len(l.cols))}
	for i, c := range l.cols {
		b.cols[i] = matCol{rel: c.rel, typ: c.typ, v: &vecs[c.at]}
	}
	return b
}

func newRecordBuilder(cols []colRef, vecs []vec.Vector, prefix string) *recordBuilder {
	return newRecordLayout(cols, prefix).builder(vecs)
}

// build returns the record of row r as an Object value.
func (b *recordBuilder) build(r int) (event.Value, error) {
	root := event.ObjectValue()
	for _, c := range b.cols {
		if c.v.IsNull(r) {
			continue
		}
		var val event.Value
		switch c.typ {
		case segment.TypeObject:
			val = event.ObjectValue()
		case segment.TypeBool:
			val = event.BoolValue(c.v.Bools[r])
		case segment.TypeInt64, segment.TypeTimestamp:
			val = event.IntValue(c.v.Ints[r])
		case segment.TypeFloat64:
			val = event.FloatValue(c.v.Floats[r])
		case segment.TypeString:
			val = event.StringValue(c.v.StringAt(r))
		case segment.TypeArray:
			var err error
			val, _, err = event.DecodeValue([]byte(c.v.StringAt(r)))
			if err != nil {
				return event.Value{}, err
			}
		}
		insertPath(&root, c.rel, val)
	}
	return root, nil
}

// insertPath sets val at path under obj, creating objects on the way. An
// object already there (from a presence column) is kept.
func insertPath(obj *event.Value, path []string, val event.Value) {
	cur := obj
	for i, k := range path {
		last := i == len(path)-1
		child := cur.Get(k)
		if child == nil {
			if last {
				cur.Kids = append(cur.Kids, event.Member(k, val))
				return
			}
			cur.Kids = append(cur.Kids, event.Member(k, event.ObjectValue()))
			child = &cur.Kids[len(cur.Kids)-1]
		} else if last {
			if !(val.Kind == event.Object && child.Kind == event.Object) {
				*child = event.Member(k, val)
			}
			return
		}
		if child.Kind != event.Object {
			*child = event.Member(k, event.ObjectValue())
		}
		cur = child
	}
}

// appendBQJSON writes v in BigQuery's result shape: every object nested in a
// record is a one-element array (a REPEATED RECORD), arrays of objects are
// arrays of such records, scalars as JSON. The outermost object is wrapped
// when wrap is set.
func appendBQJSON(dst []byte, v *event.Value, wrap bool) []byte {
	switch v.Kind {
	case event.Object:
		if wrap {
			dst = append(dst, '[')
		}
		dst = append(dst, '{')
		for i := range v.Kids {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = jsonstr.Append(dst, v.Kids[i].Key)
			dst = append(dst, ':')
			dst = appendBQJSON(dst, &v.Kids[i], true)
		}
		dst = append(dst, '}')
		if wrap {
			dst = append(dst, ']')
		}
	case event.Array:
		dst = append(dst, '[')
		for i := range v.Kids {
			if i > 0 {
				dst = append(dst, ',')
			}
			// Elements of a REPEATED RECORD are records themselves.
			dst = appendBQJSON(dst, &v.Kids[i], false)
		}
		dst = append(dst, ']')
	default:
		dst = appendScalarJSON(dst, v)
	}
	return dst
}

func appendScalarJSON(dst []byte, v *event.Value) []byte {
	switch v.Kind {
	case event.Null:
		return append(dst, "null"...)
	case event.Bool:
		return strconv.AppendBool(dst, v.Bool())
	case event.Int:
		return strconv.AppendInt(dst, v.Int(), 10)
	case event.Float:
		return jsonstr.AppendFloat(dst, v.Float())
	case event.String:
		return jsonstr.Append(dst, v.Str)
	}
	return append(dst, "null"...)
}
