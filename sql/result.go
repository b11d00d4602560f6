package sql

import (
	"github.com/sediment/sediment/internal/jsonstr"
	"strconv"
	"time"

	"github.com/sediment/sediment/internal/vec"
)

// AppendJSON writes the result as Logflare returns it: an array of row
// objects keyed by column name. TIMESTAMP values are integer microseconds,
// DATETIME and DATE strings without zone, records (already JSON) in
// BigQuery's shape, arrays as arrays, NULL as null.
func (r *Result) AppendJSON(dst []byte) []byte {
	dst = append(dst, '[')
	keys := make([][]byte, len(r.Names))
	for i, n := range r.Names {
		keys[i] = jsonstr.Append(nil, n)
	}
	for row := 0; row < r.Len; row++ {
		if row > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, '{')
		for c, v := range r.Cols {
			if c > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, keys[c]...)
			dst = append(dst, ':')
			dst = appendValue(dst, v, row)
		}
		dst = append(dst, '}')
	}
	return append(dst, ']')
}

// appendValue writes row i of v as JSON.
func appendValue(dst []byte, v *vec.Vector, i int) []byte {
	if v.IsNull(i) {
		return append(dst, "null"...)
	}
	switch v.Type {
	case vec.Bool:
		return strconv.AppendBool(dst, v.BoolAt(i))
	case vec.Int64, vec.Timestamp:
		return strconv.AppendInt(dst, v.IntAt(i), 10)
	case vec.Float64:
		return jsonstr.AppendFloat(dst, v.FloatAt(i))
	case vec.String:
		return jsonstr.Append(dst, v.StringAt(i))
	case vec.JSON:
		s := v.StringAt(i)
		if s == "" {
			return append(dst, "null"...)
		}
		return append(dst, s...)
	case vec.Datetime:
		return jsonstr.Append(dst, FormatDatetime(v.IntAt(i)))
	case vec.Date:
		return jsonstr.Append(dst, time.Unix(v.IntAt(i)*86400, 0).UTC().Format("2006-01-02"))
	case vec.List:
		ii := i
		if v.Const {
			ii = 0
		}
		dst = append(dst, '[')
		for k := v.Offsets[ii]; k < v.Offsets[ii+1]; k++ {
			if k > v.Offsets[ii] {
				dst = append(dst, ',')
			}
			dst = appendValue(dst, v.Elem, int(k))
		}
		return append(dst, ']')
	case vec.Struct:
		dst = append(dst, '{')
		for c, ch := range v.Children {
			if c > 0 {
				dst = append(dst, ',')
			}
			dst = jsonstr.Append(dst, v.Names[c])
			dst = append(dst, ':')
			dst = appendValue(dst, ch, i)
		}
		return append(dst, '}')
	case vec.Interval:
		return jsonstr.Append(dst, strconv.FormatInt(v.IntAt(i), 10))
	}
	return append(dst, "null"...)
}

// FormatDatetime renders a DATETIME (µs, civil) as BigQuery does in JSON
// results: 2025-07-10T12:00:05, with .ffffff when there is a fraction.
func FormatDatetime(us int64) string {
	t := time.UnixMicro(us).UTC()
	if us%1_000_000 == 0 {
		return t.Format("2006-01-02T15:04:05")
	}
	return t.Format("2006-01-02T15:04:05.000000")
}

// CellJSON returns one cell of a result as text for tabular output: strings,
// dates and datetimes bare, everything else as its JSON.
func CellJSON(r *Result, col, row int) string {
	v := r.Cols[col]
	if v.Type == vec.String && !v.IsNull(row) {
		return v.StringAt(row)
	}
	s := string(appendValue(nil, v, row))
	// DATE and DATETIME values are JSON strings: show them bare.
	if len(s) >= 2 && s[0] == '"' && (v.Type == vec.Date || v.Type == vec.Datetime) {
		return s[1 : len(s)-1]
	}
	return s
}
