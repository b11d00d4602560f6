package search

import (
	"errors"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/sediment/sediment/lql"
)

// maxTimeText bounds the text ParseTime looks at: the longest form it
// accepts (RFC 3339 with nanoseconds and an offset) is 35 bytes.
const maxTimeText = 64

// ParseTime reads a search range bound: an integer is unix microseconds
// (as the search returns timestamps); otherwise an ISO-8601 date
// (2024-03-15) or date-time (2024-03-15T10:30:00, with an optional
// fraction and an optional Z or ±hh:mm offset). Values without an offset
// are read in loc (UTC when nil). A date alone is its midnight, or with
// endOfDay its last microsecond, so that to=2024-03-15 includes that day.
//
// A `+` in an offset that arrived as a space (an unencoded query string)
// is accepted.
func ParseTime(s string, loc *time.Location, endOfDay bool) (int64, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, errors.New("empty time")
	}
	if len(s) > maxTimeText {
		return 0, errors.New("time value is too long")
	}
	if loc == nil {
		loc = time.UTC
	}
	if isInteger(s) {
		us, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return 0, errors.New("time " + strconv.Quote(s) + " is out of range")
		}
		return us, nil
	}
	if len(s) == len("2006-01-02") {
		t, err := time.ParseInLocation("2006-01-02", s, loc)
		if err != nil {
			return 0, badTime(s)
		}
		if endOfDay {
			return t.AddDate(0, 0, 1).UnixMicro() - 1, nil
		}
		return t.UnixMicro(), nil
	}
	// A space for the 'T' (2024-03-15 10:30:00), and an offset's '+'
	// decoded as a space (10:30:00 02:00).
	if len(s) > 10 && s[10] == ' ' {
		s = s[:10] + "T" + s[11:]
	}
	if i := strings.LastIndexByte(s, ' '); i > len("2006-01-02") {
		s = s[:i] + "+" + s[i+1:]
	}
	for _, layout := range [...]string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999", "2006-01-02T15:04"} {
		var t time.Time
		var err error
		if layout == time.RFC3339Nano {
			t, err = time.Parse(layout, s)
		} else {
			t, err = time.ParseInLocation(layout, s, loc)
		}
		if err == nil {
			return t.UnixMicro(), nil
		}
	}
	return 0, badTime(s)
}

func badTime(s string) error {
	return errors.New("expected an ISO-8601 date or date-time, or unix microseconds, got " + strconv.Quote(s))
}

func isInteger(s string) bool {
	if s[0] == '-' {
		s = s[1:]
	}
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// timeBounds narrows [lo, hi] (inclusive, µs) by the query's positive
// timestamp filters; negated ones do not bound the range. Empty when lo >
// hi.
func timeBounds(q *lql.Query, lo, hi int64) (int64, int64) {
	for i := range q.Filters {
		f := &q.Filters[i]
		if f.Path != "timestamp" || f.Negate {
			continue
		}
		v := f.Value.Int
		ok := f.Value.Kind == lql.KindTimestamp
		switch f.Op {
		case lql.OpEq:
			if ok {
				lo, hi = max(lo, v), min(hi, v)
			}
		case lql.OpGt:
			if ok && v < math.MaxInt64 {
				lo = max(lo, v+1)
			}
		case lql.OpGte:
			if ok {
				lo = max(lo, v)
			}
		case lql.OpLt:
			if ok && v > math.MinInt64 {
				hi = min(hi, v-1)
			}
		case lql.OpLte:
			if ok {
				hi = min(hi, v)
			}
		case lql.OpRange:
			if len(f.Values) == 2 && f.Values[0].Kind == lql.KindTimestamp && f.Values[1].Kind == lql.KindTimestamp {
				lo, hi = max(lo, f.Values[0].Int), min(hi, f.Values[1].Int)
			}
		}
	}
	return lo, hi
}

// DefaultPeriod picks a chart bucket for a span of span microseconds, for
// a chart whose LQL names no c:group_by: about 300 buckets or fewer for
// spans up to 5 minutes (seconds), 6 hours (minutes), 7 days (hours), and
// days beyond.
func DefaultPeriod(span int64) lql.Period {
	switch {
	case span <= (5 * time.Minute).Microseconds():
		return lql.PeriodSecond
	case span <= (6 * time.Hour).Microseconds():
		return lql.PeriodMinute
	case span <= (7 * 24 * time.Hour).Microseconds():
		return lql.PeriodHour
	}
	return lql.PeriodDay
}

// periodMicros is the length of a bucket.
func periodMicros(p lql.Period) int64 {
	switch p {
	case lql.PeriodSecond:
		return 1e6
	case lql.PeriodMinute:
		return 60e6
	case lql.PeriodHour:
		return 3600e6
	}
	return 86400e6
}
