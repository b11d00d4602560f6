package gen_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/sediment/sediment/bench/gen"
)

// FuzzEvents: for any seed, source, shape and timestamp form, events are
// valid one-line JSON objects and the stream is reproducible.
func FuzzEvents(f *testing.F) {
	for i, s := range gen.AllSources() {
		f.Add(int64(i), uint8(s), i%2 == 0, uint8(0), uint8(20))
	}
	f.Add(int64(-1), uint8(0), true, uint8(3), uint8(64))
	f.Add(int64(1)<<62, uint8(4), false, uint8(6), uint8(1))
	f.Fuzz(func(t *testing.T, seed int64, src uint8, platform bool, form uint8, n uint8) {
		s := gen.AllSources()[int(src)%len(gen.AllSources())]
		opts := gen.Options{Seed: seed, Shape: gen.SelfHosted, Timestamps: gen.TimestampForm(form % 7), Projects: int(n) + 1,
			RareEvery: int(n % 4), StorageObjects: int(n % 3)}
		if platform {
			opts.Shape = gen.Platform
		}
		count := int(n % 65)
		a := gen.New(s, opts).AppendNDJSON(nil, count)
		b := gen.New(s, opts).AppendNDJSON(nil, count)
		if !bytes.Equal(a, b) {
			t.Fatal("same options gave different bytes")
		}
		for _, line := range bytes.Split(bytes.TrimSuffix(a, []byte("\n")), []byte("\n")) {
			if count == 0 {
				break
			}
			var m map[string]json.RawMessage
			if err := json.Unmarshal(line, &m); err != nil {
				t.Fatalf("invalid event: %v\n%s", err, line)
			}
			if _, ok := m["event_message"]; !ok {
				t.Fatalf("event without event_message:\n%s", line)
			}
		}
	})
}
