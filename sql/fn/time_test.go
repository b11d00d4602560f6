package fn

import (
	"testing"

	"github.com/sediment/sediment/internal/vec"
)

func TestCivilCalendar(t *testing.T) {
	for _, d := range []int64{minDate, -1, 0, 1, 59, 365, 11016, 19723, maxDate} {
		y, m, dd := civilFromDays(d)
		if back := daysFromCivil(y, m, dd); back != d {
			t.Errorf("day %d -> %d-%d-%d -> %d", d, y, m, dd, back)
		}
	}
	if y, m, d := civilFromDays(minDate); y != 1 || m != 1 || d != 1 {
		t.Errorf("minDate = %d-%d-%d", y, m, d)
	}
	if y, m, d := civilFromDays(maxDate); y != 9999 || m != 12 || d != 31 {
		t.Errorf("maxDate = %d-%d-%d", y, m, d)
	}
	if weekday(0) != 4 {
		t.Errorf("1970-01-01 is a Thursday, got %d", weekday(0))
	}
}

func TestCurrentTime(t *testing.T) {
	runCases(t, []fnCase{
		c("current_timestamp", tsV(testNow.UnixMicro())),
		c("current_date", date("2024-05-06")),
		c("current_date", date("2024-05-06"), "America/Los_Angeles"),
		c("current_date", date("2024-05-05"), "-08"),
		c("current_datetime", dt("2024-05-06 09:08:09.123456"), "+02:00"),
		c("current_datetime", dt("2024-05-06 07:08:09.123456")),
		c("current_date", errWant("Invalid time zone"), "Mars/Olympus"),
	})
}

func TestAddSubDiff(t *testing.T) {
	runCases(t, []fnCase{
		c("timestamp_add", ts("2008-12-25 15:40:00+00"), ts("2008-12-25 15:30:00+00"), ival{10, "MINUTE"}),
		c("timestamp_sub", ts("2008-12-25 15:20:00+00"), ts("2008-12-25 15:30:00+00"), ival{10, "MINUTE"}),
		c("timestamp_sub", ts("2024-05-05 07:08:09.123456"), ts("2024-05-06 07:08:09.123456"), ival{1, "DAY"}),
		c("timestamp_add", ts("2008-12-25 15:30:00.001+00"), "2008-12-25 15:30:00+00", ival{1, "MILLISECOND"}),
		c("timestamp_add", errWant("TIMESTAMP_ADD does not support the MONTH date part"), ts("2024-01-01"), ival{1, "MONTH"}),
		c("timestamp_add", errWant("timestamp overflow"), ts("9999-12-31 00:00:00"), ival{2, "DAY"}),
		safeC("timestamp_add", nil, ts("9999-12-31 00:00:00"), ival{2, "DAY"}),
		c("datetime_add", dt("2008-12-25 15:40:00"), dt("2008-12-25 15:30:00"), ival{10, "MINUTE"}),
		c("datetime_add", dt("2024-02-29 10:00:00"), dt("2024-01-31 10:00:00"), ival{1, "MONTH"}),
		c("datetime_sub", dt("2023-12-31 23:59:59"), dt("2024-01-01 00:00:00"), ival{1, "SECOND"}),
		c("date_add", date("2008-12-30"), date("2008-12-25"), ival{5, "DAY"}),
		c("date_sub", date("2008-12-20"), date("2008-12-25"), ival{5, "DAY"}),
		c("date_add", date("2024-02-29"), date("2024-01-31"), ival{1, "MONTH"}),
		c("date_add", date("2023-02-28"), date("2023-01-31"), ival{1, "MONTH"}),
		c("date_add", date("2025-02-28"), date("2024-02-29"), ival{1, "YEAR"}),
		c("date_add", date("2025-02-28"), date("2024-11-30"), ival{1, "QUARTER"}),
		c("date_sub", date("2023-11-29"), date("2024-02-29"), ival{1, "QUARTER"}),
		c("date_add", date("2024-01-15"), date("2024-01-01"), ival{2, "WEEK"}),
		c("date_add", date("2008-12-30"), "2008-12-25", ival{5, "DAY"}),
		c("date_add", errWant("DATE_ADD does not support the HOUR date part"), date("2024-01-01"), ival{1, "HOUR"}),
		c("date_add", ts("2024-01-02"), ts("2024-01-01"), ival{1, "DAY"}),
		c("date_add", errWant("date overflow"), date("9999-12-31"), ival{1, "DAY"}),
		c("timestamp_diff", 13410, ts("2010-07-07 10:20:00+00"), ts("2008-12-25 15:30:00+00"), part{"HOUR", ""}),
		c("timestamp_diff", -61, ts("2018-08-14"), ts("2018-10-14"), part{"DAY", ""}),
		c("timestamp_diff", 0, "2001-02-01 01:00:00", "2001-02-01 00:00:01", part{"HOUR", ""}),
		c("timestamp_diff", -1, ts("1969-12-31 23:59:59"), ts("1970-01-01 00:00:00.5"), part{"SECOND", ""}),
		c("timestamp_diff", errWant("TIMESTAMP_DIFF does not support the WEEK date part"), ts("2024-01-01"), ts("2024-01-01"), part{"WEEK", ""}),
		c("datetime_diff", 559, dt("2010-07-07 10:20:00"), dt("2008-12-25 15:30:00"), part{"DAY", ""}),
		c("datetime_diff", 1, dt("2017-10-15 00:00:00"), dt("2017-10-14 00:00:00"), part{"DAY", ""}),
		c("datetime_diff", 1, dt("2017-10-15 00:00:00"), dt("2017-10-14 00:00:00"), part{"WEEK", ""}),
		c("datetime_diff", 3, "2017-12-30 00:00:00", "2014-12-30 00:00:00", part{"YEAR", ""}),
		c("datetime_diff", 2, "2017-12-30 00:00:00", "2014-12-30 00:00:00", part{"ISOYEAR", ""}),
		c("datetime_diff", 0, dt("2017-12-18 00:00:00"), dt("2017-12-17 00:00:00"), part{"WEEK", ""}),
		c("datetime_diff", 1, dt("2017-12-18 00:00:00"), dt("2017-12-17 00:00:00"), part{"WEEK", "MONDAY"}),
		c("datetime_diff", 1, dt("2017-12-18 00:00:00"), dt("2017-12-17 00:00:00"), part{"ISOWEEK", ""}),
		c("datetime_diff", 1, dt("2024-01-01 11:00:00"), dt("2024-01-01 10:59:59"), part{"HOUR", ""}),
		c("date_diff", 559, date("2010-07-07"), date("2008-12-25"), part{"DAY", ""}),
		c("date_diff", 1, date("2017-10-15"), date("2017-10-14"), part{"WEEK", ""}),
		c("date_diff", 1, date("2018-01-01"), date("2017-12-31"), part{"MONTH", ""}),
		c("date_diff", 1, date("2018-01-01"), date("2017-12-31"), part{"QUARTER", ""}),
		c("date_diff", 1, date("2018-01-01"), date("2017-12-31"), part{"YEAR", ""}),
		c("date_diff", -12, date("2017-01-01"), date("2018-01-31"), part{"MONTH", ""}),
		c("date_diff", errWant("DATE_DIFF does not support the HOUR date part"), date("2017-01-01"), date("2018-01-31"), part{"HOUR", ""}),
	})
}

func TestTrunc(t *testing.T) {
	runCases(t, []fnCase{
		c("timestamp_trunc", ts("2008-12-25 00:00:00+00"), ts("2008-12-25 15:30:00+00"), part{"DAY", ""}, "UTC"),
		c("timestamp_trunc", ts("2008-12-25 08:00:00+00"), ts("2008-12-25 15:30:00+00"), part{"DAY", ""}, "America/Los_Angeles"),
		c("timestamp_trunc", ts("2017-10-30 00:00:00+00"), ts("2017-11-06 00:00:00+12"), part{"WEEK", "MONDAY"}, "UTC"),
		c("timestamp_trunc", ts("2017-11-05 11:00:00+00"), ts("2017-11-06 00:00:00+12"), part{"WEEK", "MONDAY"}, "Pacific/Auckland"),
		c("timestamp_trunc", ts("2014-12-29 00:00:00+00"), "2015-06-15 00:00:00+00", part{"ISOYEAR", ""}),
		c("timestamp_trunc", ts("2024-01-01 10:11:00"), ts("2024-01-01 10:11:12.5"), part{"MINUTE", ""}),
		c("timestamp_trunc", ts("2024-01-01 10:00:00"), ts("2024-01-01 10:11:12.5"), part{"HOUR", ""}),
		c("timestamp_trunc", ts("2024-01-01 10:30:00"), ts("2024-01-01 10:50:00"), part{"HOUR", ""}, "+05:30"),
		c("timestamp_trunc", ts("1969-12-31 23:59:59"), ts("1969-12-31 23:59:59.5"), part{"SECOND", ""}),
		c("timestamp_trunc", ts("1969-12-31 23:59:00"), ts("1969-12-31 23:59:59.5"), part{"MINUTE", ""}),
		c("timestamp_trunc", ts("2024-01-01 10:11:12.345"), ts("2024-01-01 10:11:12.345678"), part{"MILLISECOND", ""}),
		c("timestamp_trunc", ts("2024-05-05"), ts("2024-05-06 07:00:00"), part{"WEEK", ""}),
		c("timestamp_trunc", ts("2024-04-01"), ts("2024-05-06 07:00:00"), part{"QUARTER", ""}),
		c("timestamp_trunc", ts("2024-01-01"), ts("2024-05-06 07:00:00"), part{"YEAR", ""}),
		c("timestamp_trunc", ts("2024-05-01"), ts("2024-05-06 07:00:00"), part{"MONTH", ""}),
		// Daylight saving: 2024-03-10 in Los Angeles is 23 hours long.
		c("timestamp_trunc", ts("2024-03-10 08:00:00"), ts("2024-03-10 20:00:00"), part{"DAY", ""}, "America/Los_Angeles"),
		c("timestamp_trunc", ts("2024-03-10 10:00:00"), ts("2024-03-10 10:30:00"), part{"HOUR", ""}, "America/Los_Angeles"),
		c("timestamp_trunc", errWant("TIMESTAMP_TRUNC does not support the WEEK(FOO) date part"), ts("2024-01-01"), part{"WEEK", "FOO"}),
		c("timestamp_trunc", errWant("Invalid time zone"), ts("2024-01-01"), part{"DAY", ""}, "Nowhere/City"),
		c("timestamp_trunc", nil, nullOf(vec.Timestamp), part{"DAY", ""}),
		c("datetime_trunc", dt("2008-12-25 00:00:00"), dt("2008-12-25 15:30:00"), part{"DAY", ""}),
		c("datetime_trunc", dt("2017-10-30 00:00:00"), dt("2017-11-05 00:00:00"), part{"WEEK", "MONDAY"}),
		c("datetime_trunc", dt("2014-12-29 00:00:00"), "2015-06-15 00:00:00", part{"ISOYEAR", ""}),
		c("datetime_trunc", dt("2015-06-15 10:00:00"), dt("2015-06-15 10:59:59.9"), part{"HOUR", ""}),
		c("date_trunc", date("2008-12-01"), date("2008-12-25"), part{"MONTH", ""}),
		c("date_trunc", date("2017-10-30"), date("2017-11-05"), part{"WEEK", "MONDAY"}),
		c("date_trunc", date("2017-11-05"), date("2017-11-05"), part{"WEEK", ""}),
		c("date_trunc", date("2014-12-29"), date("2015-06-15"), part{"ISOYEAR", ""}),
		c("date_trunc", date("2015-06-15"), date("2015-06-21"), part{"ISOWEEK", ""}),
		c("date_trunc", date("2015-04-01"), date("2015-06-21"), part{"QUARTER", ""}),
		c("date_trunc", errWant("DATE_TRUNC does not support the HOUR date part"), date("2015-06-15"), part{"HOUR", ""}),
		c("date_trunc", ts("2024-05-06"), ts("2024-05-06 07:08:09"), part{"DAY", ""}),
		c("date_trunc", dt("2024-05-06 07:00:00"), dt("2024-05-06 07:08:09"), part{"HOUR", ""}),
	})
}

func TestUnixAndConstructors(t *testing.T) {
	runCases(t, []fnCase{
		c("timestamp_seconds", ts("2008-12-25 15:30:00+00"), 1230219000),
		c("timestamp_millis", ts("2008-12-25 15:30:00+00"), int64(1230219000000)),
		c("timestamp_micros", ts("2008-12-25 15:30:00+00"), int64(1230219000000000)),
		c("timestamp_seconds", errWant("out of the TIMESTAMP range"), int64(1)<<62),
		c("unix_seconds", 1230219000, ts("2008-12-25 15:30:00+00")),
		c("unix_millis", int64(1230219000000), ts("2008-12-25 15:30:00+00")),
		c("unix_micros", int64(1230219000000000), ts("2008-12-25 15:30:00+00")),
		c("unix_seconds", -1, ts("1969-12-31 23:59:59.5")),
		c("unix_date", 14238, date("2008-12-25")),
		c("date_from_unix_date", date("2008-12-25"), 14238),
		c("date_from_unix_date", errWant("out of the DATE range"), int64(1)<<40),
		c("timestamp", ts("2008-12-25 15:30:00+00"), "2008-12-25 15:30:00+00"),
		c("timestamp", ts("2008-12-25 23:30:00+00"), "2008-12-25 15:30:00", "America/Los_Angeles"),
		c("timestamp", ts("2008-12-25 15:30:00+00"), "2008-12-25 15:30:00+00", "America/Los_Angeles"),
		c("timestamp", ts("2008-12-25 00:00:00+00"), date("2008-12-25")),
		c("timestamp", ts("2008-12-24 16:00:00+00"), date("2008-12-25"), "+08"),
		c("timestamp", ts("2008-12-25 07:30:00+00"), dt("2008-12-25 15:30:00"), "+08"),
		c("timestamp", errWant("Invalid timestamp"), "not a time"),
		c("datetime", dt("2008-12-25 05:30:00"), 2008, 12, 25, 5, 30, 0),
		c("datetime", dt("2008-12-24 21:30:00"), ts("2008-12-25 05:30:00+00"), "America/Los_Angeles"),
		c("datetime", dt("2008-12-25 05:30:00"), ts("2008-12-25 05:30:00+00")),
		c("datetime", dt("2008-12-25 00:00:00"), date("2008-12-25")),
		c("datetime", errWant("invalid datetime"), 2008, 13, 1, 0, 0, 0),
		c("date", date("2016-12-25"), 2016, 12, 25),
		c("date", date("2016-12-25"), dt("2016-12-25 23:59:59")),
		c("date", date("2016-12-24"), ts("2016-12-25 05:30:00+07"), "America/Los_Angeles"),
		c("date", date("2016-12-25"), "2016-12-25"),
		c("date", date("2016-12-25"), "2016-12-25 10:00:00"),
		c("date", errWant("invalid date"), 2016, 2, 30),
		c("date", nil, nullOf(vec.Timestamp)),
	})
}

func TestExtract(t *testing.T) {
	p := func(name string) part { return part{name, ""} }
	cases := []fnCase{
		c("extract", 25, p("DAY"), date("2013-12-25")),
		c("extract", 1, p("DAYOFWEEK"), date("2024-05-05")),
		c("extract", 366, p("DAYOFYEAR"), date("2024-12-31")),
		c("extract", 2, p("QUARTER"), date("2024-05-06")),
		c("extract", 45, part{"WEEK", "SUNDAY"}, date("2017-11-05")),
		c("extract", 44, part{"WEEK", "MONDAY"}, date("2017-11-05")),
		c("extract", 7, p("HOUR"), ts("2008-12-25 15:30:00+00"), "America/Los_Angeles"),
		c("extract", 15, p("HOUR"), ts("2008-12-25 15:30:00+00")),
		c("extract", 123456, p("MICROSECOND"), ts("2024-01-01 10:11:12.123456")),
		c("extract", 123, p("MILLISECOND"), ts("2024-01-01 10:11:12.123456")),
		c("extract", 12, p("SECOND"), ts("2024-01-01 10:11:12.123456")),
		c("extract", 11, p("MINUTE"), dt("2024-01-01 10:11:12")),
		c("extract", date("2024-01-01"), p("DATE"), ts("2024-01-01 10:11:12")),
		c("extract", date("2023-12-31"), p("DATE"), ts("2024-01-01 01:00:00"), "-02:00"),
		c("extract", dt("2024-01-01 10:11:12"), p("DATETIME"), ts("2024-01-01 10:11:12")),
		c("extract", 59, p("SECOND"), ts("1969-12-31 23:59:59.5")),
		c("extract", errWant("does not support the HOUR date part"), p("HOUR"), date("2024-01-01")),
		c("extract", nil, p("DAY"), nullOf(vec.Date)),
	}
	// ISO year and week around a year boundary (BigQuery's documented table).
	for _, r := range []struct {
		d                          string
		isoYear, isoWeek, yr, week int
	}{
		{"2015-12-23", 2015, 52, 2015, 51},
		{"2015-12-31", 2015, 53, 2015, 52},
		{"2016-01-01", 2015, 53, 2016, 0},
		{"2016-01-02", 2015, 53, 2016, 0},
		{"2016-01-03", 2015, 53, 2016, 1},
		{"2016-01-04", 2016, 1, 2016, 1},
	} {
		cases = append(cases,
			c("extract", r.isoYear, p("ISOYEAR"), date(r.d)),
			c("extract", r.isoWeek, p("ISOWEEK"), date(r.d)),
			c("extract", r.yr, p("YEAR"), date(r.d)),
			c("extract", r.week, p("WEEK"), date(r.d)))
	}
	runCases(t, cases)
}

func TestLastDay(t *testing.T) {
	runCases(t, []fnCase{
		c("last_day", date("2008-11-30"), date("2008-11-25")),
		c("last_day", date("2008-11-30"), dt("2008-11-25 15:30:00"), part{"MONTH", ""}),
		c("last_day", date("2008-12-31"), date("2008-11-25"), part{"YEAR", ""}),
		c("last_day", date("2008-11-15"), dt("2008-11-10 15:30:00"), part{"WEEK", "SUNDAY"}),
		c("last_day", date("2008-11-16"), dt("2008-11-10 15:30:00"), part{"WEEK", "MONDAY"}),
		c("last_day", date("2024-02-29"), date("2024-02-10")),
		c("last_day", date("2024-03-31"), date("2024-02-10"), part{"QUARTER", ""}),
		c("last_day", date("2016-01-03"), date("2015-06-10"), part{"ISOYEAR", ""}),
		c("last_day", date("9999-12-31"), date("9999-12-10"), part{"YEAR", ""}),
	})
}
