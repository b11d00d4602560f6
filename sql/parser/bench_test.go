package parser

import (
	"testing"
)

// Benchmarks of the parser on Studio- and Logflare-shaped queries.
//
//	go test ./sql/parser -run '^$' -bench . -benchmem -count 6 | tee parser.bench
//	benchstat parser.bench
var benchQueries = []namedSQL{
	{"edge_logs_list_343B", studioQueries[0].sql},
	{"api_counts_1.6KB", apiCountsSQL},
	{"unified_logs_2KB", unifiedLogsSQL},
	{"logs_all_4.6KB", logsAllSQL()},
}

func BenchmarkParse(b *testing.B) {
	for _, q := range benchQueries {
		b.Run(q.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(q.sql)))
			for b.Loop() {
				if _, err := Parse(q.sql); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkValidate(b *testing.B) {
	// Studio's queries read logs.all's CTE names; here every name is a source.
	anySource := ValidateOptions{KnownSource: func(string) bool { return true }}
	for _, q := range benchQueries {
		b.Run(q.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(q.sql)))
			for b.Loop() {
				if _, err := Validate(q.sql, anySource); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkSandboxLogsAll(b *testing.B) {
	endpoint := logsAllSQL()
	consumer := studioQueries[0].sql
	b.ReportAllocs()
	b.SetBytes(int64(len(endpoint) + len(consumer)))
	for b.Loop() {
		if _, err := Sandbox(endpoint, consumer, supabaseOpts); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkLex(b *testing.B) {
	b.ReportAllocs()
	b.SetBytes(int64(len(unifiedLogsSQL)))
	sc := new(scratch)
	for b.Loop() {
		if _, err := lex(unifiedLogsSQL, sc); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkFormat(b *testing.B) {
	q, err := Parse(unifiedLogsSQL)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		_ = Format(q)
	}
}
