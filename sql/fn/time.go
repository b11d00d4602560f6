package fn

import (
	"fmt"
	"time"

	"github.com/sediment/sediment/internal/vec"
)

// Date and time functions over TIMESTAMP (µs since the epoch, UTC),
// DATETIME (civil µs) and DATE (days). Time zones are IANA names or fixed
// offsets; the default is UTC. Date parts arrive as Arg.Part with a nil
// vector; INTERVAL arguments as constant Args of type vec.Interval (count in
// Const.Int, unit in Const.Str).

func init() {
	register("current_timestamp", bindCurrent(vec.Timestamp))
	register("current_datetime", bindCurrent(vec.Datetime))
	register("current_date", bindCurrent(vec.Date))
	register("timestamp_add", bindAddSub(vec.Timestamp, 1))
	register("timestamp_sub", bindAddSub(vec.Timestamp, -1))
	register("datetime_add", bindAddSub(vec.Datetime, 1))
	register("datetime_sub", bindAddSub(vec.Datetime, -1))
	register("date_add", bindAddSub(vec.Date, 1))
	register("date_sub", bindAddSub(vec.Date, -1))
	register("timestamp_diff", bindDiff(vec.Timestamp))
	register("datetime_diff", bindDiff(vec.Datetime))
	register("date_diff", bindDiff(vec.Date))
	register("timestamp_trunc", bindTrunc(vec.Timestamp))
	register("datetime_trunc", bindTrunc(vec.Datetime))
	register("date_trunc", bindTrunc(vec.Date))
	register("timestamp_micros", bindFromUnit(1))
	register("timestamp_millis", bindFromUnit(microsPerMilli))
	register("timestamp_seconds", bindFromUnit(microsPerSecond))
	register("unix_micros", bindToUnit(1))
	register("unix_millis", bindToUnit(microsPerMilli))
	register("unix_seconds", bindToUnit(microsPerSecond))
	register("unix_date", bindUnixDate)
	register("date_from_unix_date", bindDateFromUnixDate)
	register("timestamp", bindTimestampCtor)
	register("datetime", bindDatetimeCtor)
	register("date", bindDateCtor)
	register("extract", bindExtract)
	register("last_day", bindLastDay)
}

// timeKernel is a strict row kernel that is never evaluated per dictionary
// entry (its inputs are not strings, or not only strings).
func timeKernel(typ vec.Type, safe bool, convs []conv, f func(vs []*vec.Vector, i int, out *vec.Vector) error) *Bound {
	k := newKernel(typ, rowEval(typ, safe, f))
	k.convs, k.dictArg = convs, -1
	return k.bound()
}

// nullBound returns NULL of type t for every row (an untyped NULL
// argument).
func nullBound(t vec.Type) *Bound {
	return &Bound{Type: t, Eval: func(_ *EvalCtx, _ []*vec.Vector, _ []int32, n int) (*vec.Vector, error) {
		return constNull(t, vec.Unknown, n), nil
	}}
}

// ---- CURRENT_* ----

func bindCurrent(t vec.Type) func(string, []Arg, BindInfo) (*Bound, error) {
	return func(name string, args []Arg, info BindInfo) (*Bound, error) {
		maxArgs := 1
		if t == vec.Timestamp {
			maxArgs = 0
		}
		if err := checkArity(name, args, 0, maxArgs); err != nil {
			return nil, err
		}
		now := info.Now
		if now.IsZero() {
			now = time.Now()
		}
		ts := now.UnixMicro()
		za, err := bindZone(name, args, 0)
		if err != nil {
			return nil, err
		}
		in := func(z *zone) int64 {
			switch t {
			case vec.Datetime:
				return z.toCivil(ts)
			case vec.Date:
				return floorDiv(z.toCivil(ts), microsPerDay)
			}
			return ts
		}
		if za.fixedZ != nil {
			x := in(za.fixedZ)
			k := &kernel{typ: t, strict: true, dictArg: -1, eval: func(_ *EvalCtx, _ []*vec.Vector, _ []int32, n int) (*vec.Vector, error) {
				return vec.ConstInt(t, x, n), nil
			}}
			return k.bound(), nil
		}
		return timeKernel(t, info.Safe, nil, func(vs []*vec.Vector, i int, out *vec.Vector) error {
			z, err := za.at(vs, i)
			if err != nil {
				return err
			}
			out.Ints[i] = in(z)
			return nil
		}), nil
	}
}

// ---- adding intervals ----

// unitMicros returns the length of a fixed-length unit (WEEK included).
func unitMicros(unit string) int64 {
	if u := subDayUnit(unit); u > 0 {
		return u
	}
	switch unit {
	case "DAY":
		return microsPerDay
	case "WEEK":
		return 7 * microsPerDay
	}
	return 0
}

// monthsOf returns the number of months of MONTH, QUARTER and YEAR units.
func monthsOf(unit string) int64 {
	switch unit {
	case "MONTH":
		return 1
	case "QUARTER":
		return 3
	case "YEAR":
		return 12
	}
	return 0
}

// timestampAddUnit adds n units (MICROSECOND .. WEEK) to a TIMESTAMP.
func timestampAddUnit(ts, n int64, unit string) (int64, error) {
	u := unitMicros(unit)
	if u == 0 {
		return 0, fmt.Errorf("TIMESTAMP arithmetic does not support the %s date part", unit)
	}
	if mulOverflows(n, u) || !validTimestamp(ts+n*u) {
		return 0, fmt.Errorf("timestamp overflow: %s + %d %s", FormatTimestamp(ts), n, unit)
	}
	return ts + n*u, nil
}

// datetimeAddUnit adds n units to a DATETIME; MONTH, QUARTER and YEAR clamp
// the day to the end of the resulting month.
func datetimeAddUnit(dt, n int64, unit string) (int64, error) {
	if u := unitMicros(unit); u > 0 {
		if mulOverflows(n, u) || !validDatetime(dt+n*u) {
			return 0, fmt.Errorf("datetime overflow: %s + %d %s", FormatDatetime(dt), n, unit)
		}
		return dt + n*u, nil
	}
	months := monthsOf(unit)
	if months == 0 {
		return 0, fmt.Errorf("DATETIME arithmetic does not support the %s date part", unit)
	}
	days := floorDiv(dt, microsPerDay)
	tod := dt - days*microsPerDay
	if mulOverflows(n, months) {
		return 0, fmt.Errorf("datetime overflow: %s + %d %s", FormatDatetime(dt), n, unit)
	}
	nd, ok := addMonths(days, n*months)
	if !ok {
		return 0, fmt.Errorf("datetime overflow: %s + %d %s", FormatDatetime(dt), n, unit)
	}
	return nd*microsPerDay + tod, nil
}

// dateAddUnit adds n DAY, WEEK, MONTH, QUARTER or YEAR units to a DATE.
func dateAddUnit(d, n int64, unit string) (int64, error) {
	var r int64
	switch unit {
	case "DAY", "WEEK":
		step := int64(1)
		if unit == "WEEK" {
			step = 7
		}
		if mulOverflows(n, step) {
			return 0, fmt.Errorf("date overflow: %s + %d %s", FormatDate(d), n, unit)
		}
		r = d + n*step
	default:
		months := monthsOf(unit)
		if months == 0 {
			return 0, fmt.Errorf("DATE arithmetic does not support the %s date part", unit)
		}
		var ok bool
		if mulOverflows(n, months) {
			return 0, fmt.Errorf("date overflow: %s + %d %s", FormatDate(d), n, unit)
		}
		if r, ok = addMonths(d, n*months); !ok {
			return 0, fmt.Errorf("date overflow: %s + %d %s", FormatDate(d), n, unit)
		}
	}
	if !validDate(r) {
		return 0, fmt.Errorf("date overflow: %s + %d %s", FormatDate(d), n, unit)
	}
	return r, nil
}

var (
	timestampUnits = []string{"MICROSECOND", "MILLISECOND", "SECOND", "MINUTE", "HOUR", "DAY"}
	datetimeUnits  = []string{"MICROSECOND", "MILLISECOND", "SECOND", "MINUTE", "HOUR", "DAY", "WEEK", "MONTH", "QUARTER", "YEAR"}
	dateUnits      = []string{"DAY", "WEEK", "MONTH", "QUARTER", "YEAR"}
)

// bindAddSub binds TIMESTAMP_ADD/SUB, DATETIME_ADD/SUB and DATE_ADD/SUB.
// DATE_ADD also accepts a TIMESTAMP or DATETIME first argument.
func bindAddSub(t vec.Type, sign int64) func(string, []Arg, BindInfo) (*Bound, error) {
	return func(name string, args []Arg, info BindInfo) (*Bound, error) {
		if err := checkArity(name, args, 2, 2); err != nil {
			return nil, err
		}
		target := t
		if t == vec.Date && (args[0].Type == vec.Timestamp || args[0].Type == vec.Datetime) {
			target = args[0].Type
		}
		c, err := coerceArg(name, args, args[0], target)
		if err != nil {
			return nil, err
		}
		count, unit, err := intervalArg(name, args, 1)
		if err != nil {
			return nil, err
		}
		if mulOverflows(count, sign) {
			return nil, fmt.Errorf("%s: the interval is out of range", name)
		}
		count *= sign
		var f func(int64) (int64, error)
		switch target {
		case vec.Timestamp:
			if err := checkUnit(name, unit, timestampUnits...); err != nil {
				return nil, err
			}
			f = func(x int64) (int64, error) { return timestampAddUnit(x, count, unit) }
		case vec.Datetime:
			if err := checkUnit(name, unit, datetimeUnits...); err != nil {
				return nil, err
			}
			f = func(x int64) (int64, error) { return datetimeAddUnit(x, count, unit) }
		default:
			if err := checkUnit(name, unit, dateUnits...); err != nil {
				return nil, err
			}
			f = func(x int64) (int64, error) { return dateAddUnit(x, count, unit) }
		}
		return timeKernel(target, info.Safe, []conv{c}, func(vs []*vec.Vector, i int, out *vec.Vector) error {
			r, err := f(vs[0].IntAt(i))
			out.Ints[i] = r
			return err
		}), nil
	}
}

// ---- differences ----

// bindDiff binds TIMESTAMP_DIFF (whole elapsed units), DATETIME_DIFF and
// DATE_DIFF (part boundaries crossed). DATE_DIFF also accepts TIMESTAMP or
// DATETIME arguments.
func bindDiff(t vec.Type) func(string, []Arg, BindInfo) (*Bound, error) {
	return func(name string, args []Arg, info BindInfo) (*Bound, error) {
		if err := checkArity(name, args, 3, 3); err != nil {
			return nil, err
		}
		target := t
		if t == vec.Date && (args[0].Type == vec.Timestamp || args[0].Type == vec.Datetime) {
			target = args[0].Type
		}
		convs, err := match(name, args, 3, target, target, tPart)
		if err != nil {
			return nil, err
		}
		var p datePart
		switch target {
		case vec.Timestamp:
			p, err = parsePart(name, args[2], timestampUnits...)
		case vec.Datetime:
			p, err = parsePart(name, args[2], "MICROSECOND", "MILLISECOND", "SECOND", "MINUTE", "HOUR",
				"DAY", "WEEK", "ISOWEEK", "MONTH", "QUARTER", "YEAR", "ISOYEAR")
		default:
			p, err = parsePart(name, args[2], "DAY", "WEEK", "ISOWEEK", "MONTH", "QUARTER", "YEAR", "ISOYEAR")
		}
		if err != nil {
			return nil, err
		}
		var f func(a, b int64) int64
		switch target {
		case vec.Timestamp:
			u := subDayUnit(p.name)
			if u == 0 {
				u = microsPerDay
			}
			f = func(a, b int64) int64 { return (a - b) / u }
		case vec.Datetime:
			if u := subDayUnit(p.name); u > 0 {
				f = func(a, b int64) int64 { return floorDiv(a, u) - floorDiv(b, u) }
			} else {
				f = func(a, b int64) int64 {
					return diffDays(floorDiv(a, microsPerDay), floorDiv(b, microsPerDay), p)
				}
			}
		default:
			f = func(a, b int64) int64 { return diffDays(a, b, p) }
		}
		return timeKernel(vec.Int64, info.Safe, convs, func(vs []*vec.Vector, i int, out *vec.Vector) error {
			out.Ints[i] = f(vs[0].IntAt(i), vs[1].IntAt(i))
			return nil
		}), nil
	}
}

// ---- truncation ----

var allParts = []string{"MICROSECOND", "MILLISECOND", "SECOND", "MINUTE", "HOUR", "DAY",
	"WEEK", "ISOWEEK", "MONTH", "QUARTER", "YEAR", "ISOYEAR"}

// bindTrunc binds TIMESTAMP_TRUNC(ts, part[, tz]), DATETIME_TRUNC(dt, part)
// and DATE_TRUNC(d, part); DATE_TRUNC also accepts TIMESTAMP (with a time
// zone) and DATETIME values.
func bindTrunc(t vec.Type) func(string, []Arg, BindInfo) (*Bound, error) {
	return func(name string, args []Arg, info BindInfo) (*Bound, error) {
		if err := checkArity(name, args, 2, 3); err != nil {
			return nil, err
		}
		target := t
		if t == vec.Date && (args[0].Type == vec.Timestamp || args[0].Type == vec.Datetime) {
			target = args[0].Type
		}
		maxArgs := 2
		if target == vec.Timestamp {
			maxArgs = 3
		}
		types := []vec.Type{target, tPart, vec.String}
		convs, err := match(name, args, 2, types[:maxArgs]...)
		if err != nil {
			return nil, err
		}
		allowed := allParts
		if target == vec.Date {
			allowed = allParts[5:]
		}
		p, err := parsePart(name, args[1], allowed...)
		if err != nil {
			return nil, err
		}
		switch target {
		case vec.Date:
			return timeKernel(vec.Date, false, convs, func(vs []*vec.Vector, i int, out *vec.Vector) error {
				out.Ints[i] = truncDays(vs[0].IntAt(i), p)
				return nil
			}), nil
		case vec.Datetime:
			return timeKernel(vec.Datetime, false, convs, func(vs []*vec.Vector, i int, out *vec.Vector) error {
				out.Ints[i] = truncCivil(vs[0].IntAt(i), p)
				return nil
			}), nil
		}
		za, err := bindZone(name, args, 2)
		if err != nil {
			return nil, err
		}
		if za.fixedZ == utcZone {
			if u := subDayUnit(p.name); u > 0 {
				return truncUTCKernel(u, convs), nil
			}
		}
		return timeKernel(vec.Timestamp, info.Safe, convs, func(vs []*vec.Vector, i int, out *vec.Vector) error {
			z, err := za.at(vs, i)
			if err != nil {
				return err
			}
			r := truncTimestamp(vs[0].IntAt(i), p, z)
			if !validTimestamp(r) {
				return fmt.Errorf("%s: the result is out of range", name)
			}
			out.Ints[i] = r
			return nil
		}), nil
	}
}

// truncUTCKernel truncates TIMESTAMPs to a fixed unit in UTC: the hot path
// of TIMESTAMP_TRUNC(ts, MINUTE/HOUR).
func truncUTCKernel(u int64, convs []conv) *Bound {
	k := newKernel(vec.Timestamp, func(_ *EvalCtx, vs []*vec.Vector, sel []int32, n int) (*vec.Vector, error) {
		x := vs[0]
		out := &vec.Vector{Type: vec.Timestamp, Len: n, Ints: make([]int64, n), Nulls: x.Nulls}
		if sel != nil && len(sel)*2 < n {
			for _, i := range sel {
				v := x.Ints[i]
				m := v % u
				if m < 0 {
					m += u
				}
				out.Ints[i] = v - m
			}
			return out, nil
		}
		src, dst := x.Ints[:n], out.Ints[:n]
		// Constant divisors let the compiler replace the division.
		switch u {
		case microsPerMilli:
			truncBy(dst, src, microsPerMilli)
		case microsPerSecond:
			truncBy(dst, src, microsPerSecond)
		case microsPerMinute:
			truncBy(dst, src, microsPerMinute)
		case microsPerHour:
			truncBy(dst, src, microsPerHour)
		default:
			truncBy(dst, src, u)
		}
		return out, nil
	})
	k.convs, k.dictArg = convs, -1
	return k.bound()
}

// truncBy truncates each value down to a multiple of u.
func truncBy(dst, src []int64, u int64) {
	for i, v := range src {
		m := v % u
		if m < 0 {
			m += u
		}
		dst[i] = v - m
	}
}

// truncTimestamp truncates a TIMESTAMP in zone z. Parts up to HOUR subtract
// the civil remainder from the instant (BigQuery's rule, which avoids
// re-mapping through DST gaps); coarser parts truncate the civil time and
// map it back.
func truncTimestamp(ts int64, p datePart, z *zone) int64 {
	civ := z.toCivil(ts)
	if u := subDayUnit(p.name); u > 0 {
		return ts - floorMod(civ, u)
	}
	return z.fromCivil(truncCivil(civ, p))
}

// ---- unix conversions ----

func bindFromUnit(unit int64) func(string, []Arg, BindInfo) (*Bound, error) {
	return func(name string, args []Arg, info BindInfo) (*Bound, error) {
		convs, err := match(name, args, 1, vec.Int64)
		if err != nil {
			return nil, err
		}
		return timeKernel(vec.Timestamp, info.Safe, convs, func(vs []*vec.Vector, i int, out *vec.Vector) error {
			x := vs[0].IntAt(i)
			if mulOverflows(x, unit) || !validTimestamp(x*unit) {
				return fmt.Errorf("%s: %d is out of the TIMESTAMP range", name, x)
			}
			out.Ints[i] = x * unit
			return nil
		}), nil
	}
}

func bindToUnit(unit int64) func(string, []Arg, BindInfo) (*Bound, error) {
	return func(name string, args []Arg, _ BindInfo) (*Bound, error) {
		convs, err := match(name, args, 1, vec.Timestamp)
		if err != nil {
			return nil, err
		}
		return timeKernel(vec.Int64, false, convs, func(vs []*vec.Vector, i int, out *vec.Vector) error {
			out.Ints[i] = floorDiv(vs[0].IntAt(i), unit)
			return nil
		}), nil
	}
}

func bindUnixDate(name string, args []Arg, _ BindInfo) (*Bound, error) {
	convs, err := match(name, args, 1, vec.Date)
	if err != nil {
		return nil, err
	}
	return timeKernel(vec.Int64, false, convs, func(vs []*vec.Vector, i int, out *vec.Vector) error {
		out.Ints[i] = vs[0].IntAt(i)
		return nil
	}), nil
}

func bindDateFromUnixDate(name string, args []Arg, info BindInfo) (*Bound, error) {
	convs, err := match(name, args, 1, vec.Int64)
	if err != nil {
		return nil, err
	}
	return timeKernel(vec.Date, info.Safe, convs, func(vs []*vec.Vector, i int, out *vec.Vector) error {
		x := vs[0].IntAt(i)
		if !validDate(x) {
			return fmt.Errorf("%s: %d is out of the DATE range", name, x)
		}
		out.Ints[i] = x
		return nil
	}), nil
}

// ---- constructors ----

// bindTimestampCtor binds TIMESTAMP(string|date|datetime|timestamp[, tz]).
func bindTimestampCtor(name string, args []Arg, info BindInfo) (*Bound, error) {
	if err := checkArity(name, args, 1, 2); err != nil {
		return nil, err
	}
	if args[0].Part != "" {
		return nil, sigError(name, args)
	}
	za, err := bindZone(name, args, 1)
	if err != nil {
		return nil, err
	}
	switch args[0].Type {
	case vec.String:
		return timeKernel(vec.Timestamp, info.Safe, nil, func(vs []*vec.Vector, i int, out *vec.Vector) error {
			z, err := za.at(vs, i)
			if err != nil {
				return err
			}
			r, err := parseTimestampIn(vs[0].StringAt(i), z)
			out.Ints[i] = r
			return err
		}), nil
	case vec.Date, vec.Datetime:
		perDay := args[0].Type == vec.Date
		return timeKernel(vec.Timestamp, info.Safe, nil, func(vs []*vec.Vector, i int, out *vec.Vector) error {
			z, err := za.at(vs, i)
			if err != nil {
				return err
			}
			civ := vs[0].IntAt(i)
			if perDay {
				civ *= microsPerDay
			}
			r := z.fromCivil(civ)
			if !validTimestamp(r) {
				return fmt.Errorf("%s: the result is out of range", name)
			}
			out.Ints[i] = r
			return nil
		}), nil
	case vec.Timestamp:
		if len(args) == 1 {
			return &Bound{Type: vec.Timestamp, Eval: identityEval}, nil
		}
	case vec.Unknown:
		return nullBound(vec.Timestamp), nil
	}
	return nil, sigError(name, args)
}

// bindDatetimeCtor binds DATETIME(y, m, d, h, mi, s), DATETIME(date),
// DATETIME(timestamp[, tz]) and DATETIME(string).
func bindDatetimeCtor(name string, args []Arg, info BindInfo) (*Bound, error) {
	if len(args) == 6 {
		convs, err := match(name, args, 6, vec.Int64, vec.Int64, vec.Int64, vec.Int64, vec.Int64, vec.Int64)
		if err != nil {
			return nil, err
		}
		return timeKernel(vec.Datetime, info.Safe, convs, func(vs []*vec.Vector, i int, out *vec.Vector) error {
			y, m, d := vs[0].IntAt(i), vs[1].IntAt(i), vs[2].IntAt(i)
			h, mi, s := vs[3].IntAt(i), vs[4].IntAt(i), vs[5].IntAt(i)
			if !validCivilDate(y, m, d) || h < 0 || h > 23 || mi < 0 || mi > 59 || s < 0 || s > 59 {
				return fmt.Errorf("Input calculates to invalid datetime: %d-%02d-%02d %02d:%02d:%02d", y, m, d, h, mi, s)
			}
			out.Ints[i] = daysFromCivil(y, m, d)*microsPerDay + h*microsPerHour + mi*microsPerMinute + s*microsPerSecond
			return nil
		}), nil
	}
	if err := checkArity(name, args, 1, 2); err != nil {
		return nil, err
	}
	if args[0].Part != "" {
		return nil, sigError(name, args)
	}
	switch args[0].Type {
	case vec.Timestamp:
		za, err := bindZone(name, args, 1)
		if err != nil {
			return nil, err
		}
		return timeKernel(vec.Datetime, info.Safe, nil, func(vs []*vec.Vector, i int, out *vec.Vector) error {
			z, err := za.at(vs, i)
			if err != nil {
				return err
			}
			out.Ints[i] = z.toCivil(vs[0].IntAt(i))
			return nil
		}), nil
	case vec.Date, vec.Datetime, vec.String:
		if len(args) != 1 {
			return nil, sigError(name, args)
		}
		from := args[0].Type
		return timeKernel(vec.Datetime, info.Safe, nil, func(vs []*vec.Vector, i int, out *vec.Vector) error {
			switch from {
			case vec.Date:
				out.Ints[i] = vs[0].IntAt(i) * microsPerDay
			case vec.Datetime:
				out.Ints[i] = vs[0].IntAt(i)
			default:
				r, err := ParseDatetime(vs[0].StringAt(i))
				out.Ints[i] = r
				return err
			}
			return nil
		}), nil
	case vec.Unknown:
		return nullBound(vec.Datetime), nil
	}
	return nil, sigError(name, args)
}

func validCivilDate(y, m, d int64) bool {
	return y >= 1 && y <= 9999 && m >= 1 && m <= 12 && d >= 1 && d <= daysInMonth(y, m)
}

// bindDateCtor binds DATE(y, m, d), DATE(timestamp[, tz]), DATE(datetime),
// DATE(date) and DATE(string).
func bindDateCtor(name string, args []Arg, info BindInfo) (*Bound, error) {
	if len(args) == 3 {
		convs, err := match(name, args, 3, vec.Int64, vec.Int64, vec.Int64)
		if err != nil {
			return nil, err
		}
		return timeKernel(vec.Date, info.Safe, convs, func(vs []*vec.Vector, i int, out *vec.Vector) error {
			y, m, d := vs[0].IntAt(i), vs[1].IntAt(i), vs[2].IntAt(i)
			if !validCivilDate(y, m, d) {
				return fmt.Errorf("Input calculates to invalid date: %d-%02d-%02d", y, m, d)
			}
			out.Ints[i] = daysFromCivil(y, m, d)
			return nil
		}), nil
	}
	if err := checkArity(name, args, 1, 2); err != nil {
		return nil, err
	}
	if args[0].Part != "" {
		return nil, sigError(name, args)
	}
	from := args[0].Type
	switch from {
	case vec.Timestamp, vec.String:
		za, err := bindZone(name, args, 1)
		if err != nil {
			return nil, err
		}
		return timeKernel(vec.Date, info.Safe, nil, func(vs []*vec.Vector, i int, out *vec.Vector) error {
			z, err := za.at(vs, i)
			if err != nil {
				return err
			}
			var ts int64
			if from == vec.String {
				s := vs[0].StringAt(i)
				if d, err := ParseDate(s); err == nil {
					out.Ints[i] = d
					return nil
				}
				if ts, err = ParseTimestamp(s); err != nil {
					return err
				}
			} else {
				ts = vs[0].IntAt(i)
			}
			out.Ints[i] = floorDiv(z.toCivil(ts), microsPerDay)
			return nil
		}), nil
	case vec.Datetime, vec.Date:
		if len(args) != 1 {
			return nil, sigError(name, args)
		}
		return timeKernel(vec.Date, false, nil, func(vs []*vec.Vector, i int, out *vec.Vector) error {
			if from == vec.Date {
				out.Ints[i] = vs[0].IntAt(i)
			} else {
				out.Ints[i] = floorDiv(vs[0].IntAt(i), microsPerDay)
			}
			return nil
		}), nil
	case vec.Unknown:
		return nullBound(vec.Date), nil
	}
	return nil, sigError(name, args)
}

// ---- EXTRACT ----

// bindExtract binds EXTRACT(part FROM value [AT TIME ZONE tz]), called as
// extract(part, value[, tz]).
func bindExtract(name string, args []Arg, info BindInfo) (*Bound, error) {
	if err := checkArity(name, args, 2, 3); err != nil {
		return nil, err
	}
	if args[0].Part == "" || args[1].Part != "" {
		return nil, sigError(name, args)
	}
	from := args[1].Type
	var c conv
	switch from {
	case vec.Timestamp, vec.Datetime, vec.Date:
	case vec.Unknown:
		from = vec.Timestamp
	default:
		return nil, sigError(name, args)
	}
	if len(args) == 3 && from != vec.Timestamp {
		return nil, fmt.Errorf("EXTRACT from %s does not support AT TIME ZONE", from)
	}
	datePartsOnly := []string{"DAYOFWEEK", "DAY", "DAYOFYEAR", "WEEK", "ISOWEEK", "MONTH", "QUARTER", "YEAR", "ISOYEAR"}
	allowed := append([]string{"MICROSECOND", "MILLISECOND", "SECOND", "MINUTE", "HOUR", "DATE"}, datePartsOnly...)
	switch from {
	case vec.Date:
		allowed = datePartsOnly
	case vec.Timestamp:
		allowed = append(allowed, "DATETIME")
	}
	p, err := parsePart("EXTRACT from "+from.String(), args[0], allowed...)
	if err != nil {
		return nil, err
	}
	za, err := bindZone(name, args, 2)
	if err != nil {
		return nil, err
	}
	typ := vec.Int64
	switch p.name {
	case "DATE":
		typ = vec.Date
	case "DATETIME":
		typ = vec.Datetime
	}
	return timeKernel(typ, info.Safe, []conv{nil, c}, func(vs []*vec.Vector, i int, out *vec.Vector) error {
		x := vs[1].IntAt(i)
		civ := x
		switch from {
		case vec.Date:
			civ = x * microsPerDay
		case vec.Timestamp:
			z, err := za.at(vs, i)
			if err != nil {
				return err
			}
			civ = z.toCivil(x)
		}
		out.Ints[i] = extractCivil(civ, p)
		return nil
	}), nil
}

// extractCivil extracts a part from civil microseconds.
func extractCivil(civ int64, p datePart) int64 {
	days := floorDiv(civ, microsPerDay)
	tod := civ - days*microsPerDay
	switch p.name {
	case "MICROSECOND":
		return tod % microsPerSecond
	case "MILLISECOND":
		return tod % microsPerSecond / microsPerMilli
	case "SECOND":
		return tod % microsPerMinute / microsPerSecond
	case "MINUTE":
		return tod % microsPerHour / microsPerMinute
	case "HOUR":
		return tod / microsPerHour
	case "DATE":
		return days
	case "DATETIME":
		return civ
	case "DAYOFWEEK":
		return weekday(days) + 1
	case "DAYOFYEAR":
		return dayOfYear(days)
	case "WEEK":
		yday := dayOfYear(days) - 1
		return (yday + 7 - floorMod(weekday(days)-p.start, 7)) / 7
	case "ISOWEEK":
		_, w := isoYearWeek(days)
		return w
	case "ISOYEAR":
		y, _ := isoYearWeek(days)
		return y
	}
	y, m, d := civilFromDays(days)
	switch p.name {
	case "DAY":
		return d
	case "MONTH":
		return m
	case "QUARTER":
		return (m-1)/3 + 1
	}
	return y
}

// bindLastDay binds LAST_DAY(date_or_datetime[, part]) (part: MONTH by
// default, or YEAR, QUARTER, WEEK, WEEK(<WEEKDAY>), ISOWEEK, ISOYEAR).
func bindLastDay(name string, args []Arg, _ BindInfo) (*Bound, error) {
	if err := checkArity(name, args, 1, 2); err != nil {
		return nil, err
	}
	from := args[0].Type
	if from != vec.Datetime {
		from = vec.Date
	}
	types := []vec.Type{from, tPart}
	convs, err := match(name, args, 1, types[:len(args)]...)
	if err != nil {
		return nil, err
	}
	p := datePart{name: "MONTH"}
	if len(args) == 2 {
		if p, err = parsePart(name, args[1], "WEEK", "ISOWEEK", "MONTH", "QUARTER", "YEAR", "ISOYEAR"); err != nil {
			return nil, err
		}
	}
	return timeKernel(vec.Date, false, convs, func(vs []*vec.Vector, i int, out *vec.Vector) error {
		d := vs[0].IntAt(i)
		if from == vec.Datetime {
			d = floorDiv(d, microsPerDay)
		}
		start := truncDays(d, p)
		next, ok := start+7, true
		switch p.name {
		case "MONTH":
			next, ok = addMonths(start, 1)
		case "QUARTER":
			next, ok = addMonths(start, 3)
		case "YEAR":
			next, ok = addMonths(start, 12)
		case "ISOYEAR":
			y, _ := isoYearWeek(d)
			next = isoYearStart(y + 1)
		}
		if !ok {
			next = maxDate + 1
		}
		out.Ints[i] = next - 1
		return nil
	}), nil
}
