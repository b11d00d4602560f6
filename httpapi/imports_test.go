package httpapi

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestImportBoundaries keeps the package's dependencies to the ones its
// layer may use: the standard library (but not net/http), the engine and
// its catalog and event model, the ingest decoders, LQL, fasthttp,
// goccy/go-json, and Prometheus's client for the metrics (httpapi/metrics
// holds the rest of them).
func TestImportBoundaries(t *testing.T) {
	allowed := map[string]bool{
		"github.com/sediment/sediment/engine":            true,
		"github.com/sediment/sediment/catalog":           true,
		"github.com/sediment/sediment/event":             true,
		"github.com/sediment/sediment/query/search":      true,
		"github.com/sediment/sediment/httpapi/ingest":    true,
		"github.com/sediment/sediment/lql":               true,
		"github.com/sediment/sediment/ui":                true,
		"github.com/valyala/fasthttp":                    true,
		"github.com/goccy/go-json":                       true,
		"github.com/sediment/sediment/httpapi/metrics":   true,
		"github.com/prometheus/client_golang/prometheus": true,
	}
	checkImports(t, ".", func(path string) bool {
		if allowed[path] {
			return true
		}
		return !strings.Contains(strings.Split(path, "/")[0], ".") && path != "net/http"
	})
}

// checkImports fails for every import of dir's non-test Go files that ok
// rejects.
func checkImports(t *testing.T, dir string, ok func(string) bool) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range af.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if !ok(path) {
				t.Errorf("%s imports %s, which this package may not use", f, path)
			}
		}
	}
}
