package lql_test

import (
	"fmt"
	"time"

	"github.com/sediment/sediment/lql"
)

func Example() {
	opts := lql.Options{Now: time.Date(2024, 3, 15, 10, 30, 0, 0, time.UTC)}
	q, err := lql.Parse(`error m.response.status_code:>=500 -m.request.method:OPTIONS t:last@15m`, opts)
	if err != nil {
		fmt.Println(err)
		return
	}
	canonical, _ := lql.Encode(q)
	fmt.Println(canonical)
	sql, _ := lql.ToSQL(q, "cloudflare.logs.prod", lql.SQLOptions{Limit: 100})
	fmt.Println(sql)
	// Output:
	// error m.response.status_code:>=500 -m.request.method:OPTIONS t:last@15minute
	// SELECT t.timestamp, t.id, t.event_message FROM `cloudflare.logs.prod` AS t CROSS JOIN UNNEST(t.metadata) AS m0 CROSS JOIN UNNEST(m0.response) AS m1 LEFT JOIN UNNEST(m0.request) AS m2 ON TRUE WHERE STRPOS(t.event_message, 'error') > 0 AND m1.status_code >= 500 AND (m2.method IS NULL OR NOT (m2.method = 'OPTIONS')) AND t.timestamp BETWEEN TIMESTAMP_MICROS(1710497700000000) AND TIMESTAMP_MICROS(1710498600000000) ORDER BY t.timestamp DESC, t.id DESC LIMIT 100
}

func ExampleForSandbox() {
	q, _ := lql.Parse(`m.status:500 f:edge_logs`, lql.Options{})
	sql, err := lql.ForSandbox(q, []string{"edge_logs", "postgres_logs"})
	fmt.Println(sql, err)
	q, _ = lql.Parse(`m.status:500`, lql.Options{})
	_, err = lql.ForSandbox(q, []string{"edge_logs", "postgres_logs"})
	fmt.Println(err)
	// Output:
	// SELECT m0.status AS metadata_status FROM edge_logs AS t CROSS JOIN UNNEST(t.metadata) AS m0 WHERE m0.status = 500 <nil>
	// Multiple CTEs available (edge_logs, postgres_logs). You must specify which one to query using `f:name`
}
