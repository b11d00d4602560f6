package fn

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/sediment/sediment/internal/vec"
)

// FORMAT(format_string, value...): printf-style formatting with BigQuery's
// specifiers %d %i %o %x %X %f %F %e %E %g %G %s %t %T %%, flags "-+ #0'",
// width and precision (numbers or '*'). %t renders any value readably (like
// CAST AS STRING), %T as a SQL literal. A NULL format or a NULL value for
// any specifier but %t/%T makes the result NULL; %t/%T print NULL.

func init() {
	register("format", bindFormat)
}

// fmtSpec is one piece of a compiled FORMAT string.
type fmtSpec struct {
	lit                 string // literal text when verb == 0
	minus, plus, space  bool
	sharp, zero, group  bool
	width, prec         int
	hasWidth, hasPrec   bool
	widthStar, precStar bool
	verb                byte
}

// maxFormatWidth bounds widths and precisions.
const maxFormatWidth = 10000

// compileFormat compiles a FORMAT string; args is the number of value
// arguments it consumes (including '*' widths and precisions).
func compileFormat(f string) ([]fmtSpec, int, error) {
	var specs []fmtSpec
	var lit strings.Builder
	nargs := 0
	for i := 0; i < len(f); i++ {
		if f[i] != '%' {
			lit.WriteByte(f[i])
			continue
		}
		i++
		if i >= len(f) {
			return nil, 0, fmt.Errorf("FORMAT: the format string ends with a single '%%'")
		}
		if f[i] == '%' {
			lit.WriteByte('%')
			continue
		}
		var sp fmtSpec
	flags:
		for ; i < len(f); i++ {
			switch f[i] {
			case '-':
				sp.minus = true
			case '+':
				sp.plus = true
			case ' ':
				sp.space = true
			case '#':
				sp.sharp = true
			case '0':
				sp.zero = true
			case '\'':
				sp.group = true
			default:
				break flags
			}
		}
		num := func() (int, bool, error) {
			start := i
			x := 0
			for i < len(f) && f[i] >= '0' && f[i] <= '9' {
				x = x*10 + int(f[i]-'0')
				i++
				if x > maxFormatWidth {
					return 0, false, fmt.Errorf("FORMAT: width or precision larger than %d", maxFormatWidth)
				}
			}
			return x, i > start, nil
		}
		var err error
		if i < len(f) && f[i] == '*' {
			sp.widthStar, sp.hasWidth = true, true
			nargs++
			i++
		} else if sp.width, sp.hasWidth, err = num(); err != nil {
			return nil, 0, err
		}
		if i < len(f) && f[i] == '.' {
			i++
			sp.hasPrec = true
			if i < len(f) && f[i] == '*' {
				sp.precStar = true
				nargs++
				i++
			} else if sp.prec, _, err = num(); err != nil {
				return nil, 0, err
			}
		}
		if i >= len(f) {
			return nil, 0, fmt.Errorf("FORMAT: incomplete format specifier at the end of the format string")
		}
		switch c := f[i]; c {
		case 'd', 'i', 'o', 'x', 'X', 'f', 'F', 'e', 'E', 'g', 'G', 's', 't', 'T':
			sp.verb = c
		default:
			return nil, 0, fmt.Errorf("FORMAT: invalid format specifier %%%c", c)
		}
		nargs++
		if lit.Len() > 0 {
			specs = append(specs, fmtSpec{lit: lit.String()})
			lit.Reset()
		}
		specs = append(specs, sp)
	}
	if lit.Len() > 0 {
		specs = append(specs, fmtSpec{lit: lit.String()})
	}
	return specs, nargs, nil
}

// checkFormatArgs checks the value arguments' types against the specifiers.
func checkFormatArgs(specs []fmtSpec, nargs int, types []vec.Type) error {
	if nargs != len(types) {
		return fmt.Errorf("FORMAT: the format string needs %d arguments but %d were given", nargs, len(types))
	}
	k := 0
	for _, sp := range specs {
		if sp.verb == 0 {
			continue
		}
		for _, star := range []bool{sp.widthStar, sp.precStar} {
			if star {
				if t := types[k]; t != vec.Int64 && t != vec.Unknown {
					return fmt.Errorf("FORMAT: '*' needs an INT64 argument, got %s", t)
				}
				k++
			}
		}
		if !verbAccepts(sp.verb, types[k]) {
			return fmt.Errorf("FORMAT: invalid type for argument %d: %%%c does not accept %s", k+2, sp.verb, types[k])
		}
		k++
	}
	return nil
}

func verbAccepts(verb byte, t vec.Type) bool {
	if t == vec.Unknown {
		return true
	}
	switch verb {
	case 'd', 'i', 'o', 'x', 'X':
		return t == vec.Int64
	case 'f', 'F', 'e', 'E', 'g', 'G':
		return t == vec.Int64 || t == vec.Float64
	case 's':
		return t == vec.String
	}
	return true // %t, %T
}

func bindFormat(name string, args []Arg, info BindInfo) (*Bound, error) {
	if len(args) == 0 {
		return nil, arityError(name)
	}
	convs := make([]conv, len(args))
	types := make([]vec.Type, 0, len(args)-1)
	for i, a := range args {
		if a.Part != "" || a.Type == vec.Interval {
			return nil, sigError(name, args)
		}
		if i == 0 {
			if a.Type != vec.String && a.Type != vec.Unknown {
				return nil, sigError(name, args)
			}
			continue
		}
		if a.Type == vec.RowRef {
			convs[i] = convMaterialize
		}
		types = append(types, a.Type)
	}
	var fixed []fmtSpec
	isFixed := false
	if f, isNull, ok := constString(args[0]); ok && !isNull {
		specs, nargs, err := compileFormat(f)
		if err != nil {
			return nil, err
		}
		if err := checkFormatArgs(specs, nargs, types); err != nil {
			return nil, err
		}
		fixed, isFixed = specs, true
	}
	k := &kernel{typ: vec.String, convs: convs, dictArg: dictArgOf(args), eval: func(_ *EvalCtx, vs []*vec.Vector, sel []int32, n int) (*vec.Vector, error) {
		type compiled struct {
			specs []fmtSpec
			err   error
		}
		cache := map[string]compiled{}
		out := newVec(vec.String, n)
		var err error
		var buf []byte
		forRows(sel, n, func(i int) {
			if err != nil {
				return
			}
			if vs[0].IsNull(i) {
				setNull(out, i)
				return
			}
			specs := fixed
			if !isFixed {
				f := vs[0].StringAt(i)
				c, ok := cache[f]
				if !ok {
					s, nargs, e := compileFormat(f)
					if e == nil {
						e = checkFormatArgs(s, nargs, types)
					}
					c = compiled{s, e}
					cache[f] = c
				}
				if c.err != nil {
					if info.Safe {
						setNull(out, i)
					} else {
						err = c.err
					}
					return
				}
				specs = c.specs
			}
			var isNull bool
			var e error
			buf, isNull, e = formatRow(buf[:0], specs, vs[1:], i)
			switch {
			case e != nil && info.Safe, isNull:
				setNull(out, i)
			case e != nil:
				err = e
			default:
				out.Strs[i] = string(buf)
			}
		})
		if err != nil {
			return nil, err
		}
		return out, nil
	}}
	// FORMAT is not strict (%t prints NULL), but a NULL format is NULL.
	k.strict = false
	return k.bound(), nil
}

// formatRow formats row i; isNull reports a NULL result.
func formatRow(b []byte, specs []fmtSpec, vs []*vec.Vector, i int) ([]byte, bool, error) {
	k := 0
	for _, sp := range specs {
		if sp.verb == 0 {
			b = append(b, sp.lit...)
			continue
		}
		if sp.widthStar {
			if vs[k].IsNull(i) || vs[k].Type == vec.Unknown {
				return b, true, nil
			}
			w := vs[k].IntAt(i)
			if w < 0 {
				sp.minus, w = true, -w
			}
			if w > maxFormatWidth {
				return b, false, fmt.Errorf("FORMAT: width larger than %d", maxFormatWidth)
			}
			sp.width = int(w)
			k++
		}
		if sp.precStar {
			if vs[k].IsNull(i) || vs[k].Type == vec.Unknown {
				return b, true, nil
			}
			p := vs[k].IntAt(i)
			if p > maxFormatWidth {
				return b, false, fmt.Errorf("FORMAT: precision larger than %d", maxFormatWidth)
			}
			if p < 0 {
				sp.hasPrec = false
			} else {
				sp.prec = int(p)
			}
			k++
		}
		v := vs[k]
		k++
		null := v.Type == vec.Unknown || v.IsNull(i)
		if null && sp.verb != 't' && sp.verb != 'T' {
			return b, true, nil
		}
		var err error
		if b, err = formatOne(b, sp, v, i, null); err != nil {
			return b, false, err
		}
	}
	return b, false, nil
}

// formatOne formats one value.
func formatOne(b []byte, sp fmtSpec, v *vec.Vector, i int, null bool) ([]byte, error) {
	switch sp.verb {
	case 'd', 'i', 'o', 'x', 'X':
		return formatInteger(b, sp, v.IntAt(i))
	case 'f', 'F', 'e', 'E', 'g', 'G':
		x := 0.0
		if v.Type == vec.Int64 {
			x = float64(v.IntAt(i))
		} else {
			x = v.FloatAt(i)
		}
		return formatFloatSpec(b, sp, x), nil
	case 's':
		return padText(b, sp, v.StringAt(i)), nil
	}
	var text string
	if null {
		text = "NULL"
	} else {
		text = string(appendValueText(nil, v, i, sp.verb == 'T'))
	}
	return padText(b, sp, text), nil
}

// padText applies precision (maximum characters) and width to text.
func padText(b []byte, sp fmtSpec, text string) []byte {
	if sp.hasPrec && utf8.RuneCountInString(text) > sp.prec {
		text = text[:runeOffset(text, sp.prec)]
	}
	return padTo(b, text, sp.width, sp.minus)
}

func padTo(b []byte, text string, width int, left bool) []byte {
	pad := width - utf8.RuneCountInString(text)
	if pad > 0 && !left {
		b = append(b, strings.Repeat(" ", pad)...)
	}
	b = append(b, text...)
	if pad > 0 && left {
		b = append(b, strings.Repeat(" ", pad)...)
	}
	return b
}

// formatInteger formats %d %i %o %x %X.
func formatInteger(b []byte, sp fmtSpec, x int64) ([]byte, error) {
	if x < 0 && (sp.verb == 'o' || sp.verb == 'x' || sp.verb == 'X') {
		return b, fmt.Errorf("FORMAT: %%%c does not accept negative values: %d", sp.verb, x)
	}
	base, groupSep, groupLen := 10, ",", 3
	switch sp.verb {
	case 'o':
		base, groupLen = 8, 4
	case 'x', 'X':
		base, groupSep, groupLen = 16, ":", 4
	}
	var digits string
	if x == minInt64 {
		digits = "9223372036854775808"
	} else if x < 0 {
		digits = strconv.FormatInt(-x, base)
	} else {
		digits = strconv.FormatInt(x, base)
	}
	if sp.verb == 'X' {
		digits = strings.ToUpper(digits)
	}
	if sp.hasPrec {
		if sp.prec == 0 && x == 0 {
			digits = ""
		}
		for len(digits) < sp.prec {
			digits = "0" + digits
		}
	}
	if sp.group && len(digits) > groupLen {
		var g strings.Builder
		first := len(digits) % groupLen
		if first == 0 {
			first = groupLen
		}
		g.WriteString(digits[:first])
		for j := first; j < len(digits); j += groupLen {
			g.WriteString(groupSep)
			g.WriteString(digits[j : j+groupLen])
		}
		digits = g.String()
	}
	prefix := ""
	switch {
	case x < 0:
		prefix = "-"
	case sp.plus && sp.verb != 'o' && sp.verb != 'x' && sp.verb != 'X':
		prefix = "+"
	case sp.space && sp.verb != 'o' && sp.verb != 'x' && sp.verb != 'X':
		prefix = " "
	}
	if sp.sharp && x != 0 {
		switch sp.verb {
		case 'o':
			if !strings.HasPrefix(digits, "0") {
				prefix += "0"
			}
		case 'x':
			prefix += "0x"
		case 'X':
			prefix += "0X"
		}
	}
	return padNumber(b, sp, prefix, digits, !sp.hasPrec), nil
}

// padNumber pads sign+digits to the width; the '0' flag pads with zeros
// between the sign and the digits (unless '-' is given).
func padNumber(b []byte, sp fmtSpec, prefix, digits string, zeroOK bool) []byte {
	n := len(prefix) + len(digits)
	if sp.zero && !sp.minus && zeroOK && sp.width > n {
		b = append(b, prefix...)
		b = append(b, strings.Repeat("0", sp.width-n)...)
		return append(b, digits...)
	}
	return padTo(b, prefix+digits, sp.width, sp.minus)
}

// formatFloatSpec formats %f %F %e %E %g %G.
func formatFloatSpec(b []byte, sp fmtSpec, x float64) []byte {
	upper := sp.verb == 'F' || sp.verb == 'E' || sp.verb == 'G'
	if math.IsNaN(x) || math.IsInf(x, 0) {
		text := "nan"
		switch {
		case math.IsInf(x, 1):
			text = "inf"
		case math.IsInf(x, -1):
			text = "-inf"
		}
		if upper {
			text = strings.ToUpper(text)
		}
		if !math.IsInf(x, -1) && !math.IsNaN(x) {
			if sp.plus {
				text = "+" + text
			} else if sp.space {
				text = " " + text
			}
		}
		return padTo(b, text, sp.width, sp.minus)
	}
	prec := 6
	if sp.hasPrec {
		prec = sp.prec
	}
	var spec strings.Builder
	spec.WriteByte('%')
	if sp.plus {
		spec.WriteByte('+')
	}
	if sp.space {
		spec.WriteByte(' ')
	}
	if sp.sharp {
		spec.WriteByte('#')
	}
	spec.WriteByte('.')
	spec.WriteString(strconv.Itoa(prec))
	verb := sp.verb
	if verb == 'F' {
		verb = 'f'
	}
	spec.WriteByte(verb)
	text := fmt.Sprintf(spec.String(), x)
	prefix := ""
	if text != "" && (text[0] == '-' || text[0] == '+' || text[0] == ' ') {
		prefix, text = text[:1], text[1:]
	}
	return padNumber(b, sp, prefix, text, true)
}

// appendValueText renders row i of v for %t (literal false) or %T (a SQL
// literal).
func appendValueText(b []byte, v *vec.Vector, i int, literal bool) []byte {
	if v.Type == vec.Unknown || v.IsNull(i) {
		return append(b, "NULL"...)
	}
	switch v.Type {
	case vec.Float64:
		f := v.FloatAt(i)
		s := formatFloat(f)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			if literal {
				return append(b, `CAST("`+s+`" AS FLOAT64)`...)
			}
			return append(b, s...)
		}
		b = append(b, s...)
		if !strings.ContainsAny(s, ".e") {
			b = append(b, ".0"...)
		}
		return b
	case vec.String:
		if literal {
			return appendSQLString(b, v.StringAt(i))
		}
		return append(b, v.StringAt(i)...)
	case vec.JSON:
		if literal {
			b = append(b, "JSON "...)
			return appendSQLString(b, v.StringAt(i))
		}
		return append(b, v.StringAt(i)...)
	case vec.Timestamp, vec.Datetime, vec.Date:
		if literal {
			b = append(b, v.Type.String()...)
			b = append(b, ' ')
			return appendSQLString(b, scalarString(v, i))
		}
		return append(b, scalarString(v, i)...)
	case vec.List:
		lo, hi := listRange(v, i)
		b = append(b, '[')
		for j := lo; j < hi; j++ {
			if j > lo {
				b = append(b, ", "...)
			}
			b = appendValueText(b, v.Elem, j, literal)
		}
		return append(b, ']')
	case vec.Struct:
		if literal && len(v.Children) <= 1 {
			b = append(b, "STRUCT"...)
		}
		b = append(b, '(')
		for c, child := range v.Children {
			if c > 0 {
				b = append(b, ", "...)
			}
			b = appendValueText(b, child, structRow(v, i), literal)
		}
		return append(b, ')')
	}
	return append(b, scalarString(v, i)...)
}

// appendSQLString appends s as a double-quoted SQL string literal.
func appendSQLString(b []byte, s string) []byte {
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '"', '\\':
			b = append(b, '\\', c)
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		default:
			b = append(b, c)
		}
	}
	return append(b, '"')
}
