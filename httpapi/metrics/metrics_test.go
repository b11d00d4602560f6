package metrics

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/sediment/sediment/catalog"
	"github.com/sediment/sediment/engine"
	"github.com/sediment/sediment/event"
	"github.com/sediment/sediment/sql"
)

// panicking is a collector whose Collect panics after one metric.
type panicking struct{ desc *prometheus.Desc }

func (p panicking) Describe(ch chan<- *prometheus.Desc) { ch <- p.desc }
func (p panicking) Collect(ch chan<- prometheus.Metric) {
	ch <- prometheus.MustNewConstMetric(p.desc, prometheus.GaugeValue, 1)
	panic("collector bug")
}

// TestPanickingCollector: a collector that panics is logged and the
// scrape goes on with every other metric (the registry collects on
// goroutines no handler's recover reaches: unguarded, the process would
// die).
func TestPanickingCollector(t *testing.T) {
	var logs bytes.Buffer
	r := New(slog.New(slog.NewTextHandler(&logs, nil)))
	if err := r.Register(panicking{prometheus.NewDesc("sediment_test_panicking", "test", nil, nil)}); err != nil {
		t.Fatal(err)
	}
	r.ObserveWALSync(3 * time.Millisecond)
	var out bytes.Buffer
	if _, err := r.Write(&out); err != nil {
		t.Fatal(err)
	}
	mfs, err := parse(&out)
	if err != nil {
		t.Fatal(err)
	}
	if h := mfs["sediment_wal_fsync_duration_seconds"]; h == nil || h.Metric[0].Histogram.GetSampleCount() != 1 {
		t.Fatalf("the other metrics are missing: %v", h)
	}
	if mfs["go_goroutines"] == nil {
		t.Fatal("the runtime's metrics are missing")
	}
	if !strings.Contains(logs.String(), "collector panicked") || !strings.Contains(logs.String(), "collector bug") {
		t.Fatalf("the panic was not logged: %s", logs.String())
	}
}

// TestEngineCollectorNamesSources: shards are named after their sources;
// a shard the catalog does not know is left out; the memory pool's limit
// is there only when it has one.
func TestEngineCollectorNamesSources(t *testing.T) {
	dir := t.TempDir()
	eng, err := engine.Open(dir, &engine.Options{DisableBackground: true})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	cat, err := catalog.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	name := "app.logs"
	src, err := cat.CreateSource(catalog.SourceParams{Name: &name})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{src.Token, "orphan"} {
		sh, err := eng.Shard(id)
		if err != nil {
			t.Fatal(err)
		}
		ev := event.Event{ID: "e1", Timestamp: time.Now().UnixMicro(), Message: "m", HasMessage: true, Fields: event.ObjectValue()}
		if err := sh.Append(context.Background(), []event.Event{ev}); err != nil {
			t.Fatal(err)
		}
	}
	r := New(nil)
	for _, c := range []prometheus.Collector{NewEngineCollector(eng, cat), NewMemoryPoolCollector(sql.NewMemoryPool(0, ""))} {
		if err := r.Register(c); err != nil {
			t.Fatal(err)
		}
	}
	var out bytes.Buffer
	if _, err := r.Write(&out); err != nil {
		t.Fatal(err)
	}
	mfs, err := parse(&out)
	if err != nil {
		t.Fatal(err)
	}
	head := mfs["sediment_head_events"]
	if head == nil || len(head.Metric) != 1 || head.Metric[0].Label[0].GetValue() != name || head.Metric[0].Gauge.GetValue() != 1 {
		t.Fatalf("sediment_head_events: %v", head)
	}
	if mfs["sediment_query_memory_bytes"] == nil || mfs["sediment_query_memory_limit_bytes"] != nil {
		t.Fatal("an unlimited pool: its use is shown, no limit")
	}
}

func parse(b *bytes.Buffer) (map[string]*dto.MetricFamily, error) {
	p := expfmt.NewTextParser(model.LegacyValidation)
	return p.TextToMetricFamilies(b)
}
