package fn

import (
	"math"
	"testing"

	"github.com/sediment/sediment/internal/vec"
)

func TestFormat(t *testing.T) {
	runCases(t, []fnCase{
		// BigQuery's documented examples.
		c("format", "10", "%d", 10),
		c("format", "|        11|", "|%10d|", 11),
		c("format", "+0000000012+", "+%010d+", 12),
		c("format", "123,456,789", "%'d", 123456789),
		c("format", "-abcd efg-", "-%s-", "abcd efg"),
		c("format", "1.100000 2.200000E+00", "%f %E", 1.1, 2.2),
		c("format", "2015-09-01", "%t", date("2015-09-01")),
		c("format", "2015-09-01 19:34:56+00", "%t", ts("2015-09-01 12:34:56 America/Los_Angeles")),
		c("format", "00-NULL-00", "00-%t-00", nil),
		c("format", "NULL", "%T", nullOf(vec.String)),
		c("format", nil, "%i", nullOf(vec.Int64)),
		c("format", nil, nil, 1),
		c("format", errWant("%s does not accept INT64"), "%s", 1),
		c("format", errWant("ends with a single '%'"), "%"),
		c("format", errWant("needs 1 arguments but 0"), "%d"),
		c("format", errWant("needs 0 arguments but 1"), "x", 1),
		c("format", errWant("invalid format specifier %y"), "%y", 1),
		// Integers.
		c("format", "ff FF 0xff 10 0", "%x %X %#x %o %#x", 255, 255, 255, 8, 0),
		c("format", "bc:614e", "%'x", 12345678),
		c("format", "15,4403", "%'o", 55555),
		c("format", "-1,234", "%'d", -1234),
		c("format", "+5| 5|-5", "%+d|% d|%d", 5, 5, -5),
		c("format", "00042", "%.5d", 42),
		c("format", "", "%.0d", 0),
		c("format", "42   |", "%-5d|", 42),
		c("format", "-0042", "%05d", -42),
		c("format", "-9223372036854775808", "%d", int64(math.MinInt64)),
		c("format", errWant("negative"), "%x", -1),
		c("format", errWant("width or precision larger"), "%99999d", 1),
		// Floats.
		c("format", "3.14", "%.2f", 3.14159),
		c("format", "392.65", "%g", 392.65),
		c("format", "3.9265e+07", "%g", 3.9265e7),
		c("format", "3.9265E+07", "%G", 3.9265e7),
		c("format", "392.650", "%#g", 392.65),
		c("format", "3.926500e+02", "%e", 392.65),
		c("format", "inf -inf nan INF NAN", "%f %f %f %F %F", math.Inf(1), math.Inf(-1), math.NaN(), math.Inf(1), math.NaN()),
		c("format", "  inf", "%5f", math.Inf(1)),
		c("format", "2.000000", "%f", 2),
		c("format", "003.50", "%06.2f", 3.5),
		c("format", "+3.5", "%+.1f", 3.5),
		// Strings, widths and precisions.
		c("format", "   ab|cd   |", "%5s|%-5s|", "ab", "cd"),
		c("format", "ab", "%.2s", "abcdef"),
		c("format", "  é", "%3s", "é"),
		c("format", "   42", "%*d", 5, 42),
		c("format", "42   |", "%*d|", -5, 42),
		c("format", "2.2", "%.*f", 1, 2.25),
		c("format", "100%", "%d%%", 100),
		// %t and %T.
		c("format", `"hello"`, "%T", "hello"),
		c("format", `"a\"b"`, "%T", `a"b`),
		c("format", "1.0", "%t", 1.0),
		c("format", "1.0", "%T", 1.0),
		c("format", "1e+20", "%t", 1e20),
		c("format", `CAST("inf" AS FLOAT64)`, "%T", math.Inf(1)),
		c("format", "42", "%T", 42),
		c("format", "true", "%t", true),
		c("format", `DATE "2015-09-01"`, "%T", date("2015-09-01")),
		c("format", `TIMESTAMP "2015-09-01 00:00:00+00"`, "%T", ts("2015-09-01")),
		c("format", "[1, 2, NULL]", "%t", arr(vec.Int64, 1, 2, nil)),
		c("format", `["a"]`, "%T", arr(vec.String, "a")),
		c("format", "hel", "%.3t", "hello"),
		c("format", `{"a":1}`, "%t", jsonV(`{"a":1}`)),
	})
}

func TestFormatColumnFormatString(t *testing.T) {
	for _, safe := range []bool{false, true} {
		f, _ := Lookup("format")
		b, err := f.Bind([]Arg{{Type: vec.String}, {Type: vec.Int64}}, BindInfo{Safe: safe})
		if err != nil {
			t.Fatal(err)
		}
		fs := buildVector(vec.String, []any{"<%d>", "%s", nil}, false)
		xs := buildVector(vec.Int64, []any{1, 2, 3}, false)
		r, err := b.Eval(testEvalCtx(), []*vec.Vector{fs, xs}, nil, 3)
		if !safe {
			if err == nil {
				t.Errorf("%%s with an INT64 from a column: no error")
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if readValue(r, 0) != "<1>" || readValue(r, 1) != nil || readValue(r, 2) != nil {
			t.Errorf("got %v %v %v", readValue(r, 0), readValue(r, 1), readValue(r, 2))
		}
	}
}
