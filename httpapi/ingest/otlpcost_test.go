package ingest

import (
	"errors"
	"os"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	logspb "go.opentelemetry.io/proto/otlp/logs/v1"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// costShapes are requests of very different costs per byte.
func costShapes() map[string]*logspb.LogsData {
	records := func(n int, mk func(i int) *logspb.LogRecord) []*logspb.LogRecord {
		out := make([]*logspb.LogRecord, n)
		for i := range out {
			out[i] = mk(i)
		}
		return out
	}
	tinyAttrs := make([]*commonpb.KeyValue, 200)
	for i := range tinyAttrs {
		tinyAttrs[i] = strAttr(string(rune('a'+i%26)), "v")
	}
	ctrl := strings.Repeat("\x01", 300)
	structured := &commonpb.AnyValue{Value: &commonpb.AnyValue_KvlistValue{KvlistValue: &commonpb.KeyValueList{Values: []*commonpb.KeyValue{
		strAttr(ctrl, ctrl), anyAttr("n", intVal(-1<<62)),
		anyAttr("list", &commonpb.AnyValue{Value: &commonpb.AnyValue_ArrayValue{ArrayValue: &commonpb.ArrayValue{Values: []*commonpb.AnyValue{
			{}, {Value: &commonpb.AnyValue_DoubleValue{DoubleValue: -1.2345678901234567e-300}}, {Value: &commonpb.AnyValue_BytesValue{BytesValue: []byte{1, 2, 3, 4, 5}}},
		}}}}),
	}}}}
	dotted := make([]*commonpb.KeyValue, 40)
	for i := range dotted {
		dotted[i] = strAttr(strings.Repeat("k.", 15)+strconv.Itoa(i), "v")
	}
	return map[string]*logspb.LogsData{
		"typical records":    benchOTLP(),
		"empty records":      otlpRequest(nil, records(20000, func(int) *logspb.LogRecord { return &logspb.LogRecord{} })...),
		"tiny attributes":    otlpRequest(tinyAttrs, records(50, func(int) *logspb.LogRecord { return &logspb.LogRecord{Attributes: tinyAttrs} })...),
		"structured bodies":  otlpRequest(nil, records(300, func(int) *logspb.LogRecord { return &logspb.LogRecord{Body: structured} })...),
		"dotted keys":        otlpRequest(dotted, records(100, func(int) *logspb.LogRecord { return &logspb.LogRecord{Attributes: dotted} })...),
		"deep bodies":        otlpRequest(nil, records(20, func(int) *logspb.LogRecord { return &logspb.LogRecord{Body: deepValue(maxOTLPDepth - 10)} })...),
		"one large body":     otlpRequest(nil, &logspb.LogRecord{Body: strVal(strings.Repeat("x", 1<<20)), TraceId: make([]byte, 16)}),
		"odd-sized trace id": otlpRequest(nil, records(100, func(int) *logspb.LogRecord { return &logspb.LogRecord{TraceId: make([]byte, 1000)} })...),
	}
}

// TestOTLPCostWireMatchesTree: the count from the wire form and the count
// from the decoded messages agree (on what proto.Marshal writes).
func TestOTLPCostWireMatchesTree(t *testing.T) {
	for name, data := range costShapes() {
		wire, err := otlpWireCost(mustMarshal(t, data))
		if err != nil {
			t.Fatal(name, err)
		}
		tree := otlpTreeCost(data)
		wire.record, wire.resource, wire.scope = 0, 0, 0
		if wire != tree {
			t.Errorf("%s: wire %+v, tree %+v", name, wire, tree)
		}
	}
}

// liveAfter runs fn and returns how much more the heap holds after it,
// collected, while what fn returns is kept.
func liveAfter(fn func() any) int64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	keep := fn()
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(keep)
	return int64(after.HeapAlloc) - int64(before.HeapAlloc)
}

// TestOTLPCostBoundsRetained: what a decode leaves alive (the result, and
// the decoder's reused record and scratch) is within what was charged for
// it, in both encodings and whatever the shape; for typical records the
// charge is not far above it.
func TestOTLPCostBoundsRetained(t *testing.T) {
	for name, data := range costShapes() {
		pb := mustMarshal(t, data)
		js, err := protojson.Marshal(data)
		if err != nil {
			t.Fatal(err)
		}
		for _, enc := range []struct {
			name, ct string
			body     []byte
		}{{"protobuf", "application/x-protobuf", pb}, {"json", "application/json", js}} {
			var charged atomic.Int64
			live := liveAfter(func() any {
				d := NewDecoder()
				logs, err := d.DecodeOTLPLogs(Request{ContentType: enc.ct, Body: enc.body, Charge: func(n int64) bool { charged.Add(n); return true }})
				if err != nil {
					t.Fatal(name, enc.name, err)
				}
				return []any{d, logs}
			})
			t.Logf("%s, %s: body %d B, %d B alive after, %d B charged", name, enc.name, len(enc.body), live, charged.Load())
			if live > charged.Load() {
				t.Errorf("%s, %s: %d bytes alive after the decode, more than the %d charged", name, enc.name, live, charged.Load())
			}
			if name == "typical records" && enc.name == "protobuf" && charged.Load() > 2*live {
				t.Errorf("%s, %s: %d bytes charged for %d alive: the estimate is too loose", name, enc.name, charged.Load(), live)
			}
		}
	}
}

// TestOTLPDecodedSizeLimit: a request that would take more than
// MaxDecodedBytes once decoded (here empty records: two bytes each on the
// wire, about a kilobyte each decoded) is refused with 413 before it is
// decoded; one under the limit is decoded.
func TestOTLPDecodedSizeLimit(t *testing.T) {
	recs := make([]*logspb.LogRecord, 50_000)
	for i := range recs {
		recs[i] = &logspb.LogRecord{}
	}
	body := mustMarshal(t, otlpRequest(nil, recs...))
	d := &Decoder{MaxBodyBytes: 1 << 20, MaxDecodedBytes: 8 << 20}
	var err error
	var ms [2]runtime.MemStats
	runtime.ReadMemStats(&ms[0])
	_, err = d.DecodeOTLPLogs(Request{ContentType: "application/x-protobuf", Body: body})
	runtime.ReadMemStats(&ms[1])
	if !errors.Is(err, ErrTooLarge) || StatusCode(err) != 413 || !strings.Contains(err.Error(), "fewer log records") {
		t.Fatalf("%d-byte body of %d empty records: %v, want 413 ErrTooLarge", len(body), len(recs), err)
	}
	if alloc := ms[1].TotalAlloc - ms[0].TotalAlloc; alloc > 1<<20 {
		t.Fatalf("refusing it allocated %d bytes", alloc)
	}
	d.MaxDecodedBytes = 64 << 20
	if logs, err := d.DecodeOTLPLogs(Request{ContentType: "application/x-protobuf", Body: body}); err != nil || logs.Records() != len(recs) {
		t.Fatalf("under the default limit: %d records, %v", logs.Records(), err)
	}
}

// TestOTLPChargeRefused: when Request.Charge refuses, the decode fails
// with ErrBudget (429) without building the events; when it accepts, it
// was asked for the request's whole cost in one call before decoding.
func TestOTLPChargeRefused(t *testing.T) {
	data := benchOTLP()
	for _, enc := range []struct {
		ct   string
		body []byte
	}{{"application/x-protobuf", mustMarshal(t, data)}, {"application/json", []byte(protojson.Format(data))}} {
		d := NewDecoder()
		var asked []int64
		var ms [2]runtime.MemStats
		runtime.ReadMemStats(&ms[0])
		_, err := d.DecodeOTLPLogs(Request{ContentType: enc.ct, Body: enc.body, Charge: func(n int64) bool { asked = append(asked, n); return false }})
		runtime.ReadMemStats(&ms[1])
		if !errors.Is(err, ErrBudget) || StatusCode(err) != 429 || len(asked) != 1 {
			t.Fatalf("%s: %v after %d charges, want ErrBudget (429) after one", enc.ct, err, len(asked))
		}
		if alloc := int64(ms[1].TotalAlloc - ms[0].TotalAlloc); alloc > asked[0]/10 {
			t.Fatalf("%s: refused, yet %d bytes allocated (the charge asked %d)", enc.ct, alloc, asked[0])
		}
	}
}

// heapPeak samples the heap's objects (runtime/metrics, no stop-the-world)
// while fn runs, and returns the peak above the heap before it.
func heapPeak(fn func()) (peak int64) {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	read := func() int64 {
		metrics.Read(sample)
		return int64(sample[0].Value.Uint64())
	}
	runtime.GC()
	base := read()
	var max atomic.Int64
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(100 * time.Microsecond)
		defer t.Stop()
		for {
			if h := read(); h > max.Load() {
				max.Store(h)
			}
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	})
	fn()
	close(done)
	wg.Wait()
	return max.Load() - base
}

// TestOTLPPeakHeap decodes a protobuf request of typical records (2 MB;
// SEDIMENT_OTLP_PEAK_MB=12 for Logflare's largest) and reports the peak
// heap: record by record, and decoding the whole message as before. The
// peak stays within what the collector lets a live heap of the charged
// size grow to (twice it, GOGC=100), with the body.
func TestOTLPPeakHeap(t *testing.T) {
	mb := 2
	if v, err := strconv.Atoi(os.Getenv("SEDIMENT_OTLP_PEAK_MB")); err == nil && v > 0 {
		mb = v
	}
	proto1 := benchOTLP()
	per := proto.Size(proto1)
	data := &logspb.LogsData{ResourceLogs: []*logspb.ResourceLogs{proto1.ResourceLogs[0]}}
	sl := data.ResourceLogs[0].ScopeLogs[0]
	batch := sl.LogRecords
	for proto.Size(data)+per < mb*1_000_000 {
		sl.LogRecords = append(sl.LogRecords, batch...)
	}
	body := mustMarshal(t, data)
	cost, err := otlpWireCost(body)
	if err != nil {
		t.Fatal(err)
	}
	records := len(sl.LogRecords)
	data, proto1, sl, batch = nil, nil, nil, nil

	whole := heapPeak(func() {
		logs, err := decodeOTLPWhole(NewDecoder(), body)
		if err != nil || logs.Records() != records {
			t.Fatal(err)
		}
	})
	var charged int64
	split := heapPeak(func() {
		logs, err := NewDecoder().DecodeOTLPLogs(Request{ContentType: "application/x-protobuf", Body: body, Charge: func(n int64) bool { charged += n; return true }})
		if err != nil || logs.Records() != records {
			t.Fatal(err)
		}
	})
	t.Logf("%d-byte request, %d records: peak heap %.1f MB record by record (%.1f MB charged), %.1f MB decoding the whole message",
		len(body), records, float64(split)/1e6, float64(charged)/1e6, float64(whole)/1e6)
	if charged != cost.total() {
		t.Fatalf("charged %d, want the cost %d", charged, cost.total())
	}
	if bound := 2 * (charged + int64(len(body))); split > bound {
		t.Fatalf("peak heap %d bytes, over twice the charged size and the body (%d)", split, bound)
	}
}
