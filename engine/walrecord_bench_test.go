package engine

import (
	"fmt"
	"testing"

	"github.com/klauspost/compress/s2"

	"github.com/sediment/sediment/event"
)

// BenchmarkWALRecordEncode measures compressing a write-ahead log record
// of about 1 MiB of platform edge events (a chunk of a large request, see
// batchChunkBytes) with the block encoders s2 offers: "s2" is what
// appendWALRecord uses. ratio is the record's compressed size over its
// payload's; cpu-ns/op is the process's CPU time per record, steadier
// than ns/op on a shared machine; in-B/event and out-B/event are the
// payload's and the record's bytes per event.
//
// "s2-short-keys" bounds what a batch-level key table (each key path
// written once per record, events referring to it by number) could save
// in compression: the same events with every member name cut to one or
// two letters, about the bytes a key number would take.
//
//	go test ./engine -run '^$' -bench WALRecordEncode -count 6 | tee new.txt
func BenchmarkWALRecordEncode(b *testing.B) {
	evs, _ := edgeEvents(b, 1000, 31)
	batch := &Batch{maxFields: 1 << 20}
	for i := range evs {
		batch.Add(&evs[i])
	}
	payload := batch.buf[batchCountRoom:]
	short := shortKeyPayload(evs)
	for _, enc := range []struct {
		name    string
		fn      func(dst, src []byte) []byte
		payload []byte
	}{
		{"s2", s2.Encode, payload},
		{"s2-snappy", s2.EncodeSnappy, payload},
		{"s2-better", s2.EncodeBetter, payload},
		{"s2-short-keys", s2.Encode, short},
	} {
		b.Run(enc.name, func(b *testing.B) {
			dst := make([]byte, s2.MaxEncodedLen(len(enc.payload)))
			var n int
			b.SetBytes(int64(len(enc.payload)))
			b.ReportAllocs()
			cpu := processCPU()
			for b.Loop() {
				n = len(enc.fn(dst, enc.payload))
			}
			b.ReportMetric(float64(processCPU()-cpu)/float64(b.N), "cpu-ns/op")
			b.ReportMetric(float64(n)/float64(len(enc.payload)), "ratio")
			b.ReportMetric(float64(len(enc.payload))/float64(len(evs)), "in-B/event")
			b.ReportMetric(float64(n)/float64(len(evs)), "out-B/event")
		})
	}
}

// shortKeyPayload returns a record's payload for evs (the count, then the
// events) with every member name replaced by a short one, the same name
// for the same key.
func shortKeyPayload(evs []event.Event) []byte {
	names := map[string]string{}
	var rename func(v *event.Value)
	rename = func(v *event.Value) {
		for i := range v.Kids {
			k := &v.Kids[i]
			if v.Kind == event.Object {
				s, ok := names[k.Key]
				if !ok {
					s = shortName(len(names))
					names[k.Key] = s
				}
				k.Key = s
			}
			rename(k)
		}
	}
	out := []byte{0} // room for a one-byte count: the size is what matters
	for i := range evs {
		e := evs[i].Clone()
		rename(&e.Fields)
		out = event.AppendEvent(out, e)
	}
	return out
}

// shortName is the i-th of a, b, ..., z, A, ..., Z, then two letters.
func shortName(i int) string {
	const letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	if i < len(letters) {
		return letters[i : i+1]
	}
	return fmt.Sprintf("%c%c", letters[(i/len(letters)-1)%len(letters)], letters[i%len(letters)])
}
