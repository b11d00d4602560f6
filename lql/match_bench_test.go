package lql

import (
	"testing"
	"time"

	ev "github.com/sediment/sediment/event"
)

// edgeEvent is shaped like a Supabase cloudflare.logs.prod event.
func edgeEvent() ev.Event {
	return ev.Event{
		ID:         "6c1f1c5e-6f1a-4c55-9e2c-3f0a3b1d2e4f",
		Timestamp:  at("2024-03-15T10:30:00.123456Z"),
		Message:    "GET | 502 | 203.0.113.7 | 8f4c2d1e9a7b6c5d | https://abcdefghijklmnop.supabase.co/rest/v1/todos?select=*&order=id.desc | Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7)",
		HasMessage: true,
		Fields: obj(
			"project", "abcdefghijklmnop",
			"metadata", arr(obj(
				"logflare_worker", arr(obj("worker_id", "ZKX1M2")),
				"request", arr(obj(
					"method", "GET",
					"host", "abcdefghijklmnop.supabase.co",
					"path", "/rest/v1/todos",
					"protocol", "https:",
					"search", "?select=*&order=id.desc",
					"url", "https://abcdefghijklmnop.supabase.co/rest/v1/todos?select=*&order=id.desc",
					"cf", arr(obj("asn", 13335, "city", "Amsterdam", "country", "NL", "colo", "AMS", "tlsVersion", "TLSv1.3", "httpProtocol", "HTTP/2")),
					"headers", arr(obj(
						"accept", "application/json",
						"cf_connecting_ip", "203.0.113.7",
						"cf_ipcountry", "NL",
						"cf_ray", "8f4c2d1e9a7b6c5d",
						"host", "abcdefghijklmnop.supabase.co",
						"referer", "https://app.example.com/",
						"user_agent", "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/122.0 Safari/537.36",
						"x_forwarded_proto", "https",
						"x_real_ip", "203.0.113.7",
					)),
				)),
				"response", arr(obj(
					"origin_time", 87,
					"status_code", 502,
					"headers", arr(obj("content_type", "application/json", "cf_cache_status", "DYNAMIC", "date", "Fri, 15 Mar 2024 10:30:00 GMT")),
				)),
			)),
		),
	}
}

func benchMatch(b *testing.B, query string, want bool) {
	q, err := Parse(query, Options{Now: time.Date(2024, 3, 15, 10, 45, 0, 0, time.UTC)})
	if err != nil {
		b.Fatal(err)
	}
	m, err := Compile(q)
	if err != nil {
		b.Fatal(err)
	}
	e := edgeEvent()
	if got := m.Match(&e); got != want {
		b.Fatalf("Match = %v, want %v", got, want)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		m.Match(&e)
	}
}

// BenchmarkMatch measures five-clause filters against one edge event; every
// clause is evaluated (the event matches).
//
//	go test -run '^$' -bench Match -count 6 ./lql (match.go) | tee new.txt
func BenchmarkMatch(b *testing.B) {
	b.Run("clauses=5/literal", func(b *testing.B) {
		benchMatch(b, `m.response.status_code:>=500 m.request.method:GET -m.request.headers.user_agent:~bot project:abcdefghijklmnop t:last@1h`, true)
	})
	b.Run("clauses=5/word+regex", func(b *testing.B) {
		benchMatch(b, `rest m.response.status_code:500..599 m.request.path:~"^/rest/v\d+/" -m.request.cf.country:US t:last@1h`, true)
	})
	b.Run("clauses=5/first-fails", func(b *testing.B) {
		benchMatch(b, `m.response.status_code:200 m.request.method:GET -m.request.headers.user_agent:~bot project:abcdefghijklmnop t:last@1h`, false)
	})
}
