package fn

import (
	"testing"
)

func TestFormatTime(t *testing.T) {
	x := ts("2008-12-25 15:30:00+00")
	frac := ts("2008-12-25 15:30:05.123400")
	runCases(t, []fnCase{
		c("format_timestamp", "Thu Dec 25 15:30:00 2008", "%c", x, "UTC"),
		c("format_timestamp", "Dec-25-2008", "%b-%d-%Y", x),
		c("format_timestamp", "Dec 2008", "%b %Y", x),
		c("format_timestamp", "2008-12-25T07:30:00-08:00", "%Y-%m-%dT%H:%M:%S%Ez", x, "America/Los_Angeles"),
		c("format_timestamp", "-0800 PST", "%z %Z", x, "America/Los_Angeles"),
		c("format_timestamp", "+0530 UTC+5:30", "%z %Z", x, "+05:30"),
		c("format_timestamp", "+00:00 UTC", "%Ez %Z", x),
		c("format_timestamp", "05.123|05.1234|05.123400|05|05.1234", "%E3S|%E4S|%E6S|%S|%E*S", frac),
		c("format_timestamp", "00", "%E*S", ts("2008-12-25 15:30:00")),
		c("format_timestamp", "1230219000", "%s", x),
		c("format_timestamp", "Thursday Thu December Dec", "%A %a %B %h", x),
		c("format_timestamp", "20 08 2008 08 360 51 52 51 4 4 4", "%C %y %G %g %j %U %V %W %u %w %Q", x),
		c("format_timestamp", "03 03:30:00 PM pm 15:30 15:30:00 12/25/08 2008-12-25", "%I %r %P %R %T %D %F", x),
		c("format_timestamp", "25|25| 3|15", "%d|%e|%l|%k", x),
		c("format_timestamp", " 5| 9| 9", "%e|%k|%l", ts("2008-12-05 05:00:00"), "+04"),
		c("format_timestamp", "a\tb\nc%", "a%tb%nc%%", x),
		c("format_timestamp", "12/25/08 15:30:00", "%x %X", x),
		c("format_timestamp", "0033", "%E4Y", ts("0033-01-01")),
		c("format_timestamp", "33", "%Y", ts("0033-01-01")),
		c("format_timestamp", "", "", x),
		c("format_timestamp", errWant("unsupported format element %J"), "%J", x),
		c("format_timestamp", errWant("ends with a single '%'"), "abc%", x),
		c("format_timestamp", nil, nil, x),
		c("format_datetime", "Thu Dec 25 15:30:00 2008", "%c", dt("2008-12-25 15:30:00")),
		c("format_datetime", "Dec-25-2008", "%b-%d-%Y", dt("2008-12-25 15:30:00")),
		c("format_date", "12/25/08", "%x", date("2008-12-25")),
		c("format_date", "Dec-25-2008", "%b-%d-%Y", date("2008-12-25")),
		c("format_date", "2008-12-25 00:00", "%F %R", date("2008-12-25")),
		c("format_date", "2008 52", "%G %V", "2008-12-25"),
	})
}

func TestParseTime(t *testing.T) {
	runCases(t, []fnCase{
		c("parse_timestamp", ts("2008-12-25 07:30:00+00"), "%c", "Thu Dec 25 07:30:00 2008"),
		c("parse_timestamp", ts("2008-12-25 07:30:00+00"), "%a %b %e %I:%M:%S %Y", "Thu Dec 25 07:30:00 2008"),
		c("parse_timestamp", ts("2023-10-05 14:30:00"), "%Y-%m-%d %H:%M:%S", "2023-10-05 14:30:00"),
		c("parse_timestamp", ts("2023-10-05 12:30:00"), "%Y-%m-%d %H:%M:%S%Ez", "2023-10-05 14:30:00+02:00"),
		c("parse_timestamp", ts("2023-10-05 12:30:00"), "%Y-%m-%d %H:%M:%S%z", "2023-10-05 14:30:00+0200"),
		c("parse_timestamp", ts("2023-10-05 14:30:00"), "%Y-%m-%dT%H:%M:%S%Ez", "2023-10-05T14:30:00Z"),
		c("parse_timestamp", ts("2023-10-05 14:30:00.123456"), "%Y-%m-%d %H:%M:%E*S", "2023-10-05 14:30:00.123456"),
		c("parse_timestamp", ts("2023-10-05 14:30:00.12"), "%Y-%m-%d %H:%M:%E2S", "2023-10-05 14:30:00.12"),
		c("parse_timestamp", ts("2023-10-05 14:30:00"), "%d/%m/%Y %H:%M:%S", "05/10/2023 14:30:00"),
		c("parse_timestamp", ts("2008-12-25 15:30:00+00"), "%s", "1230219000"),
		c("parse_timestamp", ts("2020-06-01 16:00:00"), "%Y-%m-%d %H:%M", "2020-06-01 12:00", "America/New_York"),
		c("parse_timestamp", ts("2020-06-01 19:00:00"), "%Y-%m-%d %H:%M %Z", "2020-06-01 12:00 America/Los_Angeles"),
		c("parse_timestamp", ts("1970-01-01 10:00:00"), "%H", "10"),
		c("parse_timestamp", errWant("mismatch between format character '-' and string character '/'"), "%Y-%m-%d", "2023/10/05"),
		c("parse_timestamp", errWant("trailing data"), "%Y", "2023 x"),
		c("parse_timestamp", errWant("not supported for parsing"), "%V", "12"),
		safeC("parse_timestamp", nil, "%Y-%m-%d", "2023/10/05"),
		c("parse_datetime", dt("2008-12-25 07:30:00"), "%a %b %e %I:%M:%S %Y", "Thu Dec 25 07:30:00 2008"),
		c("parse_datetime", dt("1998-10-18 13:45:55"), "%Y-%m-%d %H:%M:%S", "1998-10-18 13:45:55"),
		c("parse_datetime", dt("2018-08-30 14:23:38"), "%m/%d/%Y %I:%M:%S %p", "8/30/2018 2:23:38 pm"),
		c("parse_datetime", dt("2018-08-30 00:23:38"), "%m/%d/%Y %I:%M:%S %p", "8/30/2018 12:23:38 AM"),
		c("parse_datetime", dt("2018-12-19 00:00:00"), "%A, %B %e, %Y", "Wednesday, December 19, 2018"),
		c("parse_date", date("2008-12-25"), "%x", "12/25/08"),
		c("parse_date", date("2008-12-25"), "%Y%m%d", "20081225"),
		c("parse_date", date("2000-12-30"), "%F", "2000-12-30"),
		c("parse_date", date("2020-01-02"), "%Y %m %d", "  2020   01 02  "),
		c("parse_date", date("2020-01-02"), "%Y %m %d", "2020 0102"),
		c("parse_date", date("1969-01-01"), "%y-%m-%d", "69-01-01"),
		c("parse_date", date("2068-01-01"), "%y-%m-%d", "68-01-01"),
		c("parse_date", date("2108-01-01"), "%C%y-%m-%d", "2108-01-01"),
		c("parse_date", date("2024-02-01"), "%Y %j", "2024 032"),
		c("parse_date", date("2024-12-31"), "%Y %j", "2024 366"),
		c("parse_date", errWant("out of range"), "%Y %j", "2023 366"),
		c("parse_date", date("2024-03-05"), "%b %e %Y", "mar  5 2024"),
		c("parse_date", errWant("the day is out of range"), "%Y-%m-%d", "2020-02-30"),
		c("parse_date", errWant("the month is out of range"), "%Y-%m-%d", "2020-13-01"),
		c("parse_date", errWant("expected a month"), "%Y-%m-%d", "2020--01"),
		c("parse_date", errWant("end of the string"), "%Y-%m-%d", "2020-01"),
		c("parse_date", nil, "%Y", nil),
	})
}

// Formatting and parsing with the same format round-trips.
func TestFormatParseRoundTrip(t *testing.T) {
	for _, f := range []string{"%Y-%m-%d %H:%M:%E6S%Ez", "%c", "%s", "%FT%T%z", "%d %B %Y %I:%M:%S %p"} {
		items, err := compileTimeFormat("T", f)
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range []tsV{ts("2008-12-25 15:30:00"), ts("1999-01-02 03:04:05"), ts("2024-02-29 23:59:59")} {
			text := formatTime(items, timeValue{civ: int64(x), ts: int64(x), zoneName: "UTC"})
			back, err := parseTimeValue("T", items, text, 5 /* vec.Timestamp */, func() (*zone, error) { return utcZone, nil })
			if err != nil {
				t.Errorf("%q: parse %q: %v", f, text, err)
				continue
			}
			if back != int64(x) {
				t.Errorf("%q: %q parsed as %s, want %s", f, text, FormatTimestamp(back), FormatTimestamp(int64(x)))
			}
		}
	}
}
