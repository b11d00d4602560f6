package fn

import (
	"testing"

	"github.com/sediment/sediment/internal/vec"
)

func TestArrayFunctions(t *testing.T) {
	runCases(t, []fnCase{
		c("array_length", 3, arr(vec.Int64, 1, 2, 3)),
		c("array_length", 0, arr(vec.Int64)),
		c("array_length", nil, nil),
		c("array_length", errWant("No matching signature"), "abc"),
		c("array_to_string", "a--b--c", arr(vec.String, "a", "b", nil, "c"), "--"),
		c("array_to_string", "a--b--MISSING--c", arr(vec.String, "a", "b", nil, "c"), "--", "MISSING"),
		c("array_to_string", "", arr(vec.String), ","),
		c("array_to_string", "1,2", arr(vec.Int64, 1, 2), ","),
		c("array_to_string", nil, arr(vec.String, "a"), nil),
		c("array_reverse", []any{3, 2, 1}, arr(vec.Int64, 1, 2, 3)),
		c("array_reverse", []any{"b", nil}, arr(vec.String, nil, "b")),
		c("array_concat", []any{1, 2, 3}, arr(vec.Int64, 1, 2), arr(vec.Int64, 3)),
		c("array_concat", []any{1}, arr(vec.Int64), arr(vec.Int64, 1)),
		c("array_concat", nil, arr(vec.Int64, 1), nil),
		c("array_concat", errWant("No matching signature"), arr(vec.Int64, 1), arr(vec.String, "a")),
		c("generate_array", []any{1, 2, 3, 4, 5}, 1, 5),
		c("generate_array", []any{0, 3, 6, 9}, 0, 10, 3),
		c("generate_array", []any{10, 7, 4, 1}, 10, 0, -3),
		c("generate_array", []any{4}, 4, 4, 10),
		c("generate_array", []any{}, 4, 1),
		c("generate_array", []any{0.0, 0.25, 0.5, 0.75, 1.0}, 0, 1, 0.25),
		c("generate_array", errWant("step cannot be 0"), 1, 5, 0),
		c("generate_array", errWant("more than 1000000 elements"), 1, 10000000),
		c("generate_array", nil, 1, nil),
		c("generate_date_array", []any{date("2016-10-05"), date("2016-10-06"), date("2016-10-07"), date("2016-10-08")},
			date("2016-10-05"), date("2016-10-08")),
		c("generate_date_array", []any{date("2016-10-05"), date("2016-10-07"), date("2016-10-09")},
			"2016-10-05", "2016-10-09", ival{2, "DAY"}),
		c("generate_date_array", []any{date("2016-01-31"), date("2016-02-29"), date("2016-03-31"), date("2016-04-30"), date("2016-05-31")},
			date("2016-01-31"), date("2016-05-31"), ival{1, "MONTH"}),
		c("generate_date_array", []any{date("2016-10-05"), date("2016-10-04"), date("2016-10-03")},
			date("2016-10-05"), date("2016-10-03"), ival{-1, "DAY"}),
		c("generate_date_array", []any{}, date("2016-10-05"), date("2016-10-01")),
		c("generate_date_array", errWant("does not support the HOUR date part"), date("2016-10-05"), date("2016-10-01"), ival{1, "HOUR"}),
		c("generate_timestamp_array", []any{ts("2016-10-05"), ts("2016-10-06"), ts("2016-10-07")},
			ts("2016-10-05"), ts("2016-10-07"), ival{1, "DAY"}),
		c("generate_timestamp_array", []any{ts("2016-10-05 00:00:00"), ts("2016-10-05 00:00:01"), ts("2016-10-05 00:00:02")},
			"2016-10-05 00:00:00", "2016-10-05 00:00:02.5", ival{1, "SECOND"}),
		c("generate_timestamp_array", errWant("more than 1000000 elements"), ts("2016-10-05"), ts("2017-10-05"), ival{1, "MILLISECOND"}),
		c("generate_timestamp_array", errWant("does not support the MONTH date part"), ts("2016-10-05"), ts("2016-10-07"), ival{1, "MONTH"}),
		c("generate_timestamp_array", errWant("step cannot be 0"), ts("2016-10-05"), ts("2016-10-07"), ival{0, "DAY"}),
	})
}

func TestNetHost(t *testing.T) {
	runCases(t, []fnCase{
		c("net.host", "a.b", "//user:password@a.b:80/path?query"),
		c("net.host", "[::1]", "https://[::1]:80"),
		c("net.host", "例子.卷筒纸.中国", "http://例子.卷筒纸.中国"),
		c("net.host", "www.Example.Co.UK", "    www.Example.Co.UK    "),
		c("net.host", "mailto", "mailto:?to=&subject=&body="),
		c("net.host", "example.com", "https://example.com/a/b#frag"),
		c("net.host", nil, ""),
	})
}

func TestGenerateUUID(t *testing.T) {
	f, _ := Lookup("generate_uuid")
	b, err := f.Bind(nil, BindInfo{})
	if err != nil {
		t.Fatal(err)
	}
	r, err := b.Eval(testEvalCtx(), nil, nil, 3)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Strs[0]) != 36 || r.Strs[0] == r.Strs[1] {
		t.Errorf("uuids %q", r.Strs)
	}
}

func TestRestrictedFunctionsAbsent(t *testing.T) {
	for _, name := range []string{"session_user", "external_query"} {
		if _, ok := Lookup(name); ok {
			t.Errorf("%s is registered", name)
		}
	}
}
