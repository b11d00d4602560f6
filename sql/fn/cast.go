package fn

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/sediment/sediment/internal/vec"
)

// CAST, SAFE_CAST and the text forms of date/time values.
//
// Conversion rules follow BigQuery:
//   - FLOAT64 -> INT64 rounds half away from zero; NaN, ±inf and values out
//     of range are errors.
//   - STRING -> INT64 accepts surrounding spaces, a sign and hex ("0x1F");
//     STRING -> BOOL accepts "true"/"false" in any case.
//   - TIMESTAMP -> STRING is "2024-01-01 12:00:00+00" in UTC, with 0, 3 or 6
//     fractional digits (whichever keeps every non-zero digit).
//   - STRING -> TIMESTAMP accepts the canonical literal forms (see
//     ParseTimestamp).
//   - Records (RowRef), arrays and JSON cast to STRING as JSON text.
//
// Errors are returned in non-safe mode; SAFE_CAST yields NULL instead.

// BindCast binds CAST(from AS to) (safe: SAFE_CAST). Casting a value to its
// own type returns it unchanged; an untyped NULL casts to any type as NULL.
func BindCast(from Arg, to vec.Type, safe bool, info BindInfo) (*Bound, error) {
	safe = safe || info.Safe
	if from.Type == to && to != vec.List {
		return &Bound{Type: to, Elem: from.Elem, Eval: identityEval}, nil
	}
	if from.Type == vec.Unknown {
		return nullBound(to), nil
	}
	if !castable(from.Type, to) {
		return nil, fmt.Errorf("Invalid cast from %s to %s", typeName(from), to)
	}
	k := castKernel(from.Type, to, safe)
	// A constant is converted once at bind time, so that a bad literal is
	// reported before the query runs (SAFE_CAST: NULL).
	if from.Const != nil && from.Type != vec.RowRef && from.Type != vec.List {
		r, err := k.run(&EvalCtx{}, []*vec.Vector{datumVector(*from.Const, 1)}, nil, 1)
		if err != nil {
			return nil, err
		}
		return &Bound{Type: to, Eval: func(_ *EvalCtx, _ []*vec.Vector, _ []int32, n int) (*vec.Vector, error) {
			return asConst(r, n), nil
		}}, nil
	}
	return k.bound(), nil
}

// datumVector returns a constant vector of n rows holding d.
func datumVector(d Datum, n int) *vec.Vector {
	if d.Null || d.Type == vec.Unknown {
		return constNull(d.Type, vec.Unknown, n)
	}
	switch {
	case d.Type == vec.Bool:
		return vec.ConstBool(d.Bool, n)
	case d.Type == vec.Float64:
		return vec.ConstFloat(d.Flt, n)
	case d.Type == vec.String || d.Type == vec.JSON:
		v := vec.ConstString(d.Str, n)
		v.Type = d.Type
		return v
	case d.Type.UsesInts():
		return vec.ConstInt(d.Type, d.Int, n)
	}
	return constNull(d.Type, vec.Unknown, n)
}

func identityEval(_ *EvalCtx, args []*vec.Vector, _ []int32, _ int) (*vec.Vector, error) {
	return args[0], nil
}

// castable reports whether CAST(from AS to) exists.
func castable(from, to vec.Type) bool {
	switch to {
	case vec.String:
		switch from {
		case vec.Bool, vec.Int64, vec.Float64, vec.Timestamp, vec.Datetime, vec.Date,
			vec.JSON, vec.RowRef, vec.List, vec.Struct:
			return true
		}
	case vec.JSON:
		switch from {
		case vec.String, vec.RowRef, vec.List, vec.Struct:
			return true
		}
	case vec.Int64:
		switch from {
		case vec.Bool, vec.Float64, vec.String, vec.JSON:
			return true
		}
	case vec.Float64:
		switch from {
		case vec.Int64, vec.String, vec.JSON:
			return true
		}
	case vec.Bool:
		switch from {
		case vec.Int64, vec.String, vec.JSON:
			return true
		}
	case vec.Timestamp:
		switch from {
		case vec.String, vec.Datetime, vec.Date:
			return true
		}
	case vec.Datetime:
		switch from {
		case vec.String, vec.Timestamp, vec.Date:
			return true
		}
	case vec.Date:
		switch from {
		case vec.String, vec.Timestamp, vec.Datetime:
			return true
		}
	}
	return false
}

// castKernel returns the kernel converting from -> to (castable(from, to)).
func castKernel(from, to vec.Type, safe bool) *kernel {
	switch {
	case from == vec.String && to == vec.Int64:
		return newKernel(to, castStringToInt(safe))
	case to == vec.String || to == vec.JSON:
		switch from {
		case vec.RowRef, vec.List, vec.Struct:
			k := newKernel(to, func(ec *EvalCtx, args []*vec.Vector, sel []int32, n int) (*vec.Vector, error) {
				out, err := jsonTextVector(ec, args[0], sel, n, false, false)
				if err == nil {
					out.Type = to
				}
				return out, err
			})
			k.dictArg = -1
			return k
		case vec.String: // STRING -> JSON: must be valid JSON text
			return newKernel(to, rowCast(to, safe, func(v *vec.Vector, i int, out *vec.Vector) error {
				s := v.StringAt(i)
				if err := validateJSON(s); err != nil {
					return fmt.Errorf("Invalid JSON text: %s", err)
				}
				out.Strs[i] = compactJSON(s)
				return nil
			}))
		}
	}
	return newKernel(to, rowCast(to, safe, scalarCaster(from, to)))
}

// rowCast builds an eval that converts row by row with f.
func rowCast(to vec.Type, safe bool, f func(v *vec.Vector, i int, out *vec.Vector) error) EvalFunc {
	return func(_ *EvalCtx, args []*vec.Vector, sel []int32, n int) (*vec.Vector, error) {
		v := args[0]
		out := newVec(to, n)
		err := rowLoop(out, args, sel, n, safe, func(i int) error { return f(v, i, out) })
		return out, err
	}
}

// castStringToInt is CAST(STRING AS INT64), specialised for speed: the
// common case (plain decimal) is one strconv call per row.
func castStringToInt(safe bool) EvalFunc {
	return func(_ *EvalCtx, args []*vec.Vector, sel []int32, n int) (*vec.Vector, error) {
		v := args[0]
		out := &vec.Vector{Type: vec.Int64, Len: n, Ints: make([]int64, n)}
		if !v.HasNulls() && v.Dict == nil && !v.Const {
			out.Nulls = nil
			body := func(i int) error {
				x, err := parseInt64(v.StringAt(i))
				if err != nil {
					if safe {
						setNull(out, i)
						return nil
					}
					return err
				}
				out.Ints[i] = x
				return nil
			}
			if sel != nil {
				for _, i := range sel {
					if err := body(int(i)); err != nil {
						return nil, err
					}
				}
			} else {
				for i := 0; i < n; i++ {
					if err := body(i); err != nil {
						return nil, err
					}
				}
			}
			return out, nil
		}
		err := rowLoop(out, args, sel, n, safe, func(i int) error {
			x, err := parseInt64(v.StringAt(i))
			out.Ints[i] = x
			return err
		})
		return out, err
	}
}

// parseInt64 converts a string to INT64 the way BigQuery's CAST does.
func parseInt64(s string) (int64, error) {
	if x, ok := atoiFast(s); ok {
		return x, nil
	}
	if x, err := strconv.ParseInt(s, 10, 64); err == nil {
		return x, nil
	}
	t := strings.TrimSpace(s)
	neg := false
	body := t
	if body != "" && (body[0] == '+' || body[0] == '-') {
		neg = body[0] == '-'
		body = body[1:]
	}
	if len(body) > 2 && body[0] == '0' && (body[1] == 'x' || body[1] == 'X') {
		u, err := strconv.ParseUint(body[2:], 16, 64)
		if err == nil {
			if !neg && u <= maxInt64 {
				return int64(u), nil
			}
			if neg && u <= 1<<63 {
				return -int64(u), nil
			}
		}
	} else if t != s || (t != "" && t[0] == '+') {
		if x, err := strconv.ParseInt(t, 10, 64); err == nil {
			return x, nil
		}
	}
	return 0, fmt.Errorf("Bad int64 value: %s", clipValue(s))
}

// atoiFast parses a plain decimal of at most 18 digits (which cannot
// overflow) with an optional sign; other forms go the slow way.
func atoiFast(s string) (int64, bool) {
	neg := false
	if len(s) > 0 && (s[0] == '-' || s[0] == '+') {
		neg = s[0] == '-'
		s = s[1:]
	}
	if len(s) == 0 || len(s) > 18 {
		return 0, false
	}
	var x int64
	for i := 0; i < len(s); i++ {
		c := s[i] - '0'
		if c > 9 {
			return 0, false
		}
		x = x*10 + int64(c)
	}
	if neg {
		x = -x
	}
	return x, true
}

// parseFloat64 converts a string to FLOAT64 the way BigQuery's CAST does.
func parseFloat64(s string) (float64, error) {
	t := strings.TrimSpace(s)
	if f, err := strconv.ParseFloat(t, 64); err == nil {
		return f, nil
	} else if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
		return f, nil // ±inf or 0 for out-of-range magnitudes
	}
	return 0, fmt.Errorf("Bad double value: %s", clipValue(s))
}

// clipValue shortens a value quoted in an error message.
func clipValue(s string) string {
	const maxLen = 32
	if len(s) > maxLen {
		return strconv.Quote(s[:maxLen])[1:maxLen+1] + "..."
	}
	q := strconv.Quote(s)
	return q[1 : len(q)-1]
}

// floatToInt64 converts with BigQuery's rounding (half away from zero).
func floatToInt64(f float64) (int64, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, fmt.Errorf("Illegal conversion of non-finite floating point number to an integer: %s", formatFloat(f))
	}
	r := math.Round(f)
	if r < -9.223372036854775808e18 || r >= 9.223372036854775808e18 {
		return 0, fmt.Errorf("int64 out of range: %s", formatFloat(f))
	}
	return int64(r), nil
}

// scalarCaster returns the row conversion between scalar types.
func scalarCaster(from, to vec.Type) func(v *vec.Vector, i int, out *vec.Vector) error {
	switch to {
	case vec.String:
		return func(v *vec.Vector, i int, out *vec.Vector) error {
			out.Strs[i] = scalarString(v, i)
			return nil
		}
	case vec.Int64:
		switch from {
		case vec.Bool:
			return func(v *vec.Vector, i int, out *vec.Vector) error {
				if v.BoolAt(i) {
					out.Ints[i] = 1
				}
				return nil
			}
		case vec.Float64:
			return func(v *vec.Vector, i int, out *vec.Vector) error {
				x, err := floatToInt64(v.FloatAt(i))
				out.Ints[i] = x
				return err
			}
		case vec.String, vec.JSON:
			return func(v *vec.Vector, i int, out *vec.Vector) error {
				x, err := parseInt64(jsonScalarText(v, i))
				out.Ints[i] = x
				return err
			}
		}
	case vec.Float64:
		switch from {
		case vec.Int64:
			return func(v *vec.Vector, i int, out *vec.Vector) error {
				out.Floats[i] = float64(v.IntAt(i))
				return nil
			}
		case vec.String, vec.JSON:
			return func(v *vec.Vector, i int, out *vec.Vector) error {
				x, err := parseFloat64(jsonScalarText(v, i))
				out.Floats[i] = x
				return err
			}
		}
	case vec.Bool:
		switch from {
		case vec.Int64:
			return func(v *vec.Vector, i int, out *vec.Vector) error {
				out.Bools[i] = v.IntAt(i) != 0
				return nil
			}
		case vec.String, vec.JSON:
			return func(v *vec.Vector, i int, out *vec.Vector) error {
				s := jsonScalarText(v, i)
				switch {
				case strings.EqualFold(s, "true"):
					out.Bools[i] = true
				case strings.EqualFold(s, "false"):
				default:
					return fmt.Errorf("Bad bool value: %s", clipValue(s))
				}
				return nil
			}
		}
	case vec.Timestamp:
		switch from {
		case vec.String:
			return func(v *vec.Vector, i int, out *vec.Vector) error {
				x, err := ParseTimestamp(v.StringAt(i))
				out.Ints[i] = x
				return err
			}
		case vec.Datetime:
			return func(v *vec.Vector, i int, out *vec.Vector) error {
				out.Ints[i] = v.IntAt(i)
				return nil
			}
		case vec.Date:
			return func(v *vec.Vector, i int, out *vec.Vector) error {
				out.Ints[i] = v.IntAt(i) * microsPerDay
				return nil
			}
		}
	case vec.Datetime:
		switch from {
		case vec.String:
			return func(v *vec.Vector, i int, out *vec.Vector) error {
				x, err := ParseDatetime(v.StringAt(i))
				out.Ints[i] = x
				return err
			}
		case vec.Timestamp:
			return func(v *vec.Vector, i int, out *vec.Vector) error {
				out.Ints[i] = v.IntAt(i)
				return nil
			}
		case vec.Date:
			return func(v *vec.Vector, i int, out *vec.Vector) error {
				out.Ints[i] = v.IntAt(i) * microsPerDay
				return nil
			}
		}
	case vec.Date:
		switch from {
		case vec.String:
			return func(v *vec.Vector, i int, out *vec.Vector) error {
				x, err := ParseDate(v.StringAt(i))
				out.Ints[i] = x
				return err
			}
		case vec.Timestamp, vec.Datetime:
			return func(v *vec.Vector, i int, out *vec.Vector) error {
				out.Ints[i] = floorDiv(v.IntAt(i), microsPerDay)
				return nil
			}
		}
	}
	return func(*vec.Vector, int, *vec.Vector) error {
		return fmt.Errorf("Invalid cast from %s to %s", from, to)
	}
}

// jsonScalarText returns the text of row i of a STRING vector, or of a JSON
// scalar (a JSON string is unquoted) for JSON vectors.
func jsonScalarText(v *vec.Vector, i int) string {
	s := v.StringAt(i)
	if v.Type != vec.JSON {
		return s
	}
	s = strings.TrimSpace(s)
	if len(s) >= 2 && s[0] == '"' {
		if u, ok := unquoteJSON(s); ok {
			return u
		}
	}
	return s
}

// scalarString renders row i of a scalar vector as CAST(... AS STRING).
func scalarString(v *vec.Vector, i int) string {
	switch v.Type {
	case vec.Bool:
		if v.BoolAt(i) {
			return "true"
		}
		return "false"
	case vec.Int64:
		return strconv.FormatInt(v.IntAt(i), 10)
	case vec.Float64:
		return formatFloat(v.FloatAt(i))
	case vec.String, vec.JSON:
		return v.StringAt(i)
	case vec.Timestamp:
		return FormatTimestamp(v.IntAt(i))
	case vec.Datetime:
		return FormatDatetime(v.IntAt(i))
	case vec.Date:
		return FormatDate(v.IntAt(i))
	}
	return ""
}

// formatFloat renders a FLOAT64 as BigQuery's CAST does: the shortest of
// 15 or 17 significant digits that round-trips, "inf", "-inf", "nan".
func formatFloat(f float64) string {
	switch {
	case math.IsNaN(f):
		return "nan"
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	}
	s := strconv.FormatFloat(f, 'g', 15, 64)
	if back, err := strconv.ParseFloat(s, 64); err != nil || back != f {
		s = strconv.FormatFloat(f, 'g', 17, 64)
	}
	return s
}

// ---- date/time text ----

// FormatTimestamp renders a TIMESTAMP as CAST(ts AS STRING) does in UTC:
// "2024-01-01 12:00:00+00", "2024-01-01 12:00:00.123+00",
// "2024-01-01 12:00:00.123456+00".
func FormatTimestamp(us int64) string {
	b := make([]byte, 0, 32)
	b = appendDatetime(b, us, ' ')
	return string(append(b, "+00"...))
}

// FormatDatetime renders a DATETIME as CAST(dt AS STRING) does:
// "2024-01-01 12:00:00[.fff[fff]]".
func FormatDatetime(us int64) string {
	return string(appendDatetime(make([]byte, 0, 26), us, ' '))
}

// FormatDate renders a DATE as "2024-01-01".
func FormatDate(days int64) string {
	return string(appendDate(make([]byte, 0, 10), days))
}

func appendDate(b []byte, days int64) []byte {
	y, m, d := civilFromDays(days)
	b = appendPadded(b, y, 4)
	b = append(b, '-')
	b = appendPadded(b, m, 2)
	b = append(b, '-')
	return appendPadded(b, d, 2)
}

// appendDatetime appends civil microseconds as date, sep, time and the
// fraction trimmed to 0, 3 or 6 digits.
func appendDatetime(b []byte, us int64, sep byte) []byte {
	days := floorDiv(us, microsPerDay)
	tod := us - days*microsPerDay
	b = appendDate(b, days)
	b = append(b, sep)
	b = appendPadded(b, tod/microsPerHour, 2)
	b = append(b, ':')
	b = appendPadded(b, tod%microsPerHour/microsPerMinute, 2)
	b = append(b, ':')
	b = appendPadded(b, tod%microsPerMinute/microsPerSecond, 2)
	return appendFraction(b, tod%microsPerSecond)
}

// appendFraction appends ".fff" or ".ffffff" (or nothing for zero).
func appendFraction(b []byte, frac int64) []byte {
	switch {
	case frac == 0:
		return b
	case frac%1000 == 0:
		b = append(b, '.')
		return appendPadded(b, frac/1000, 3)
	}
	b = append(b, '.')
	return appendPadded(b, frac, 6)
}

// appendPadded appends x in decimal, zero padded to width digits.
func appendPadded(b []byte, x int64, width int) []byte {
	if x < 0 {
		b = append(b, '-')
		x = -x
	}
	var tmp [20]byte
	i := len(tmp)
	for x > 0 || i == len(tmp) {
		i--
		tmp[i] = byte('0' + x%10)
		x /= 10
	}
	for pad := width - (len(tmp) - i); pad > 0; pad-- {
		b = append(b, '0')
	}
	return append(b, tmp[i:]...)
}

// ParseTimestamp parses a timestamp in BigQuery's canonical literal forms
// and returns microseconds since the epoch:
//
//	2024-01-01                           midnight UTC
//	2024-01-01 12:00:00                  UTC
//	2024-01-01T12:00:00Z
//	2024-01-01 12:00:00.123456+02:00     also +02, +0200
//	2024-01-01 12:00:00 America/Los_Angeles
//	2024-01-01 12:00:00 UTC
//
// Month, day, hour, minute and second may have one or two digits; seconds
// are optional. Fractions longer than six digits are truncated to
// microseconds (BigQuery rejects them; truncating accepts the nanosecond
// timestamps many log sources write).
func ParseTimestamp(s string) (int64, error) {
	return parseTimestampIn(s, utcZone)
}

// parseTimestampIn parses a timestamp; def is the zone used when the text
// has none.
func parseTimestampIn(s string, def *zone) (int64, error) {
	p, ok := parseDateTimeText(s)
	if !ok {
		return 0, fmt.Errorf("Invalid timestamp: '%s'", clipValue(s))
	}
	z := def
	if p.zoneText != "" {
		var err error
		if z, err = loadZone(p.zoneText); err != nil {
			return 0, fmt.Errorf("Invalid timestamp: '%s'", clipValue(s))
		}
	}
	ts := z.fromCivil(p.civil)
	if !validTimestamp(ts) {
		return 0, fmt.Errorf("Timestamp is out of range: '%s'", clipValue(s))
	}
	return ts, nil
}

// ParseDatetime parses "2024-01-01 12:00:00[.ffffff]" (or 'T' for the space,
// or a date alone for midnight) into civil microseconds.
func ParseDatetime(s string) (int64, error) {
	p, ok := parseDateTimeText(s)
	if !ok || p.zoneText != "" {
		return 0, fmt.Errorf("Invalid datetime string \"%s\"", clipValue(s))
	}
	return p.civil, nil
}

// ParseDate parses "2024-01-01" (one- or two-digit month and day) into days
// since 1970-01-01.
func ParseDate(s string) (int64, error) {
	p, ok := parseDateTimeText(s)
	if !ok || p.hasTime || p.zoneText != "" {
		return 0, fmt.Errorf("Invalid date: '%s'", clipValue(s))
	}
	return p.civil / microsPerDay, nil
}

// dateTimeText is a parsed literal: civil time and the zone text, if any.
type dateTimeText struct {
	civil    int64
	hasTime  bool
	zoneText string
}

// parseDateTimeText parses date[(T| )time][zone].
func parseDateTimeText(s string) (dateTimeText, bool) {
	var p dateTimeText
	s = strings.TrimSpace(s)
	i := 0
	num := func(minD, maxD int) (int64, bool) {
		start := i
		var x int64
		for i < len(s) && i-start < maxD && s[i] >= '0' && s[i] <= '9' {
			x = x*10 + int64(s[i]-'0')
			i++
		}
		return x, i-start >= minD
	}
	lit := func(c byte) bool {
		if i < len(s) && s[i] == c {
			i++
			return true
		}
		return false
	}
	y, ok := num(4, 4)
	if !ok || !lit('-') {
		return p, false
	}
	m, ok := num(1, 2)
	if !ok || !lit('-') {
		return p, false
	}
	d, ok := num(1, 2)
	if !ok || y < 1 || m < 1 || m > 12 || d < 1 || d > daysInMonth(y, m) {
		return p, false
	}
	p.civil = daysFromCivil(y, m, d) * microsPerDay
	if i < len(s) && (s[i] == 'T' || s[i] == 't' || s[i] == ' ') && i+1 < len(s) && s[i+1] >= '0' && s[i+1] <= '9' {
		i++
		h, ok := num(1, 2)
		if !ok || !lit(':') {
			return p, false
		}
		mi, ok := num(1, 2)
		if !ok {
			return p, false
		}
		var sec, frac int64
		if lit(':') {
			if sec, ok = num(1, 2); !ok {
				return p, false
			}
			if lit('.') {
				start := i
				for i < len(s) && s[i] >= '0' && s[i] <= '9' {
					if i-start < 6 {
						frac = frac*10 + int64(s[i]-'0')
					}
					i++
				}
				if i == start {
					return p, false
				}
				for k := i - start; k < 6; k++ {
					frac *= 10
				}
			}
		}
		if h > 23 || mi > 59 || sec > 59 {
			return p, false
		}
		p.hasTime = true
		p.civil += h*microsPerHour + mi*microsPerMinute + sec*microsPerSecond + frac
	}
	rest := s[i:]
	switch {
	case rest == "":
	case rest == "Z" || rest == "z":
		p.zoneText = "UTC"
	case rest[0] == '+' || rest[0] == '-':
		p.zoneText = rest
	case rest[0] == ' ':
		p.zoneText = strings.TrimSpace(rest)
	default:
		return p, false
	}
	if strings.ContainsAny(p.zoneText, " \t") {
		return p, false
	}
	return p, true
}
