package engine

import (
	"testing"

	"github.com/klauspost/compress/s2"
)

// BenchmarkWALRecordEncode measures compressing a write-ahead log record
// of about 1 MiB of platform edge events (a chunk of a large request, see
// batchChunkBytes) with the block encoders s2 offers: "s2" is what
// appendWALRecord uses. ratio is the record's compressed size over its
// payload's; cpu-ns/op is the process's CPU time per record, steadier
// than ns/op on a shared machine.
//
//	go test ./engine -run '^$' -bench WALRecordEncode -count 6 | tee new.txt
func BenchmarkWALRecordEncode(b *testing.B) {
	evs, _ := edgeEvents(b, 1000, 31)
	batch := &Batch{maxFields: 1 << 20}
	for i := range evs {
		batch.Add(&evs[i])
	}
	payload := batch.buf[batchCountRoom:]
	for _, enc := range []struct {
		name string
		fn   func(dst, src []byte) []byte
	}{
		{"s2", s2.Encode},
		{"s2-snappy", s2.EncodeSnappy},
		{"s2-better", s2.EncodeBetter},
	} {
		b.Run(enc.name, func(b *testing.B) {
			dst := make([]byte, s2.MaxEncodedLen(len(payload)))
			var n int
			b.SetBytes(int64(len(payload)))
			b.ReportAllocs()
			cpu := processCPU()
			for b.Loop() {
				n = len(enc.fn(dst, payload))
			}
			b.ReportMetric(float64(processCPU()-cpu)/float64(b.N), "cpu-ns/op")
			b.ReportMetric(float64(n)/float64(len(payload)), "ratio")
		})
	}
}
