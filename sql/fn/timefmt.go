package fn

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/sediment/sediment/internal/vec"
)

// FORMAT_TIMESTAMP / FORMAT_DATETIME / FORMAT_DATE and PARSE_TIMESTAMP /
// PARSE_DATETIME / PARSE_DATE with BigQuery's format elements:
//
//	%A %a %B %b %h %C %c %D %d %e %F %G %g %H %I %j %k %l %M %m %n %P %p %Q
//	%R %r %S %s %T %t %U %u %V %W %w %X %x %Y %y %Z %z %% %Ez %E<n>S %E*S %E4Y
//
// A format string is compiled once (at bind time when constant). Parsing
// follows BigQuery's rules: unspecified fields default to 1970-01-01
// 00:00:00; whitespace in the format matches any run of whitespace
// (including none); leading and trailing whitespace is allowed; names are
// case-insensitive. %G %g %U %V %W %Q cannot be parsed.

func init() {
	register("format_timestamp", bindFormatTime(vec.Timestamp))
	register("format_datetime", bindFormatTime(vec.Datetime))
	register("format_date", bindFormatTime(vec.Date))
	register("parse_timestamp", bindParseTime(vec.Timestamp))
	register("parse_datetime", bindParseTime(vec.Datetime))
	register("parse_date", bindParseTime(vec.Date))
}

// tfItem is one piece of a compiled time format: literal text or an element.
type tfItem struct {
	lit  string
	elem byte // 0 for literal text
	ext  byte // 'E' for %Ez, %E<n>S, %E*S, %E4Y
	prec int  // digits of %E<n>S; -1 for %E*S
}

// maxTimeFormat bounds a format string's length.
const maxTimeFormat = 4096

// compileTimeFormat compiles a format string.
func compileTimeFormat(name, f string) ([]tfItem, error) {
	if len(f) > maxTimeFormat {
		return nil, fmt.Errorf("%s: the format string is longer than %d bytes", name, maxTimeFormat)
	}
	var items []tfItem
	var lit strings.Builder
	flush := func() {
		if lit.Len() > 0 {
			items = append(items, tfItem{lit: lit.String()})
			lit.Reset()
		}
	}
	add := func(it tfItem) {
		flush()
		items = append(items, it)
	}
	for i := 0; i < len(f); i++ {
		if f[i] != '%' {
			lit.WriteByte(f[i])
			continue
		}
		i++
		if i >= len(f) {
			return nil, fmt.Errorf("%s: the format string ends with a single '%%'", name)
		}
		c := f[i]
		if c == 'E' || c == 'O' {
			if i+1 >= len(f) {
				return nil, fmt.Errorf("%s: incomplete format element %%%c", name, c)
			}
			i++
			d := f[i]
			if c == 'E' {
				if it, width, ok := extendedElement(f[i:]); ok {
					add(it)
					i += width - 1
					continue
				}
			}
			if d < 'A' || d > 'z' || (d > 'Z' && d < 'a') {
				return nil, fmt.Errorf("%s: unsupported format element %%%c%c", name, c, d)
			}
			c = d // %Ec, %EY, %Od ...: alternative representations, same output
		}
		switch c {
		case '%':
			lit.WriteByte('%')
		case 'n':
			lit.WriteByte('\n')
		case 't':
			lit.WriteByte('\t')
		case 'c', 'D', 'x', 'F', 'T', 'X', 'R', 'r':
			sub, err := compileTimeFormat(name, compositeElements[c])
			if err != nil {
				return nil, err
			}
			flush()
			items = append(items, sub...)
		case 'h':
			add(tfItem{elem: 'b'})
		case 'A', 'a', 'B', 'b', 'C', 'd', 'e', 'G', 'g', 'H', 'I', 'j', 'k', 'l', 'M', 'm',
			'P', 'p', 'Q', 'S', 's', 'U', 'u', 'V', 'W', 'w', 'Y', 'y', 'Z', 'z':
			add(tfItem{elem: c})
		default:
			return nil, fmt.Errorf("%s: unsupported format element %%%c", name, c)
		}
	}
	flush()
	return items, nil
}

// extendedElement recognises %Ez, %E*S, %E<n>S and %E4Y from the text after
// "%E"; width is the number of bytes used.
func extendedElement(t string) (tfItem, int, bool) {
	switch {
	case strings.HasPrefix(t, "z"):
		return tfItem{elem: 'z', ext: 'E'}, 1, true
	case strings.HasPrefix(t, "*S"):
		return tfItem{elem: 'S', ext: 'E', prec: -1}, 2, true
	case strings.HasPrefix(t, "4Y"):
		return tfItem{elem: 'Y', ext: 'E'}, 2, true
	}
	n, w := 0, 0
	for w < len(t) && w < 2 && t[w] >= '0' && t[w] <= '9' {
		n = n*10 + int(t[w]-'0')
		w++
	}
	if w > 0 && w < len(t) && t[w] == 'S' && n <= 12 {
		return tfItem{elem: 'S', ext: 'E', prec: n}, w + 1, true
	}
	return tfItem{}, 0, false
}

// compositeElements are the elements that stand for several others.
var compositeElements = map[byte]string{
	'c': "%a %b %e %H:%M:%S %Y",
	'D': "%m/%d/%y",
	'x': "%m/%d/%y",
	'F': "%Y-%m-%d",
	'T': "%H:%M:%S",
	'X': "%H:%M:%S",
	'R': "%H:%M",
	'r': "%I:%M:%S %p",
}

var (
	monthNames = []string{"January", "February", "March", "April", "May", "June", "July",
		"August", "September", "October", "November", "December"}
	dayNames = []string{"Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"}
)

// timeValue is what a format renders: civil time plus, for TIMESTAMP, the
// instant and the zone's offset and name.
type timeValue struct {
	civ      int64
	ts       int64
	offSec   int64
	zoneName string
}

// formatTime renders v with a compiled format.
func formatTime(items []tfItem, v timeValue) string {
	days := floorDiv(v.civ, microsPerDay)
	tod := v.civ - days*microsPerDay
	y, m, d := civilFromDays(days)
	hour, minute, sec := tod/microsPerHour, tod%microsPerHour/microsPerMinute, tod%microsPerMinute/microsPerSecond
	frac := tod % microsPerSecond
	wd := weekday(days)
	yday := dayOfYear(days)
	b := make([]byte, 0, 32)
	for _, it := range items {
		if it.elem == 0 {
			b = append(b, it.lit...)
			continue
		}
		switch it.elem {
		case 'A':
			b = append(b, dayNames[wd]...)
		case 'a':
			b = append(b, dayNames[wd][:3]...)
		case 'B':
			b = append(b, monthNames[m-1]...)
		case 'b':
			b = append(b, monthNames[m-1][:3]...)
		case 'C':
			b = appendPadded(b, y/100, 2)
		case 'd':
			b = appendPadded(b, d, 2)
		case 'e':
			b = appendSpacePadded(b, d)
		case 'G':
			iy, _ := isoYearWeek(days)
			b = strconv.AppendInt(b, iy, 10)
		case 'g':
			iy, _ := isoYearWeek(days)
			b = appendPadded(b, iy%100, 2)
		case 'H':
			b = appendPadded(b, hour, 2)
		case 'I':
			b = appendPadded(b, hour12(hour), 2)
		case 'j':
			b = appendPadded(b, yday, 3)
		case 'k':
			b = appendSpacePadded(b, hour)
		case 'l':
			b = appendSpacePadded(b, hour12(hour))
		case 'M':
			b = appendPadded(b, minute, 2)
		case 'm':
			b = appendPadded(b, m, 2)
		case 'P':
			if hour < 12 {
				b = append(b, "am"...)
			} else {
				b = append(b, "pm"...)
			}
		case 'p':
			if hour < 12 {
				b = append(b, "AM"...)
			} else {
				b = append(b, "PM"...)
			}
		case 'Q':
			b = strconv.AppendInt(b, (m-1)/3+1, 10)
		case 'S':
			b = appendPadded(b, sec, 2)
			b = appendSecondsFraction(b, frac, it)
		case 's':
			b = strconv.AppendInt(b, floorDiv(v.ts, microsPerSecond), 10)
		case 'U':
			b = appendPadded(b, (yday-1+7-wd)/7, 2)
		case 'u':
			b = strconv.AppendInt(b, floorMod(wd-1, 7)+1, 10)
		case 'V':
			_, w := isoYearWeek(days)
			b = appendPadded(b, w, 2)
		case 'W':
			b = appendPadded(b, (yday-1+7-floorMod(wd-1, 7))/7, 2)
		case 'w':
			b = strconv.AppendInt(b, wd, 10)
		case 'Y':
			if it.ext == 'E' {
				b = appendPadded(b, y, 4)
			} else {
				b = strconv.AppendInt(b, y, 10)
			}
		case 'y':
			b = appendPadded(b, y%100, 2)
		case 'Z':
			b = append(b, v.zoneName...)
		case 'z':
			b = appendOffset(b, v.offSec, it.ext == 'E')
		}
	}
	return string(b)
}

func hour12(h int64) int64 {
	if h%12 == 0 {
		return 12
	}
	return h % 12
}

func appendSpacePadded(b []byte, x int64) []byte {
	if x < 10 {
		b = append(b, ' ')
	}
	return strconv.AppendInt(b, x, 10)
}

// appendSecondsFraction appends the fraction of %E<n>S (n digits,
// truncated) or %E*S (all significant digits).
func appendSecondsFraction(b []byte, frac int64, it tfItem) []byte {
	if it.ext != 'E' {
		return b
	}
	switch {
	case it.prec == 0:
		return b
	case it.prec < 0:
		if frac == 0 {
			return b
		}
		digits := appendPadded(nil, frac, 6)
		return append(append(b, '.'), strings.TrimRight(string(digits), "0")...)
	}
	digits := appendPadded(nil, frac, 6)
	for len(digits) < it.prec {
		digits = append(digits, '0')
	}
	return append(append(b, '.'), digits[:it.prec]...)
}

// appendOffset appends +HHMM (%z) or +HH:MM (%Ez).
func appendOffset(b []byte, off int64, colon bool) []byte {
	if off < 0 {
		b = append(b, '-')
		off = -off
	} else {
		b = append(b, '+')
	}
	b = appendPadded(b, off/3600, 2)
	if colon {
		b = append(b, ':')
	}
	return appendPadded(b, off%3600/60, 2)
}

// formatArg is a format string argument compiled at bind time when
// constant, else once per distinct value during an Eval.
type formatArg struct {
	fixed []tfItem
}

func (fa formatArg) cache(name string) func(v *vec.Vector, i int) ([]tfItem, error) {
	if fa.fixed != nil {
		return func(*vec.Vector, int) ([]tfItem, error) { return fa.fixed, nil }
	}
	c := newPatternCache(func(f string) ([]tfItem, error) { return compileTimeFormat(name, f) })
	return func(v *vec.Vector, i int) ([]tfItem, error) { return c.get(v.StringAt(i)) }
}

func bindFormatArg(name string, a Arg) (formatArg, error) {
	var fa formatArg
	if f, isNull, ok := constString(a); ok && !isNull {
		items, err := compileTimeFormat(name, f)
		if err != nil {
			return fa, err
		}
		if items == nil {
			items = []tfItem{}
		}
		fa.fixed = items
	}
	return fa, nil
}

// bindFormatTime binds FORMAT_TIMESTAMP(fmt, ts[, tz]), FORMAT_DATETIME(fmt,
// dt) and FORMAT_DATE(fmt, d).
func bindFormatTime(t vec.Type) func(string, []Arg, BindInfo) (*Bound, error) {
	return func(name string, args []Arg, info BindInfo) (*Bound, error) {
		types := []vec.Type{vec.String, t}
		if t == vec.Timestamp {
			types = append(types, vec.String)
		}
		convs, err := match(name, args, 2, types...)
		if err != nil {
			return nil, err
		}
		fa, err := bindFormatArg(name, args[0])
		if err != nil {
			return nil, err
		}
		za, err := bindZone(name, args, 2)
		if err != nil {
			return nil, err
		}
		k := newKernel(vec.String, func(_ *EvalCtx, vs []*vec.Vector, sel []int32, n int) (*vec.Vector, error) {
			get := fa.cache(name)
			out := newVec(vec.String, n)
			err := rowLoop(out, vs, sel, n, info.Safe, func(i int) error {
				items, err := get(vs[0], i)
				if err != nil {
					return err
				}
				x := vs[1].IntAt(i)
				v := timeValue{civ: x, ts: x, zoneName: "UTC"}
				switch t {
				case vec.Date:
					v.civ, v.ts = x*microsPerDay, x*microsPerDay
				case vec.Timestamp:
					z, err := za.at(vs, i)
					if err != nil {
						return err
					}
					v.civ = z.toCivil(x)
					v.offSec = (v.civ - x) / microsPerSecond
					v.zoneName = z.abbrevAt(x)
				}
				out.Strs[i] = formatTime(items, v)
				return nil
			})
			return out, err
		})
		k.convs, k.dictArg = convs, -1
		return k.bound(), nil
	}
}

// parsedTime collects the fields a parse found.
type parsedTime struct {
	year, month, day           int64
	hour, minute, sec, micros  int64
	yday                       int64
	hour12, pm, am             bool
	century, yy                int64
	hasCentury, hasYY, hasYear bool
	offSec                     int64
	hasOffset                  bool
	zone                       *zone
	epoch                      int64
	hasEpoch                   bool
}

func isSpaceByte(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

// parseTimeText parses s with a compiled format.
func parseTimeText(name string, items []tfItem, s string) (*parsedTime, error) {
	p := &parsedTime{year: 1970, month: 1, day: 1}
	fail := func(format string, a ...any) error {
		return fmt.Errorf("%s: failed to parse input string %q: %s", name, clipValue(s), fmt.Sprintf(format, a...))
	}
	i := 0
	skipSpace := func() {
		for i < len(s) && isSpaceByte(s[i]) {
			i++
		}
	}
	num := func(what string, maxDigits int) (int64, error) {
		start := i
		var x int64
		for i < len(s) && i-start < maxDigits && s[i] >= '0' && s[i] <= '9' {
			x = x*10 + int64(s[i]-'0')
			i++
		}
		if i == start {
			return 0, fail("expected %s", what)
		}
		return x, nil
	}
	name3 := func(names []string) (int, error) {
		for k, full := range names {
			if len(s)-i >= len(full) && strings.EqualFold(s[i:i+len(full)], full) {
				i += len(full)
				return k, nil
			}
		}
		for k, full := range names {
			if len(s)-i >= 3 && strings.EqualFold(s[i:i+3], full[:3]) {
				i += 3
				return k, nil
			}
		}
		return 0, fail("expected a name")
	}
	skipSpace()
	var err error
	for _, it := range items {
		if it.elem == 0 {
			for j := 0; j < len(it.lit); j++ {
				c := it.lit[j]
				if isSpaceByte(c) {
					skipSpace()
					continue
				}
				if i >= len(s) {
					return nil, fail("mismatch between format character '%c' and the end of the string", c)
				}
				if s[i] != c {
					return nil, fail("mismatch between format character '%c' and string character '%c'", c, s[i])
				}
				i++
			}
			continue
		}
		switch it.elem {
		case 'Y':
			digits := 4
			neg := false
			if it.ext != 'E' && i < len(s) && s[i] == '-' {
				neg = true
				i++
			}
			if p.year, err = num("a year", digits); err != nil {
				return nil, err
			}
			if neg {
				p.year = -p.year
			}
			p.hasYear, p.hasCentury, p.hasYY = true, false, false
		case 'm':
			if p.month, err = num("a month", 2); err != nil {
				return nil, err
			}
		case 'd', 'e':
			if it.elem == 'e' {
				skipSpace()
			}
			if p.day, err = num("a day", 2); err != nil {
				return nil, err
			}
		case 'H', 'k':
			if it.elem == 'k' {
				skipSpace()
			}
			if p.hour, err = num("an hour", 2); err != nil {
				return nil, err
			}
			p.hour12 = false
		case 'I', 'l':
			if it.elem == 'l' {
				skipSpace()
			}
			if p.hour, err = num("an hour", 2); err != nil {
				return nil, err
			}
			if p.hour < 1 || p.hour > 12 {
				return nil, fail("hour %d is out of range for %%I", p.hour)
			}
			p.hour12 = true
		case 'M':
			if p.minute, err = num("a minute", 2); err != nil {
				return nil, err
			}
		case 'S':
			if p.sec, err = num("seconds", 2); err != nil {
				return nil, err
			}
			p.micros = 0
			if it.ext == 'E' && i < len(s) && s[i] == '.' && i+1 < len(s) && s[i+1] >= '0' && s[i+1] <= '9' {
				i++
				start := i
				var frac int64
				for i < len(s) && s[i] >= '0' && s[i] <= '9' {
					if i-start < 6 {
						frac = frac*10 + int64(s[i]-'0')
					}
					i++
				}
				for k := i - start; k < 6; k++ {
					frac *= 10
				}
				p.micros = frac
			}
		case 'j':
			if p.yday, err = num("a day of year", 3); err != nil {
				return nil, err
			}
		case 'y':
			if p.yy, err = num("a year", 2); err != nil {
				return nil, err
			}
			p.hasYY = true
		case 'C':
			if p.century, err = num("a century", 2); err != nil {
				return nil, err
			}
			p.hasCentury = true
		case 's':
			neg := false
			if i < len(s) && s[i] == '-' {
				neg = true
				i++
			}
			if p.epoch, err = num("seconds since the epoch", 12); err != nil {
				return nil, err
			}
			if neg {
				p.epoch = -p.epoch
			}
			p.hasEpoch = true
		case 'z':
			if i < len(s) && (s[i] == 'Z' || s[i] == 'z') {
				i++
				p.offSec, p.hasOffset, p.zone = 0, true, nil
				break
			}
			start := i
			if i < len(s) && (s[i] == '+' || s[i] == '-') {
				i++
			}
			for i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] == ':') && i-start < 6 {
				i++
			}
			off, ok := parseOffset(s[start:i])
			if !ok {
				return nil, fail("invalid time zone offset %q", s[start:i])
			}
			p.offSec, p.hasOffset, p.zone = off, true, nil
		case 'Z':
			start := i
			for i < len(s) && !isSpaceByte(s[i]) && i-start < 64 {
				i++
			}
			z, err := loadZone(s[start:i])
			if err != nil {
				return nil, fail("invalid time zone %q", s[start:i])
			}
			p.zone, p.hasOffset = z, false
		case 'a', 'A':
			if _, err := name3(dayNames); err != nil {
				return nil, err
			}
		case 'b', 'B':
			k, err := name3(monthNames)
			if err != nil {
				return nil, err
			}
			p.month = int64(k) + 1
		case 'p', 'P':
			switch {
			case len(s)-i >= 2 && strings.EqualFold(s[i:i+2], "AM"):
				p.am, p.pm = true, false
			case len(s)-i >= 2 && strings.EqualFold(s[i:i+2], "PM"):
				p.pm, p.am = true, false
			default:
				return nil, fail("expected AM or PM")
			}
			i += 2
		case 'u', 'w':
			if _, err := num("a weekday number", 1); err != nil {
				return nil, err
			}
		default:
			return nil, fmt.Errorf("%s: the format element %%%c is not supported for parsing", name, it.elem)
		}
	}
	skipSpace()
	if i < len(s) {
		return nil, fail("illegal non-space trailing data %q", clipValue(s[i:]))
	}
	return p, nil
}

// civil combines the parsed fields into civil microseconds.
func (p *parsedTime) civil(name, s string) (int64, error) {
	year := p.year
	switch {
	case p.hasCentury && p.hasYY:
		year = p.century*100 + p.yy
	case p.hasYY:
		if p.yy < 69 {
			year = 2000 + p.yy
		} else {
			year = 1900 + p.yy
		}
	case p.hasCentury:
		year = p.century * 100
	}
	hour := p.hour
	if p.hour12 {
		hour %= 12
		if p.pm {
			hour += 12
		}
	}
	bad := func(what string) error {
		return fmt.Errorf("%s: failed to parse input string %q: %s is out of range", name, clipValue(s), what)
	}
	if year < 1 || year > 9999 {
		return 0, bad("the year")
	}
	var days int64
	if p.yday != 0 {
		if p.yday < 1 || p.yday > 365 || (p.yday == 366 && !isLeap(year)) {
			if !(p.yday == 366 && isLeap(year)) {
				return 0, bad("the day of year")
			}
		}
		days = daysFromCivil(year, 1, 1) + p.yday - 1
	} else {
		if p.month < 1 || p.month > 12 {
			return 0, bad("the month")
		}
		if p.day < 1 || p.day > daysInMonth(year, p.month) {
			return 0, bad("the day")
		}
		days = daysFromCivil(year, p.month, p.day)
	}
	if hour > 23 || p.minute > 59 || p.sec > 59 {
		return 0, bad("the time")
	}
	return days*microsPerDay + hour*microsPerHour + p.minute*microsPerMinute + p.sec*microsPerSecond + p.micros, nil
}

// bindParseTime binds PARSE_TIMESTAMP(fmt, s[, tz]), PARSE_DATETIME(fmt, s)
// and PARSE_DATE(fmt, s).
func bindParseTime(t vec.Type) func(string, []Arg, BindInfo) (*Bound, error) {
	return func(name string, args []Arg, info BindInfo) (*Bound, error) {
		types := []vec.Type{vec.String, vec.String}
		if t == vec.Timestamp {
			types = append(types, vec.String)
		}
		convs, err := match(name, args, 2, types...)
		if err != nil {
			return nil, err
		}
		fa, err := bindFormatArg(name, args[0])
		if err != nil {
			return nil, err
		}
		za, err := bindZone(name, args, 2)
		if err != nil {
			return nil, err
		}
		k := newKernel(t, func(_ *EvalCtx, vs []*vec.Vector, sel []int32, n int) (*vec.Vector, error) {
			get := fa.cache(name)
			out := newVec(t, n)
			err := rowLoop(out, vs, sel, n, info.Safe, func(i int) error {
				items, err := get(vs[0], i)
				if err != nil {
					return err
				}
				s := vs[1].StringAt(i)
				r, err := parseTimeValue(name, items, s, t, func() (*zone, error) { return za.at(vs, i) })
				out.Ints[i] = r
				return err
			})
			return out, err
		})
		k.convs, k.dictArg = convs, 1
		if args[0].Const == nil {
			k.dictArg = -1
		}
		return k.bound(), nil
	}
}

// parseTimeValue parses s into a value of type t; zoneOf supplies the
// function's time zone for TIMESTAMP results without a zone in the text.
func parseTimeValue(name string, items []tfItem, s string, t vec.Type, zoneOf func() (*zone, error)) (int64, error) {
	p, err := parseTimeText(name, items, s)
	if err != nil {
		return 0, err
	}
	if p.hasEpoch {
		if p.epoch < minTimestamp/microsPerSecond || p.epoch > maxTimestamp/microsPerSecond {
			return 0, fmt.Errorf("%s: %d seconds is out of range", name, p.epoch)
		}
		ts := p.epoch * microsPerSecond
		switch t {
		case vec.Date:
			return floorDiv(ts, microsPerDay), nil
		}
		return ts, nil
	}
	civ, err := p.civil(name, s)
	if err != nil {
		return 0, err
	}
	switch t {
	case vec.Date:
		return floorDiv(civ, microsPerDay), nil
	case vec.Datetime:
		return civ, nil
	}
	var z *zone
	switch {
	case p.hasOffset:
		z = fixedZone(p.offSec)
	case p.zone != nil:
		z = p.zone
	default:
		if z, err = zoneOf(); err != nil {
			return 0, err
		}
	}
	ts := z.fromCivil(civ)
	if !validTimestamp(ts) {
		return 0, fmt.Errorf("%s: the result is out of range", name)
	}
	return ts, nil
}
