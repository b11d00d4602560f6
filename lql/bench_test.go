package lql

import "testing"

const benchQuery = `error m.response.status_code:>=500 -m.request.method:OPTIONS m.request.headers.user_agent:~"(?i)bot" project:abcdefghijklmnop t:last@15m c:count(*) c:group_by(t::minute)`

// BenchmarkParse parses a typical UI query (six filters and a chart).
//
//	go test -run '^$' -bench . -count 6 ./lql | tee new.txt
func BenchmarkParse(b *testing.B) {
	b.ReportAllocs()
	b.SetBytes(int64(len(benchQuery)))
	for b.Loop() {
		if _, err := Parse(benchQuery, testOpts); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkToSQL translates the same query.
func BenchmarkToSQL(b *testing.B) {
	q, err := Parse(benchQuery, testOpts)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ToSQL(q, "cloudflare.logs.prod", SQLOptions{Limit: 100}); err != nil {
			b.Fatal(err)
		}
	}
}
