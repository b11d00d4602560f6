package bench

import (
	"strings"
	"testing"
)

var metricSeeds = []string{
	"# HELP sediment_object_store_publish_pending x\n# TYPE sediment_object_store_publish_pending gauge\nsediment_object_store_publish_pending 3\n",
	"sediment_object_store_publish_pending_total 9\nsediment_object_store_publish_pending 0\n",
	"sediment_object_store_publish_pending{source=\"a\"} 2\n",
	"sediment_object_store_publish_pending x\n",
	"",
}

// TestParseMetric: the unlabelled sample of the name asked, not one of a
// longer name; a missing or malformed one is an error.
func TestParseMetric(t *testing.T) {
	const name = "sediment_object_store_publish_pending"
	for i, want := range []float64{3, 0} {
		if v, err := parseMetric(strings.NewReader(metricSeeds[i]), name); err != nil || v != want {
			t.Fatalf("seed %d: %v %v, want %v", i, v, err, want)
		}
	}
	for _, in := range metricSeeds[2:] {
		if v, err := parseMetric(strings.NewReader(in), name); err == nil {
			t.Fatalf("%q: %v, want an error", in, v)
		}
	}
}

func FuzzParseMetric(f *testing.F) {
	for _, s := range metricSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		parseMetric(strings.NewReader(in), "sediment_object_store_publish_pending")
	})
}
