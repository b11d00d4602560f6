package ingest

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	logspb "go.opentelemetry.io/proto/otlp/logs/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/sediment/sediment/event"
)

// decodeOTLPWhole is the decoding the protobuf path replaces, kept as the
// reference it must agree with: proto.Unmarshal of the whole LogsData,
// then the same conversion.
func decodeOTLPWhole(d *Decoder, body []byte) (OTLPLogs, error) {
	d.proto.reset()
	var data logspb.LogsData
	if err := proto.Unmarshal(body, &data); err != nil {
		return OTLPLogs{}, err
	}
	c := otlpConverter{d: d}
	var out OTLPLogs
	for _, rl := range data.ResourceLogs {
		out.Resources = append(out.Resources, c.resourceLogs(rl, &out))
	}
	return out, nil
}

// otlpOutcome describes a decode for comparison.
func otlpOutcome(logs OTLPLogs, err error) string {
	if err != nil {
		return "error"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "rejected %d %q\n", logs.Rejected, logs.Reason)
	for _, r := range logs.Resources {
		fmt.Fprintf(&b, "resource %q: %s\n", r.ServiceName, eventsJSON(r.Events))
	}
	return b.String()
}

// Wire-building helpers for requests proto.Marshal would not write.
func msgField(num protowire.Number, b []byte) []byte {
	return protowire.AppendBytes(protowire.AppendTag(nil, num, protowire.BytesType), b)
}

func varintField(num protowire.Number, v uint64) []byte {
	return protowire.AppendVarint(protowire.AppendTag(nil, num, protowire.VarintType), v)
}

func concat(parts ...[]byte) []byte { return slices.Concat(parts...) }

// otlpWireSeeds are protobuf requests that exercise the framing: fields
// out of order, message fields given twice, unexpected wire types, bad
// UTF-8, deep nesting around protobuf's recursion limit.
func otlpWireSeeds(t testing.TB) [][]byte {
	res1 := mustMarshal(t, &resourcepb.Resource{Attributes: []*commonpb.KeyValue{strAttr("service.name", "checkout")}})
	res2 := mustMarshal(t, &resourcepb.Resource{Attributes: []*commonpb.KeyValue{strAttr("host.name", "web-1")}, DroppedAttributesCount: 2})
	scope1 := mustMarshal(t, &commonpb.InstrumentationScope{Name: "s"})
	scope2 := mustMarshal(t, &commonpb.InstrumentationScope{Version: "2", Attributes: []*commonpb.KeyValue{strAttr("a.b", "c")}})
	rec := mustMarshal(t, fullRecord)
	rec2 := mustMarshal(t, &logspb.LogRecord{Body: strVal("second"), SeverityText: "WARN"})
	badUTF8 := mustMarshal(t, &logspb.LogRecord{EventName: "ok"})
	badUTF8 = concat(badUTF8, msgField(3, []byte{0xff, 0xfe}))
	seeds := [][]byte{
		nil,
		{0x0a, 0x00},
		mustMarshal(t, otlpRequest(fullResource, fullRecord)),
		mustMarshal(t, benchOTLP()),
		// The resource after the records, and given twice (merged).
		msgField(1, concat(msgField(2, concat(msgField(2, rec), msgField(1, scope1))), msgField(1, res1), msgField(1, res2))),
		// The scope given twice, around the records; two ScopeLogs.
		msgField(1, concat(msgField(1, res1), msgField(2, concat(msgField(1, scope1), msgField(2, rec), msgField(2, rec2), msgField(1, scope2))), msgField(2, msgField(2, rec2)))),
		// Known fields of the wrong wire type, unknown fields.
		concat(varintField(1, 7), msgField(1, concat(varintField(2, 1), msgField(9, []byte("x")), msgField(2, concat(varintField(1, 3), msgField(2, rec2))))), msgField(5, []byte("unknown"))),
		// Bad UTF-8: in schema_url (both levels), in a record.
		msgField(1, concat(msgField(3, []byte{0xc3}), msgField(2, msgField(2, rec2)))),
		msgField(1, msgField(2, concat(msgField(3, []byte{0xc3}), msgField(2, rec2)))),
		msgField(1, msgField(2, msgField(2, badUTF8))),
		// Truncated framing.
		msgField(1, msgField(2, msgField(2, rec2)))[:10],
	}
	// Nesting around protobuf's recursion limit, in a body, in a resource
	// and in a scope (2 message levels per array, 3 per map).
	for n := 4990; n <= 5000; n += 2 {
		seeds = append(seeds, mustMarshal(t, otlpRequest(nil, &logspb.LogRecord{Body: deepValue(n)})))
	}
	for n := 3325; n <= 3334; n += 3 {
		v := deepMap(n)
		seeds = append(seeds,
			mustMarshal(t, otlpRequest(nil, &logspb.LogRecord{Attributes: []*commonpb.KeyValue{anyAttr("deep", v)}})),
			mustMarshal(t, otlpRequest([]*commonpb.KeyValue{anyAttr("deep", v)}, &logspb.LogRecord{Body: strVal("x")})),
			mustMarshal(t, &logspb.LogsData{ResourceLogs: []*logspb.ResourceLogs{{ScopeLogs: []*logspb.ScopeLogs{{
				Scope: &commonpb.InstrumentationScope{Attributes: []*commonpb.KeyValue{anyAttr("deep", v)}}, LogRecords: []*logspb.LogRecord{{}},
			}}}}}))
	}
	return seeds
}

// deepMap is a map nested n levels deep.
func deepMap(n int) *commonpb.AnyValue {
	v := strVal("bottom")
	for range n {
		v = &commonpb.AnyValue{Value: &commonpb.AnyValue_KvlistValue{KvlistValue: &commonpb.KeyValueList{Values: []*commonpb.KeyValue{anyAttr("k", v)}}}}
	}
	return v
}

// TestOTLPProtobufMatchesWhole: decoding record by record gives what
// decoding the whole message gives (the same events, rejections and
// errors) on requests that exercise the framing.
func TestOTLPProtobufMatchesWhole(t *testing.T) {
	for i, body := range otlpWireSeeds(t) {
		checkOTLPMatchesWhole(t, fmt.Sprint("seed ", i), body)
	}
}

func checkOTLPMatchesWhole(t *testing.T, name string, body []byte) {
	t.Helper()
	got, err := NewDecoder().DecodeOTLPLogs(Request{ContentType: "application/x-protobuf", Body: body})
	if err != nil && !errors.Is(err, ErrMalformed) {
		t.Fatalf("%s: %v is not ErrMalformed", name, err)
	}
	want, werr := decodeOTLPWhole(NewDecoder(), body)
	if g, w := otlpOutcome(got, err), otlpOutcome(want, werr); g != w {
		t.Fatalf("%s: record by record:\n%s(err %v)\nwhole:\n%s(err %v)", name, g, err, w, werr)
	}
}

// FuzzOTLPProtobufMatchesWhole: for any body, decoding record by record
// and decoding the whole message agree.
func FuzzOTLPProtobufMatchesWhole(f *testing.F) {
	for _, s := range otlpWireSeeds(f) {
		if len(s) < 64<<10 {
			f.Add(s)
		}
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		checkOTLPMatchesWhole(t, "input", body)
	})
}

// nestDottedReference is the nesting as it was first written (one
// allocation per level and per split key), kept as the reference the
// allocation-free nestDotted must agree with.
func nestDottedReference(members []event.Value) []event.Value {
	type entry struct {
		segs []string
		v    event.Value
	}
	entries := make([]entry, 0, len(members))
	for _, m := range members {
		segs := []string{m.Key}
		if n := strings.Count(m.Key, "."); n > 0 && n < maxKeySegments {
			if s := strings.Split(m.Key, "."); !slices.Contains(s, "") {
				segs = s
			}
		}
		entries = append(entries, entry{segs, m})
	}
	slices.SortStableFunc(entries, func(a, b entry) int { return slices.Compare(a.segs, b.segs) })
	var build func(es []entry, level int) []event.Value
	build = func(es []entry, level int) []event.Value {
		out := make([]event.Value, 0, len(es))
		for i := 0; i < len(es); {
			seg := es[i].segs[level]
			j := i + 1
			for j < len(es) && es[j].segs[level] == seg {
				j++
			}
			group := es[i:j]
			i = j
			if len(group[0].segs) == level+1 {
				for _, e := range group {
					if len(e.segs) == level+1 {
						out = append(out, event.Member(seg, e.v))
					} else {
						out = append(out, event.Member(strings.Join(e.segs[level:], "."), e.v))
					}
				}
				continue
			}
			out = append(out, event.Member(seg, event.ObjectValue(build(group, level+1)...)))
		}
		return out
	}
	return build(entries, 0)
}

func checkNestDotted(t *testing.T, keys []string) {
	t.Helper()
	members := make([]event.Value, len(keys))
	for i, k := range keys {
		members[i] = event.Member(k, event.IntValue(int64(i)))
	}
	c := otlpConverter{d: NewDecoder()}
	got := event.AppendJSON(nil, event.ObjectValue(c.nestDotted(slices.Clone(members))...))
	want := event.AppendJSON(nil, event.ObjectValue(nestDottedReference(members)...))
	if string(got) != string(want) {
		t.Fatalf("keys %q:\n got  %s\n want %s", keys, got, want)
	}
}

// TestNestDottedMatchesReference: the nesting agrees with the reference
// on chosen key sets and on random ones over a small alphabet (so that
// prefixes, duplicates and empty segments are frequent).
func TestNestDottedMatchesReference(t *testing.T) {
	for _, keys := range [][]string{
		{"a.b", "a", "a..c", "a.b.c"},
		{"http.request.method", "http.response.status_code", "url.path", "user.id", "duration_ms", "region"},
		{"a.b", "a.b", "a.c", "a"},
		{".a", "a.", "", ".", "a.b"},
		{strings.Repeat("x.", 15) + "x", strings.Repeat("x.", 14) + "x", "x"},
		{"b.a", "a.b", "b", "a.b.c.d", "a.b.c"},
	} {
		checkNestDotted(t, keys)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []string{"a", "b", ".", "a.", ".b", "ab"}
	for range 2000 {
		keys := make([]string, rng.IntN(8)+1)
		for i := range keys {
			var k strings.Builder
			for range rng.IntN(6) {
				k.WriteString(alphabet[rng.IntN(len(alphabet))])
			}
			keys[i] = k.String()
		}
		checkNestDotted(t, keys)
	}
}

// FuzzNestDotted: the nesting agrees with the reference on any keys
// (separated by newlines in the input).
func FuzzNestDotted(f *testing.F) {
	f.Add("a.b\na\na..c\na.b.c")
	f.Add("http.request.method\nhttp.response.status_code\nurl.path")
	f.Fuzz(func(t *testing.T, s string) {
		keys := strings.Split(s, "\n")
		if len(keys) > 256 {
			keys = keys[:256]
		}
		checkNestDotted(t, keys)
	})
}

// TestOTLPDecodeAllocs: a warm decoder allocates, per record, only what
// protobuf allocates to decode the record into its generated type (the
// messages and strings of its attributes and body): the conversion into
// events allocates nothing of its own. (It was 57 allocations a record,
// 27 of them the conversion's.)
func TestOTLPDecodeAllocs(t *testing.T) {
	body := mustMarshal(t, benchOTLP())
	d := NewDecoder()
	req := Request{ContentType: "application/x-protobuf", Body: body}
	perRequest := testing.AllocsPerRun(20, func() {
		if logs, err := d.DecodeOTLPLogs(req); err != nil || logs.Records() != benchRecords {
			t.Fatal(err)
		}
	})
	// What protobuf makes of one such record, decoded on its own.
	rec := mustMarshal(t, benchOTLP().ResourceLogs[0].ScopeLogs[0].LogRecords[7])
	var m logspb.LogRecord
	protoOnly := testing.AllocsPerRun(100, func() {
		if err := proto.Unmarshal(rec, &m); err != nil {
			t.Fatal(err)
		}
	})
	perRecord := perRequest / benchRecords
	t.Logf("%.1f allocations a record; protobuf alone makes %.0f of a record", perRecord, protoOnly)
	if perRecord > protoOnly+1 {
		t.Fatalf("%.1f allocations a record, want at most protobuf's own %.0f + 1", perRecord, protoOnly)
	}
}
