package event

import (
	"github.com/sediment/sediment/internal/jsonstr"
	"strconv"
)

// AppendJSON appends the compact JSON text of v to dst.
//
// Object members keep their order. Output is always valid UTF-8: invalid
// bytes in strings are written as \ufffd. Floats are written in the shortest
// form that round-trips and always re-parse as Float: an integral float gets a
// ".0" (1 → "1.0") or an exponent (1e21 → "1e+21"). NaN and ±Inf have no JSON
// form and are written as null. A Kind outside the known ones is written as
// null.
func AppendJSON(dst []byte, v Value) []byte {
	switch v.Kind {
	case Null:
		return append(dst, "null"...)
	case Bool:
		if v.Num != 0 {
			return append(dst, "true"...)
		}
		return append(dst, "false"...)
	case Int:
		return strconv.AppendInt(dst, int64(v.Num), 10)
	case Float:
		return jsonstr.AppendTypedFloat(dst, v.Float())
	case String:
		return jsonstr.Append(dst, v.Str)
	case Array:
		dst = append(dst, '[')
		for i := range v.Kids {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = AppendJSON(dst, v.Kids[i])
		}
		return append(dst, ']')
	case Object:
		dst = append(dst, '{')
		for i := range v.Kids {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = jsonstr.Append(dst, v.Kids[i].Key)
			dst = append(dst, ':')
			dst = AppendJSON(dst, v.Kids[i])
		}
		return append(dst, '}')
	}
	return append(dst, "null"...)
}

// AppendEventJSON appends e as one JSON object: "event_message" (only when
// HasMessage), "id", the members of e.Fields in order, then "timestamp" as
// integer unix microseconds. Members of Fields named id, timestamp or
// event_message are skipped so the object never has duplicate keys (Normalize
// never leaves such members).
func AppendEventJSON(dst []byte, e Event) []byte {
	dst = append(dst, '{')
	if e.HasMessage {
		dst = append(dst, `"event_message":`...)
		dst = jsonstr.Append(dst, e.Message)
		dst = append(dst, ',')
	}
	dst = append(dst, `"id":`...)
	dst = jsonstr.Append(dst, e.ID)
	if e.Fields.Kind == Object {
		for i := range e.Fields.Kids {
			m := &e.Fields.Kids[i]
			switch m.Key {
			case "id", "timestamp", "event_message":
				continue
			}
			dst = append(dst, ',')
			dst = jsonstr.Append(dst, m.Key)
			dst = append(dst, ':')
			dst = AppendJSON(dst, *m)
		}
	}
	dst = append(dst, `,"timestamp":`...)
	dst = strconv.AppendInt(dst, e.Timestamp, 10)
	return append(dst, '}')
}
