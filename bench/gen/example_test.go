package gen_test

import (
	"fmt"
	"time"

	"github.com/sediment/sediment/bench/gen"
)

// A self-hosted Kong access line, as Vector POSTs it to
// /api/logs?source_name=cloudflare.logs.prod.
func ExampleNew() {
	src, _ := gen.SourceByName("cloudflare.logs.prod")
	g := gen.New(src, gen.Options{Seed: 1})
	fmt.Println(g.Time())
	fmt.Println(string(g.AppendEvent(nil)))
	// Output:
	// 2025-07-10 12:00:00 +0000 UTC
	// {"appname":"supabase-kong","event_message":"16.164.130.42 - - [10/Jul/2025:12:00:00 +0000] \"POST /auth/v1/token?grant_type=refresh_token HTTP/1.1\" 200 1086 \"-\" \"Dart/3.4 (dart:io)\"","metadata":{"request":{"headers":{"cf_connecting_ip":"16.164.130.42","referer":null,"user_agent":"Dart/3.4 (dart:io)"},"method":"POST","path":"/auth/v1/token?grant_type=refresh_token","protocol":"HTTP/1.1"},"response":{"status_code":200}},"project":"default","timestamp":"2025-07-10T12:00:00Z"}
}

// A body of two platform PostgREST events with millisecond timestamps, as a
// pino-style client would send them.
func ExampleGenerator_AppendVectorBatch() {
	g := gen.New(gen.PostgRESTLogs, gen.Options{
		Seed:       2,
		Shape:      gen.Platform,
		Projects:   3,
		Start:      time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC),
		Timestamps: gen.TimestampMillis,
	})
	fmt.Println(string(g.AppendVectorBatch(nil, 2)))
	// Output:
	// [{"event_message":"Connection 0f835415-265d-4c95-bf61-cc85dffe530a is used","metadata":{"host":"db-frofgdhnpfmwrzrdmdfd"},"project":"frofgdhnpfmwrzrdmdfd","timestamp":1735689600000},{"event_message":"Schema cache loaded","metadata":{"host":"db-frofgdhnpfmwrzrdmdfd"},"project":"frofgdhnpfmwrzrdmdfd","timestamp":1735689600018}]
}
