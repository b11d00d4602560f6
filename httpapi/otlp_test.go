package httpapi

import (
	"testing"
	"time"

	"github.com/sediment/sediment/catalog"
)

// createSource adds a source named name to the test server's catalog.
func (ts *testServer) createSource(name string) *catalog.Source {
	ts.t.Helper()
	src, err := ts.cat.CreateSource(catalog.SourceParams{Name: &name})
	if err != nil {
		ts.t.Fatal(err)
	}
	return src
}

// TestOTLPClients runs OpenTelemetry's JS logs SDK with both OTLP/HTTP
// exporters (JSON, routed by service.name; protobuf with gzip, routed by
// the X-Source header) and compares every stored event with the record
// the client emitted.
func TestOTLPClients(t *testing.T) {
	node, dir := nodeClients(t)
	ts := startServer(t, serverConfig{})
	for _, enc := range []string{"json", "proto"} {
		t.Run(enc, func(t *testing.T) {
			name := "otel-" + enc
			ts.createSource(name)
			before := time.Now().UnixMicro()
			out := runNode(t, node, dir, "otlp.js", ts.base, pubKey, enc, name)
			after := time.Now().UnixMicro()
			evs := ts.events(name)
			if len(evs) != 4 {
				t.Fatalf("%d events stored, want 4: %v\nclient output:\n%s", len(evs), evs, out)
			}
			service := name
			if enc == "proto" {
				service = "checkout"
			}
			common := map[string]any{
				"metadata.resource.service.name":                service,
				"metadata.resource.service.version":             "2.0.1",
				"metadata.resource.deployment.environment.name": "test",
				"metadata.scope.name":                           "sediment-test",
				"metadata.scope.version":                        "1.2.3",
				"metadata.attributes.http.request.method":       nil,
				"metadata.attributes.order.id":                  nil,
				"metadata.trace_id":                             nil,
				"metadata.severity_text":                        nil,
				"metadata.level":                                nil,
				"metadata.severity_number":                      nil,
				"metadata.event_name":                           nil,
				"metadata.body":                                 nil,
				"metadata.attributes.code":                      nil,
				"metadata.attributes.warehouse":                 nil,
				"metadata.attributes.user":                      nil,
				"metadata.attributes.retry":                     nil,
				"metadata.attributes.order.total":               nil,
				"metadata.span_id":                              nil,
				"metadata.trace_flags":                          nil,
			}
			want := map[string]map[string]any{
				"order placed": {
					"timestamp":                               float64(1752148805123000),
					"metadata.level":                          "info",
					"metadata.severity_number":                float64(9),
					"metadata.severity_text":                  "INFO",
					"metadata.attributes.order.id":            "o-1",
					"metadata.attributes.order.total":         42.5,
					"metadata.attributes.http.request.method": "POST",
					"metadata.attributes.user":                "u-1",
					"metadata.attributes.retry":               false,
					"metadata.trace_id":                       "5b8efff798038103d269b633813fc60c",
					"metadata.span_id":                        "eee19b7ec3c1b174",
					"metadata.trace_flags":                    float64(1),
				},
				`{"event":"low_stock","sku":"s-9","left":3}`: {
					"timestamp":                     float64(1752148806000000),
					"metadata.level":                "warning",
					"metadata.severity_number":      float64(13),
					"metadata.severity_text":        "WARN",
					"metadata.body":                 map[string]any{"event": "low_stock", "sku": "s-9", "left": float64(3)},
					"metadata.attributes.warehouse": "w1",
				},
				"payment failed": {
					"timestamp":                float64(1752148807000000),
					"metadata.level":           "error",
					"metadata.severity_number": float64(17),
					"metadata.severity_text":   "ERROR",
					"metadata.event_name":      "payment.failure",
					"metadata.attributes.code": float64(42),
				},
				"no timestamp": {
					"metadata.level":         "debug",
					"metadata.severity_text": "debug",
				},
			}
			for _, e := range evs {
				msg, _ := e["event_message"].(string)
				fields, ok := want[msg]
				if !ok {
					t.Fatalf("unexpected event %v", e)
				}
				delete(want, msg)
				for path, v := range common {
					if _, set := fields[path]; !set {
						fields[path] = v
					}
				}
				for path, w := range fields {
					if got := at(e, path); !jsonEqual(got, w) {
						t.Errorf("%q: %s = %#v, want %#v", msg, path, got, w)
					}
				}
				if tags := at(e, "metadata.attributes.tags"); msg == "order placed" && !jsonEqual(tags, []any{"a", "b"}) {
					t.Errorf("tags = %#v", tags)
				}
				if msg == "no timestamp" {
					if us, _ := e["timestamp"].(float64); int64(us) < before || int64(us) > after {
						t.Errorf("observed-time fallback: timestamp %v not in [%d, %d]", us, before, after)
					}
				}
			}
		})
	}
	if st := ts.srv.Stats(); st.Dropped(DropRejected) != 0 {
		t.Errorf("rejected %d", st.Dropped(DropRejected))
	}
}

// jsonEqual compares decoded JSON values.
func jsonEqual(a, b any) bool {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k := range x {
			if !jsonEqual(x[k], y[k]) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !jsonEqual(x[i], y[i]) {
				return false
			}
		}
		return true
	}
	return a == b
}
