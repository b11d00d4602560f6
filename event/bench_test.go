package event

import (
	"os"
	"testing"
	"time"
)

func loadEdgeEvent(b *testing.B) []byte {
	data, err := os.ReadFile("testdata/edge_event.json")
	if err != nil {
		b.Fatal(err)
	}
	return data
}

// BenchmarkParse measures a reused Parser on a ~1.2 KB Supabase edge event.
// The goccy/go-json comparison lives in httpapi/ingest (BenchmarkEdgeEventParse),
// which is the only layer allowed to import it.
func BenchmarkParse(b *testing.B) {
	data := loadEdgeEvent(b)
	var p Parser
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		p.Reset()
		if _, err := p.Parse(data); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseFresh(b *testing.B) {
	data := loadEdgeEvent(b)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(data); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAppendJSON(b *testing.B) {
	v, err := Parse(loadEdgeEvent(b))
	if err != nil {
		b.Fatal(err)
	}
	buf := AppendJSON(nil, v)
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	for b.Loop() {
		buf = AppendJSON(buf[:0], v)
	}
}

// BenchmarkNormalize measures Normalize on a parsed edge event (its null
// referer forces a cleaning copy along one path), with a fixed id generator
// so the figure is Normalize's own cost; .../normalizer reuses an arena;
// .../uuid includes UUIDv4 generation.
func BenchmarkNormalize(b *testing.B) {
	v, err := Parse(loadEdgeEvent(b))
	if err != nil {
		b.Fatal(err)
	}
	v.Delete("id") // force id generation
	now := time.Date(2025, 7, 10, 12, 0, 6, 0, time.UTC)
	b.Run("fixed-id", func(b *testing.B) {
		opts := NormalizeOptions{NewID: func() string { return "00000000-0000-4000-8000-000000000000" }}
		b.ReportAllocs()
		for b.Loop() {
			Normalize(v, now, opts)
		}
	})
	b.Run("normalizer", func(b *testing.B) {
		opts := NormalizeOptions{NewID: func() string { return "00000000-0000-4000-8000-000000000000" }}
		var n Normalizer
		b.ReportAllocs()
		for b.Loop() {
			n.Reset()
			n.Normalize(v, now, opts)
		}
	})
	b.Run("uuid", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			Normalize(v, now, NormalizeOptions{})
		}
	})
	b.Run("normalizer-uuid", func(b *testing.B) {
		var n Normalizer
		b.ReportAllocs()
		for b.Loop() {
			n.Reset()
			n.Normalize(v, now, NormalizeOptions{})
		}
	})
}

func BenchmarkCodec(b *testing.B) {
	v, err := Parse(loadEdgeEvent(b))
	if err != nil {
		b.Fatal(err)
	}
	e, _ := Normalize(v, time.Date(2025, 7, 10, 12, 0, 6, 0, time.UTC), NormalizeOptions{})
	enc := AppendEvent(nil, e)
	b.Run("encode", func(b *testing.B) {
		b.SetBytes(int64(len(enc)))
		b.ReportAllocs()
		buf := enc[:0:0]
		for b.Loop() {
			buf = AppendEvent(buf[:0], e)
		}
	})
	b.Run("decode", func(b *testing.B) {
		b.SetBytes(int64(len(enc)))
		b.ReportAllocs()
		for b.Loop() {
			if _, _, err := DecodeEvent(enc); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.ReportMetric(float64(len(enc)), "bytes/event")
}

// BenchmarkEventDecoder measures a reused EventDecoder on an encoded edge
// event (what the engine's committer does for every event it stages).
func BenchmarkEventDecoder(b *testing.B) {
	v, err := Parse(loadEdgeEvent(b))
	if err != nil {
		b.Fatal(err)
	}
	e, _ := Normalize(v, time.Date(2025, 7, 10, 12, 0, 6, 0, time.UTC), NormalizeOptions{})
	enc := AppendEvent(nil, e)
	var d EventDecoder
	b.SetBytes(int64(len(enc)))
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := d.Decode(enc); err != nil {
			b.Fatal(err)
		}
	}
}
