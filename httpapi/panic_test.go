package httpapi

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/sediment/sediment/catalog"
)

// panicRunner is a query runner with a bug.
type panicRunner struct{}

func (panicRunner) RunEndpoint(context.Context, *catalog.Endpoint, map[string]string, bool) []byte {
	var m map[string]int
	m["boom"]++ // assignment to a nil map
	return nil
}

func (panicRunner) RunSQL(context.Context, string) []byte { panic("runner bug") }

// TestHandlerPanicIsLoggedWithItsStack: a bug below a handler answers
// that request 500 and logs the panic with its stack; the server goes on.
// (A query's own panic never gets here: query/endpoints answers it as the
// query's {"error"}, see its tests.)
func TestHandlerPanicIsLoggedWithItsStack(t *testing.T) {
	logs := &syncBuffer{}
	ts := startServer(t, serverConfig{noRunner: true, opts: Options{
		Runner: panicRunner{},
		Logger: slog.New(slog.NewTextHandler(logs, nil)),
	}})
	ts.do("GET", "/api/endpoints/query/logs.all?project=default", nil, "x-api-key", privKey).expect(t, 500, `{"error":"Internal Server Error"}`)
	ts.do("GET", "/api/query?sql=select+1", nil, "x-api-key", privKey).expect(t, 500, "")
	out := logs.String()
	if strings.Count(out, "handler panic") != 2 || !strings.Contains(out, "panic_test.go") || !strings.Contains(out, "assignment to entry in nil map") {
		t.Fatalf("panics not logged with their stacks:\n%s", out)
	}
	ts.do("GET", "/health", nil).expect(t, 200, "")
}
