package jsonstr

import (
	"math"
	"strconv"
)

// The two ways Sediment writes a FLOAT64 as JSON. Query results (the SQL
// executor's rows, records materialised from storage) write what BigQuery's
// API carries; event JSON (what ingest stored, written back) writes what
// reads back as the same event, float kind included.

// AppendFloat appends f as query results carry a FLOAT64: the shortest
// decimal that reads back as f (1 → 1, 1e21 → 1e+21); NaN and the
// infinities, which JSON numbers cannot hold, as the strings "NaN",
// "Infinity" and "-Infinity".
func AppendFloat(dst []byte, f float64) []byte {
	if out, ok := AppendNonFinite(dst, f); ok {
		return out
	}
	return strconv.AppendFloat(dst, f, 'g', -1, 64)
}

// AppendNonFinite appends NaN or an infinity as AppendFloat writes it and
// reports true; for a finite f it appends nothing and reports false.
func AppendNonFinite(dst []byte, f float64) ([]byte, bool) {
	switch {
	case math.IsNaN(f):
		return append(dst, `"NaN"`...), true
	case math.IsInf(f, 1):
		return append(dst, `"Infinity"`...), true
	case math.IsInf(f, -1):
		return append(dst, `"-Infinity"`...), true
	}
	return dst, false
}

// AppendTypedFloat appends f so that a reader telling integers from floats
// reads a float back: the shortest form that round-trips, with ".0" on an
// integral value (1 → 1.0) and an exponent below 1e-6 and from 1e21 (as
// JavaScript writes numbers: 1e-7, 1e+21). NaN and the infinities have no
// JSON form and are written as null.
func AppendTypedFloat(dst []byte, f float64) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return append(dst, "null"...)
	}
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	start := len(dst)
	dst = strconv.AppendFloat(dst, f, format, -1, 64)
	if format == 'e' {
		// Shorten a two-digit negative exponent: 1e-07 → 1e-7.
		if n := len(dst); n-start >= 4 && dst[n-4] == 'e' && dst[n-3] == '-' && dst[n-2] == '0' {
			dst[n-2] = dst[n-1]
			dst = dst[:n-1]
		}
		return dst
	}
	for _, c := range dst[start:] {
		if c == '.' {
			return dst
		}
	}
	return append(dst, ".0"...)
}
