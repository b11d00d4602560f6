package event

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// transcodeSeeds are array bodies for the differential test of
// TranscodeEvent against the tree's way: the normaliser's rules, every
// reason to leave an element to the tree, and malformed JSON of each kind.
func transcodeSeeds() []string {
	seeds := []string{
		`[{"a":1]`, `[{"a":1}`, `[{"a":1},]`, `[{"a" 1}]`, `[{"a":1,}]`, `[{"a":[1,]}]`, `[{"a":{"b":1]}]`,
		`[{"a":[1}]`, `[{"a":tru}]`, `[{"a":nul}]`, `[{"a":-}]`, `[{"a":01}]`, `[{"a":1e999}]`, `[{"a":1.}]`,
		`[{"a":"\ud800x\u00e9\n"}]`, "[{\"a\":\"\xff\xfe\"}]", "[{\"a\":\"tab\there\"}]", `[{"a":"\q"}]`,
		`[{"a":1,"a":2,"b":3}]`, `[{"x":{"k":1,"k":{"z":2}}}]`, `[{"id":1,"id":2}]`,
		`[{"message":"m","message":""}]`, `[{"message":"","event_message":"e","log_entry":"l"}]`,
		`[{"log_entry":"l","message":null,"event_message":""}]`, `[{"event_message":"e","message":"m","log_entry":"l","x":1}]`,
		`[{"message":1}]`, `[{"message":{"a":1}}]`, `[{"event_message":[1]}]`, `[{"log_entry":true}]`,
		`[{"id":{"a":1}}]`, `[{"timestamp":[1]}]`, `[{"id":12,"timestamp":1752148800}]`, `[{"id":1.5,"timestamp":1.7e9}]`,
		`[{"id":"","timestamp":"2025-07-10T11:00:00.123456Z"}]`, `[{"id":null,"timestamp":null}]`, `[{"id":true,"timestamp":false}]`,
		`[{"timestamp":"2031-01-01T00:00:00Z","message":"future"}]`,
		`[{"a-b":1}]`, `[{"m":{"a b":1}}]`, `[{"m":[{"a-b":1}]}]`, `[{"_TABLE_x":1}]`, `[{"1a":1}]`,
		`[{"m":{"x":null,"y":"","z":{},"w":[],"v":[null,"",{},[]]}}]`, `[{"m":{"a":{"b":{"c":null}}}}]`,
		`[{"a":true,"b":false,"c":null,"d":-0,"e":1.5e3,"f":-9223372036854775808,"g":18446744073709551616}]`,
		`[1,"x",null,[],{"a":1}]`, `[]`, ` [ ] `, `[{}]`, `[{} , {"a":1} ]`, `{"a":1}`, `[{"a":1}] x`,
		` [ { "a" : [ 1 , { "b" : "c" } ] , "d" : { } } ] `,
		`[{"\u0061":1,"a":2}]`, `[{"a\"b":1}]`, `[{"m":{"\u0062":1}}]`, `[{"_PARTITIONTIME":1}]`, `[{"m":{"_FILE_x":1}}]`,
		`[{"":1,"":2}]`, `[{"m":{"":"x"}}]`, `[{"ab":1,"ba":2,"aab":3,"abb":4,"ab":5}]`,
		`[{"` + strings.Repeat("k", 128) + `":1}]`, `[{"` + strings.Repeat("k", 129) + `":1}]`,
	}
	deep := strings.Repeat(`{"a":`, 70) + "1" + strings.Repeat("}", 70)
	seeds = append(seeds, "["+deep+"]", "[{\"m\":"+strings.Repeat("[", 70)+"1"+strings.Repeat("]", 70)+"}]")
	var wide, long strings.Builder
	wide.WriteString(`[{`)
	long.WriteString(`[{"m":[`)
	for i := range 130 {
		if i > 0 {
			wide.WriteByte(',')
			long.WriteByte(',')
		}
		wide.WriteString(`"k` + strconv.Itoa(i) + `":{"a":1}`)
		long.WriteString(strconv.Itoa(i))
	}
	wide.WriteString(`}]`)
	long.WriteString(`]}]`)
	seeds = append(seeds, wide.String(), long.String())
	for _, s := range append(appendNormalizedSeeds, bigAppendNormalizedSeeds()...) {
		seeds = append(seeds, "["+s+"]", "["+s+","+s+"]")
	}
	return seeds
}

// treeWay is what the ingest path stores for each element of body without
// the transcoder (ParseArray, Normalize, CapFields, AppendEvent), as text:
// one line per element, and the error last.
func treeWay(body []byte, now time.Time, maxFields int) string {
	var out strings.Builder
	var p Parser
	var n Normalizer
	opts := seqIDs()
	err := p.ParseArray(body, func(i int, v Value) error {
		writeTreeElement(&out, &n, v, now, opts, maxFields)
		return nil
	})
	fmt.Fprintf(&out, "error %v\n", err)
	return out.String()
}

func writeTreeElement(out *strings.Builder, n *Normalizer, v Value, now time.Time, opts NormalizeOptions, maxFields int) {
	if v.Kind != Object {
		fmt.Fprintf(out, "not an object: %s\n", AppendJSON(nil, v))
		return
	}
	n.Reset()
	e, outcome := n.Normalize(v, now, opts)
	if outcome != OutcomeKept {
		fmt.Fprintf(out, "%v\n", outcome)
		return
	}
	e.Fields, _ = CapFields(e.Fields, maxFields)
	fmt.Fprintf(out, "%q\n", AppendEvent(nil, e))
}

// transcodedWay is treeWay with TranscodeEvent taking the elements it can.
// It also returns how many it took.
func transcodedWay(body []byte, now time.Time, maxFields int) (string, int) {
	var out strings.Builder
	var p Parser
	var n Normalizer
	opts := seqIDs()
	var enc []byte
	took := 0
	err := p.ParseArrayWith(body, func(i int) bool {
		n.Reset()
		var outcome Outcome
		var ok bool
		enc, outcome, ok = p.TranscodeEvent(enc[:0], &n, now, opts, maxFields)
		if !ok {
			if len(enc) != 0 {
				panic("TranscodeEvent appended to an event it did not take")
			}
			return false
		}
		took++
		if outcome != OutcomeKept {
			fmt.Fprintf(&out, "%v\n", outcome)
		} else {
			fmt.Fprintf(&out, "%q\n", enc)
		}
		return true
	}, func(i int, v Value) error {
		writeTreeElement(&out, &n, v, now, opts, maxFields)
		return nil
	})
	fmt.Fprintf(&out, "error %v\n", err)
	return out.String(), took
}

// seqIDs gives generated ids from a counter, so both ways can be compared.
func seqIDs() NormalizeOptions {
	k := 0
	return NormalizeOptions{NewID: func() string { k++; return "gen-" + strconv.Itoa(k) }}
}

func checkTranscode(t *testing.T, body []byte, maxFields int) int {
	t.Helper()
	now := time.Date(2025, 7, 10, 12, 0, 0, 0, time.UTC)
	want := treeWay(body, now, maxFields)
	got, took := transcodedWay(body, now, maxFields)
	if got != want {
		t.Fatalf("body %q, %d fields at most:\ntranscoded:\n%s\ntree:\n%s", body, maxFields, got, want)
	}
	return took
}

func TestTranscodeEventMatchesTree(t *testing.T) {
	for _, body := range transcodeSeeds() {
		for _, maxFields := range []int{0, 2, testMaxFields, DefaultMaxFields} {
			checkTranscode(t, []byte(body), maxFields)
		}
	}
}

// TestTranscodeEventTakesEdgeEvents: the platform edge event, the
// ingest path's usual event, is transcoded, not left to the tree.
func TestTranscodeEventTakesEdgeEvents(t *testing.T) {
	edge, err := readEdgeEvent()
	if err != nil {
		t.Fatal(err)
	}
	body := []byte("[" + string(edge) + "," + string(edge) + "]")
	if took := checkTranscode(t, body, DefaultMaxFields); took != 2 {
		t.Fatalf("transcoded %d of 2 edge events", took)
	}
}

func FuzzTranscodeEvent(f *testing.F) {
	for _, s := range transcodeSeeds() {
		f.Add([]byte(s), uint8(testMaxFields))
	}
	if edge, err := readEdgeEvent(); err == nil {
		f.Add([]byte("["+string(edge)+"]"), uint8(100))
	}
	f.Fuzz(func(t *testing.T, body []byte, maxFields uint8) {
		if len(body) > 1<<16 {
			t.Skip()
		}
		checkTranscode(t, body, int(maxFields))
	})
}

func readEdgeEvent() ([]byte, error) { return os.ReadFile("testdata/edge_event.json") }

// BenchmarkArrayToEncoding measures an array body of 100 edge events from
// its text to the events' encodings, as the ingest path takes it:
// .../tree parses each element into a Value, normalises it
// (AppendNormalized); .../transcode is TranscodeEvent. One op is one body.
func BenchmarkArrayToEncoding(b *testing.B) {
	edge, err := readEdgeEvent()
	if err != nil {
		b.Fatal(err)
	}
	const events = 100
	body := []byte("[" + strings.TrimSuffix(strings.Repeat(string(edge)+",", events), ",") + "]")
	now := time.Date(2025, 7, 10, 12, 0, 6, 0, time.UTC)
	var p Parser
	var n Normalizer
	var enc []byte
	run := func(b *testing.B, try func(int) bool) {
		b.SetBytes(int64(len(body)))
		b.ReportAllocs()
		// The thread's CPU time, not the wall clock's: on a shared
		// machine the time the thread waits for a core is not the cost.
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		cpu0 := threadCPU(b)
		for b.Loop() {
			enc = enc[:0]
			err := p.ParseArrayWith(body, try, func(_ int, v Value) error {
				n.Reset()
				enc, _, _, _ = n.AppendNormalized(enc, v, now, NormalizeOptions{}, DefaultMaxFields)
				return nil
			})
			if err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(threadCPU(b)-cpu0)/float64(b.N*events), "cpu-ns/event")
	}
	b.Run("tree", func(b *testing.B) { run(b, nil) })
	b.Run("transcode", func(b *testing.B) {
		run(b, func(int) bool {
			n.Reset()
			var ok bool
			enc, _, ok = p.TranscodeEvent(enc, &n, now, NormalizeOptions{}, DefaultMaxFields)
			return ok
		})
	})
}
