package fn

import (
	"testing"

	"github.com/sediment/sediment/internal/vec"
)

// Fuzz targets for every parser in the package. Seeds come from the tests.
// Run one with: go test ./sql/fn -run '^$' -fuzz FuzzFormat -fuzztime 30s

const maxFuzzInput = 4096

func FuzzFormat(f *testing.F) {
	for _, s := range []string{"%d", "|%10d|", "+%010d+", "%'d", "-%s-", "%f %E", "%t", "%T", "%x %X %#x %o",
		"%'x", "%.2f", "%g", "%#g", "%*d", "%.*f", "%5s|%-5s|", "%.3t", "%%", "%", "%99999d", "%+ -#0'12.5d"} {
		f.Add(s, int64(42), 3.25, "abc")
	}
	f.Fuzz(func(t *testing.T, format string, i int64, x float64, s string) {
		if len(format) > maxFuzzInput {
			return
		}
		specs, nargs, err := compileFormat(format)
		if err != nil {
			return
		}
		var vs []*vec.Vector
		for _, sp := range specs {
			if sp.verb == 0 {
				continue
			}
			if sp.widthStar {
				vs = append(vs, vec.ConstInt(vec.Int64, i%200, 1))
			}
			if sp.precStar {
				vs = append(vs, vec.ConstInt(vec.Int64, i%50, 1))
			}
			switch sp.verb {
			case 'd', 'i', 'o', 'x', 'X':
				vs = append(vs, vec.ConstInt(vec.Int64, i, 1))
			case 'f', 'F', 'e', 'E', 'g', 'G':
				vs = append(vs, vec.ConstFloat(x, 1))
			default:
				vs = append(vs, vec.ConstString(s, 1))
			}
		}
		if len(vs) != nargs {
			t.Fatalf("%q: %d arguments built, compileFormat says %d", format, len(vs), nargs)
		}
		out, _, _ := formatRow(nil, specs, vs, 0)
		if len(out) > len(format)+len(specs)*(2*maxFormatWidth+len(s)+400) {
			t.Fatalf("%q: output of %d bytes", format, len(out))
		}
	})
}

func FuzzTimeFormat(f *testing.F) {
	for _, p := range [][2]string{
		{"%c", "Thu Dec 25 07:30:00 2008"},
		{"%Y-%m-%d %H:%M:%S%Ez", "2023-10-05 14:30:00+02:00"},
		{"%Y-%m-%d %H:%M:%E*S", "2023-10-05 14:30:00.123456"},
		{"%s", "1230219000"},
		{"%m/%d/%Y %I:%M:%S %p", "8/30/2018 2:23:38 pm"},
		{"%A, %B %e, %Y", "Wednesday, December 19, 2018"},
		{"%Y %j", "2024 366"},
		{"%C%y-%m-%d", "2108-01-01"},
		{"%Y-%m-%d %H:%M %Z", "2020-06-01 12:00 America/Los_Angeles"},
		{"%E4Y %E3S %G %V %U %W %u %w %Q %k %l", "x"},
		{"%", ""},
	} {
		f.Add(p[0], p[1])
	}
	f.Fuzz(func(t *testing.T, format, input string) {
		if len(format) > maxFuzzInput || len(input) > maxFuzzInput {
			return
		}
		items, err := compileTimeFormat("F", format)
		if err != nil {
			return
		}
		for _, x := range []int64{0, minTimestamp, maxTimestamp, 1230219000123456} {
			formatTime(items, timeValue{civ: x, ts: x, offSec: -28800, zoneName: "PST"})
		}
		for _, typ := range []vec.Type{vec.Timestamp, vec.Datetime, vec.Date} {
			r, err := parseTimeValue("F", items, input, typ, func() (*zone, error) { return utcZone, nil })
			if err == nil && typ == vec.Timestamp && !validTimestamp(r) {
				t.Fatalf("%q %q: out-of-range timestamp %d", format, input, r)
			}
		}
	})
}

func FuzzJSONPath(f *testing.F) {
	doc := `{"class": {"students": [{"name": "Jane"}]}, "a.b": 1, "k\"ey": [1, "x", null]}`
	for _, p := range []string{"$", "$.a", "$.class.students[0].name", `$."a.b"`, "$['a.b']", `$["k\"ey"][2]`,
		"a", "$.", "$[a]", "$..a", `$."a`, "$[999999999]"} {
		f.Add(p, doc)
	}
	f.Add("$.a", `{"a": [1, 2`)
	f.Add("$[0]", `[[[[[[`)
	f.Fuzz(func(t *testing.T, path, doc string) {
		if len(path) > maxFuzzInput || len(doc) > 4*maxFuzzInput {
			return
		}
		if steps, err := parseJSONPath("F", path); err == nil {
			jsonScalar(doc, steps, false)
			jsonQuery(doc, steps, true)
			if start, end, ok := jsonFind(doc, steps); ok {
				if start < 0 || end > len(doc) || start >= end {
					t.Fatalf("span [%d, %d) of %d bytes", start, end, len(doc))
				}
				if doc[start] == '[' {
					_ = jsonArrayElems(doc[start:end], func(string) error { return nil })
				}
			}
		}
		jsonContainsFold(doc, "x", "JSON_KEYS_AND_VALUES")
		if validateJSON(doc) == nil {
			if err := validateJSON(compactJSON(doc)); err != nil {
				t.Fatalf("compactJSON(%q) is invalid: %v", doc, err)
			}
			if err := validateJSON(prettyJSON(doc)); err != nil {
				t.Fatalf("prettyJSON(%q) is invalid: %v", doc, err)
			}
		}
	})
}

func FuzzParseTimestamp(f *testing.F) {
	for _, s := range []string{"2024-01-01 00:00:00+00", "2024-01-01T00:00:00Z", "2024-01-01T00:00:00.123456+02:00",
		"2024-01-01 12:00:00", "2024-01-01", "2024-1-2 3:04:05", "2024-01-01 00:00:00 America/Los_Angeles",
		"2024-01-01 00:00:00.123456789Z", "2024-13-01", "abc", "9999-12-31 23:59:59.999999", "0001-01-01 00:00:00+14"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if len(s) > maxFuzzInput {
			return
		}
		if x, err := ParseTimestamp(s); err == nil {
			if !validTimestamp(x) {
				t.Fatalf("%q: out of range %d", s, x)
			}
			back, err := ParseTimestamp(FormatTimestamp(x))
			if err != nil || back != x {
				t.Fatalf("%q -> %d -> %q -> %d, %v", s, x, FormatTimestamp(x), back, err)
			}
		}
		if d, err := ParseDate(s); err == nil {
			if back, err := ParseDate(FormatDate(d)); err != nil || back != d {
				t.Fatalf("date %q round trip: %d %v", s, back, err)
			}
		}
		if dt, err := ParseDatetime(s); err == nil {
			if back, err := ParseDatetime(FormatDatetime(dt)); err != nil || back != dt {
				t.Fatalf("datetime %q round trip: %d %v", s, back, err)
			}
		}
	})
}
