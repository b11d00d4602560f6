package fuzz

import (
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/sediment/sediment/bench"
	"github.com/sediment/sediment/bench/gen"
	"github.com/sediment/sediment/catalog"
	"github.com/sediment/sediment/lql"
	"github.com/sediment/sediment/sql/parser"
)

// sqlSeeds are the queries Sediment serves: the seeded endpoints, the
// Studio suite of the benchmark, and constructs from the parser's tests.
func sqlSeeds() []string {
	var out []string
	for _, ep := range catalog.SupabaseEndpoints() {
		out = append(out, *ep.Query)
	}
	suite := bench.StudioSuite(bench.SuiteOptions{Project: "default", Now: fixedNow, Sources: gen.AllSources()})
	for _, q := range suite {
		if s := q.Params["sql"]; s != "" {
			out = append(out, s)
		}
	}
	return append(out,
		`select id, timestamp, event_message from edge_logs where id = '5f8c6a2e' limit 1;`,
		`with dates as (select timestamp_trunc(timestamp_sub(current_timestamp(), interval 60 minute), minute) as ts)
select d.ts as timestamp, ifnull(c.count, 0) as count from dates d
left join (select timestamp_trunc(t.timestamp, minute) as ts, count(*) as count from edge_logs t group by 1) c on d.ts = c.ts
order by timestamp`,
		`select (h.cf_cache_status = 'HIT') as cached, count(*) as c, safe_divide(countif(x >= 400), count(*)) as r
from edge_logs cross join unnest(metadata) as m left join unnest(m.response) as h on true group by 1 having count(*) > 10`,
		`select row_number() over (partition by p order by t desc) as rn, lag(t) over (order by t rows between 5 preceding and current row) from x qualify rn <= 3`,
		`select 'a' as k, 1 as v union all select 'b', 2 union all select "c", 3 order by 2 desc limit 2 offset 1`,
		`select a::text, cast(b as int64), SAFE_CAST(c AS FLOAT64), d not like '%x%', e between 1 and 2, f in (1, 2), g not in ('a'), h is not null, dates[0] from t`,
		"select `log_type`, count(*) from `cloudflare.logs.prod` group by `log_type`, -- comment\n",
		`select format_timestamp('%Y-%m-%d', timestamp), json_value(event_message, '$.a'), extract(hour from timestamp at time zone 'UTC'), date_diff(current_date(), date(timestamp), day) from t`,
		`select case when @p = '' then true else x > cast(@p as timestamp) end, array(select 1), exists(select 1 from t), (select max(a) from t) from t`,
		`select * except (a) from t`, `select`, `select (((((((((1)))))))))`, `'unterminated`,
	)
}

// FuzzSQLParse: the BigQuery-dialect parser. Every error is a *parser.Error
// or *parser.ValidationError; whatever parses formats to SQL that parses to
// an equal tree, and formatting that tree again gives the same text.
func FuzzSQLParse(f *testing.F) {
	for _, s := range sqlSeeds() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, sql string) {
		if len(sql) > 64<<10 {
			t.Skip()
		}
		q, err := parser.Parse(sql)
		if err != nil {
			var perr *parser.Error
			var verr *parser.ValidationError
			if !errors.As(err, &perr) && !errors.As(err, &verr) {
				t.Fatalf("Parse error %T: %v", err, err)
			}
			return
		}
		text := parser.Format(q)
		q2, err := parser.Parse(text)
		if err != nil {
			t.Fatalf("formatted query does not parse: %v\ninput: %q\nformatted: %q", err, sql, text)
		}
		if !parser.Equal(q, q2) {
			t.Fatalf("parse → format → parse changed the tree\ninput: %q\nformatted: %q", sql, text)
		}
		if again := parser.Format(q2); again != text {
			t.Fatalf("formatting is not stable:\n%q\n%q", text, again)
		}
	})
}

// lqlSeeds are LQL searches as Studio, the benchmark and Logflare's docs
// write them.
func lqlSeeds() []string {
	return []string{
		"", "error", `"connection refused"`, `~"rest/v1/[a-z_]+\?select"`, `~^GET`, `-error`,
		"f:edge_logs m.response.status_code:500",
		"m.request.method:POST m.response.status_code:>=400",
		"m.response.status_code:400..499 -m.request.path:~health",
		"t:>2024-01-01 t:<=2024-01-02T10:00:00Z", "t:last@5m", "t:today", "t:2022-04-{07..09}T00:{00..40}:00.{001..314}",
		"metadata.level:info..error", "m.tags:@>prod", "m.tags:@>~pro", "m.user.id:NULL", "m.x:-1.5 m.y:true",
		"c:count(*) c:group_by(t::minute)", "c:avg(m.latency) c:group_by(t::hour) f:edge_logs",
		"s:m.request.path s:event_message@msg m.status:500", `project:"abc" "quoted \" phrase" word`,
		"m.a.b.c.d:>=10 m.a:<3 -~x", "from:postgres_logs m.parsed.error_severity:ERROR",
	}
}

// FuzzLQLParse: the LQL parser. Errors are *lql.Error; what parses encodes
// to text that parses to an equal query, and translates to SQL (plain and
// sandboxed) that the SQL parser accepts.
func FuzzLQLParse(f *testing.F) {
	for _, s := range lqlSeeds() {
		f.Add(s)
	}
	opts := lql.Options{Now: fixedNow, Location: time.UTC}
	f.Fuzz(func(t *testing.T, in string) {
		if len(in) > 64<<10 {
			t.Skip()
		}
		q, err := lql.Parse(in, opts)
		if err != nil {
			var lerr *lql.Error
			if !errors.As(err, &lerr) {
				t.Fatalf("Parse(%q) error %T: %v", in, err, err)
			}
			return
		}
		enc, err := lql.Encode(q)
		if err != nil {
			t.Fatalf("Encode(Parse(%q)): %v", in, err)
		}
		q2, err := lql.Parse(enc, opts)
		if err != nil {
			t.Fatalf("encoded query does not parse: %v\ninput: %q\nencoded: %q", err, in, enc)
		}
		if !reflect.DeepEqual(q, q2) {
			t.Fatalf("parse → encode → parse changed the query\ninput: %q\nencoded: %q\n%+v\n%+v", in, enc, q, q2)
		}
		if sql, err := lql.ToSQL(q, "src", lql.SQLOptions{Limit: 10}); err == nil {
			if _, err := parser.Parse(sql); err != nil {
				t.Fatalf("ToSQL gave SQL that does not parse: %v\ninput: %q\nsql: %s", err, in, sql)
			}
		}
		if sql, err := lql.ForSandbox(q, []string{"edge_logs", "postgres_logs"}); err == nil {
			if _, err := parser.Parse(sql); err != nil {
				t.Fatalf("ForSandbox gave SQL that does not parse: %v\ninput: %q\nsql: %s", err, in, sql)
			}
		}
	})
}
