package parser

import (
	"reflect"
	"testing"
)

func TestParameters(t *testing.T) {
	cases := []struct {
		sql  string
		want []string
	}{
		{"select a from t", nil},
		{"select @a", []string{"a"}},
		{"select @b, @a, @b", []string{"b", "a"}},
		{"select @Project, @project", []string{"Project", "project"}},
		{"select a from t where x = @x limit @lim offset @off", []string{"x", "lim", "off"}},
		{"select coalesce(case when @a = '' then @b else @c end, @d) from t", []string{"a", "b", "c", "d"}},
		{"with c as (select @in_cte as v) select v from c where v in (select @in_sub) order by @ord", []string{"in_cte", "in_sub", "ord"}},
		{"select a from t cross join unnest(@arr) as u join s on s.x = @on group by @g having count(*) > @h", []string{"arr", "on", "g", "h"}},
		{"select sum(x) over (partition by @p order by @o rows between @n preceding and current row) from t", []string{"p", "o", "n"}},
		{"select `some.function`(@c), timestamp_sub(current_timestamp(), interval @n hour), x[offset(@i)]", []string{"c", "n", "i"}},
		{"select 1 union all select @second union all select @first", []string{"second", "first"}},
		{"select 'not @a param', `@nor_this` from t -- @nor_that", nil},
		{logsAllSQL(), []string{"project", "iso_timestamp_start", "iso_timestamp_end"}},
		{apiCountsSQL, []string{"interval", "project"}},
		{invocationStatsSQL, []string{"function_id", "project", "interval"}},
	}
	for _, tc := range cases {
		got := Parameters(mustParse(t, tc.sql))
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Parameters(%.60q) = %v, want %v", tc.sql, got, tc.want)
		}
	}
}
