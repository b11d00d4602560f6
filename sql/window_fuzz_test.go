package sql_test

import "testing"

// FuzzWindowSQL runs arbitrary text as a query against the fixture sources:
// window calls, frames and QUALIFY must bind or fail with an error, never
// panic.
func FuzzWindowSQL(f *testing.F) {
	for _, q := range []string{
		"select id, row_number() over (partition by project order by timestamp desc) as rn from `cloudflare.logs.prod` qualify rn <= 2",
		"select project, count(*) as n, sum(count(*)) over () as total from `cloudflare.logs.prod` group by project",
		"select id, lag(id, 2, 'x') over (order by timestamp) as p, lead(timestamp) over (order by timestamp) as n from `cloudflare.logs.prod`",
		"select id, sum(1) over (order by unix_seconds(timestamp) range between 600 preceding and 60 following) as s from `cloudflare.logs.prod`",
		"select id, avg(2.5) over (partition by project order by timestamp rows between 3 preceding and 1 following) as a from `cloudflare.logs.prod`",
		"select id, ntile(4) over (order by id) as q, percent_rank() over (order by id) as p, cume_dist() over (order by id) as c from `cloudflare.logs.prod`",
		"select id, first_value(severity ignore nulls) over (order by id rows between unbounded preceding and unbounded following) as f, nth_value(id, 3) over (order by id) as n from `cloudflare.logs.prod`",
		"select distinct project, count(distinct id) over (partition by project) as c from `cloudflare.logs.prod`",
		"select id from `cloudflare.logs.prod` order by rank() over (order by timestamp) limit 3",
		"select id, max(id) over (order by timestamp rows between 2 preceding and 2 following) as m from `cloudflare.logs.prod` where false",
	} {
		f.Add(q)
	}
	db := supabaseDB(f)
	f.Fuzz(func(t *testing.T, q string) {
		if len(q) > 4096 {
			return
		}
		db.query(t, q, nil)
	})
}
