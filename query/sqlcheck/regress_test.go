package sqlcheck

import (
	"slices"
	"testing"

	"github.com/sediment/sediment/catalog"
	"github.com/sediment/sediment/lql"
	"github.com/sediment/sediment/sql"
)

// regression is a query that once failed a check, kept so that the bug
// stays fixed: it must run in every form (no panic, no internal error) and
// give the same rows in each, and at least the rows given.
type regression struct {
	name    string
	sandbox bool // a consumer query of logs.all
	params  map[string]string
	sql     string
	lql     string // instead of sql: an lql= query, translated as the endpoint does
	minRows int
	// same, when set, is another form of the query that must give the same
	// rows (for bugs every variant shares).
	same string
}

var regressions = []regression{
	{
		// Issue 13: sorting (the CTE's ORDER BY) copied an array of
		// records as scalars: index out of range.
		name: "storage context through logs.all", sandbox: true, params: map[string]string{"project": "default"},
		sql:     "select c.host, c.pid from storage_logs cross join unnest(metadata) as m cross join unnest(m.context) as c",
		minRows: 100,
	},
	{
		name: "storage context in LQL", sandbox: true, params: map[string]string{"project": "default"},
		lql:     "f:storage_logs m.context.pid:1 m.level:info",
		minRows: 10,
	},
	{
		// Found by TestMetamorphic with the fix above reverted: the same
		// panic through a LEFT JOIN UNNEST and an ad-hoc CTE.
		name: "generated: context through an ordered CTE and LEFT JOINs",
		sql: "with c as (select t.timestamp, t.id, t.event_message, t.metadata from `storage.logs.prod.2` as t order by t.timestamp desc, t.id)\n" +
			"select t.timestamp as c0, ifnull(m.reqId, 'none') as c1, m.level as c2, u1.pid as c3, t.id as cid\n" +
			"from c as t\nleft join unnest(t.metadata) as m on true\nleft join unnest(m.context) as u1 on true\n" +
			"where (regexp_contains(m.project, 'defaul') or lower(m.level) = lower('/rest/v1/')) or not (lower(m.status) = lower('info'))",
		minRows: 100,
	},
	{
		// Found by TLP: a sort took a column's type from the batch of the
		// first row it output; a UNION ALL branch that never had the field
		// (an Unknown vector) made the other branch's values NULL.
		name: "ORDER BY a field of a UNION ALL that one branch lacks",
		sql: "select t.timestamp as c0, m.request_id as c2, t.id as cid\n" +
			"from (select t1.timestamp, t1.id, t1.metadata from `gotrue.logs.prod` as t1 union all select t2.timestamp, t2.id, t2.metadata from `pgbouncer.logs.prod` as t2) as t\n" +
			"left join unnest(t.metadata) as m on true\norder by c0, c2, cid desc",
		same: "select t.timestamp as c0, m.request_id as c2, t.id as cid\n" +
			"from (select t1.timestamp, t1.id, t1.metadata from `gotrue.logs.prod` as t1 union all select t2.timestamp, t2.id, t2.metadata from `pgbouncer.logs.prod` as t2) as t\n" +
			"left join unnest(t.metadata) as m on true",
		minRows: 500,
	},
	{
		// Found by the generator: a field read through a UNION ALL became
		// a new column each time it was named, so GROUP BY 1 did not match
		// the SELECT's ("neither grouped nor aggregated").
		name: "GROUP BY a field of a UNION ALL",
		sql: "select m.project_ref as k0, count(*) as n\n" +
			"from (select t1.timestamp, t1.id, t1.metadata from `deno-relay-logs` as t1 union all select t2.timestamp, t2.id, t2.metadata from `postgREST.logs.prod` as t2) as t\n" +
			"cross join unnest(t.metadata) as m\ngroup by 1 order by k0",
		minRows: 3,
	},
	{
		// Found with NoRewrites: without the presence-filter rewrite a
		// CROSS JOIN UNNEST of an object needs the object to drop rows,
		// but column pruning removed it ("record alias source missing").
		name:    "cross join unnest of an object read only through fields",
		sql:     "select t.id, r.path from `cloudflare.logs.prod` as t cross join unnest(t.metadata) as m cross join unnest(m.request) as r where r.path like '/rest%'",
		minRows: 10,
	},
}

func TestRegressions(t *testing.T) {
	db := openDB(t)
	var ctes []string
	for _, s := range catalog.SupabaseSources() {
		ctes = append(ctes, s.CTE)
	}
	for _, rg := range regressions {
		t.Run(rg.name, func(t *testing.T) {
			text := rg.sql
			if rg.lql != "" {
				lq, err := lql.Parse(rg.lql, lql.Options{Now: db.now})
				if err != nil {
					t.Fatal(err)
				}
				if text, err = lql.ForSandbox(lq, ctes); err != nil {
					t.Fatal(err)
				}
			}
			q := &query{sandbox: rg.sandbox, params: rg.params}
			want := db.run(q, text, sql.Options{})
			if want.err != nil {
				t.Fatalf("%v\n%s", want.err, text)
			}
			if len(want.rows) < rg.minRows {
				t.Fatalf("%d rows, want at least %d: the case no longer tests what it did", len(want.rows), rg.minRows)
			}
			if rg.same != "" {
				other := db.run(q, rg.same, sql.Options{})
				if other.err != nil {
					t.Fatal(other.err)
				}
				if w, g := sortedRows(other.rows), sortedRows(want.rows); !slices.Equal(w, g) {
					t.Errorf("the two forms differ: %s", diffRows(w, g))
				}
			}
			for _, v := range variants {
				got := db.run(q, text, v.opts)
				if got.err != nil {
					t.Fatalf("%s: %v", v.name, got.err)
				}
				if w, g := sortedRows(want.rows), sortedRows(got.rows); !slices.Equal(w, g) {
					t.Errorf("%s: %s", v.name, diffRows(w, g))
				}
			}
		})
	}
}
