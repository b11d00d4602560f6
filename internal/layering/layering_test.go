// Package layering holds the tests that keep Sediment's folders in their
// layers (ARCHITECTURE.md draws them). A package may import packages of a
// lower layer and packages inside its own folder, never one of the same or
// a higher layer; and the external imports that belong to one layer
// (net/http, fasthttp, goccy/go-json) stay there.
package layering

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/sediment/sediment/"

// layers ranks every top-level folder, bottom (0) to top. Folders of one
// rank are peers and must not import each other.
var layers = map[string]int{
	"internal": 0, // shared leaves: vfs, vec, jsonstr, predicate, bytesearch, varint, recovered, miniotest
	"event":    1, // the event model and its codecs
	"segment":  1, // segment file format
	"index":    1, // index format
	"objstore": 1, // object storage: S3 store, manifests, segment cache
	"sql":      1, // SQL compiler and executor; reads storage through sql/scan
	"ui":       1, // the web explorer's embedded files (httpapi serves them)
	"engine":   2, // storage: shards, WAL, head, flush, compaction, scan
	"lql":      2, // LQL parser, SQL translation and single-event matcher
	"catalog":  3, // sources, endpoints, tokens
	"remote":   3, // engine.Remote on objstore: segments in object storage
	"query":    4, // endpoint and search services over engine, catalog and sql
	"httpapi":  5, // routes
	"bench":    6, // load generators and suites
	"cmd":      7, // wiring
	"fuzz":     8, // fuzz targets reach everything
	"soak":     8, // the soak test (build tag soak) drives the binary and reaches everything
}

// denyExternal lists, per top-level folder, imports its non-test files
// must not use whatever their layer.
var denyExternal = []struct {
	pkg  string
	deny []string
	why  string
}{
	{pkg: "segment", deny: []string{"net/http", "github.com/valyala/fasthttp", "github.com/goccy/go-json"}, why: "the storage format knows nothing of HTTP or JSON"},
	{pkg: "index", deny: []string{"net/http", "github.com/valyala/fasthttp", "github.com/goccy/go-json"}, why: "the index format knows nothing of HTTP or JSON"},
	{pkg: "event", deny: []string{"net/http", "github.com/valyala/fasthttp"}, why: "the event model knows nothing of HTTP"},
	{pkg: "sql", deny: []string{"net/http", "github.com/valyala/fasthttp"}, why: "SQL knows nothing of HTTP"},
	{pkg: "engine", deny: []string{"net/http", "github.com/valyala/fasthttp", "github.com/goccy/go-json"}, why: "the engine is usable without HTTP"},
	{pkg: "lql", deny: []string{"net/http", "github.com/valyala/fasthttp"}, why: "LQL knows nothing of HTTP"},
	{pkg: "catalog", deny: []string{"net/http", "github.com/valyala/fasthttp", module + "sql/parser"}, why: "the catalog gets its SQL validator injected and knows nothing of HTTP"},
	{pkg: "ui", deny: []string{"net/http", "github.com/valyala/fasthttp"}, why: "the explorer's files are served by httpapi"},
	{pkg: "query", deny: []string{"net/http", "github.com/valyala/fasthttp"}, why: "the query services know nothing of HTTP"},
	// Metrics read the lower layers' state from httpapi/metrics; the
	// engine reports what it keeps nowhere (fsync times) through a plain
	// function (engine.Options.ObserveWALSync).
	{pkg: "engine", deny: []string{prometheus}, why: "the engine knows nothing of Prometheus"},
	{pkg: "sql", deny: []string{prometheus}, why: "SQL knows nothing of Prometheus"},
	{pkg: "segment", deny: []string{prometheus}, why: "the storage format knows nothing of Prometheus"},
	{pkg: "event", deny: []string{prometheus}, why: "the event model knows nothing of Prometheus"},
	{pkg: "index", deny: []string{prometheus}, why: "the index format knows nothing of Prometheus"},
	{pkg: "objstore", deny: []string{"github.com/valyala/fasthttp", "github.com/goccy/go-json"}, why: "object storage speaks S3 through minio-go only"},
}

// onlyIn lists external modules that only the named top-level folders'
// non-test files may import.
var onlyIn = []struct {
	module string
	pkgs   []string
	why    string
}{
	{module: "github.com/minio/minio-go", pkgs: []string{"objstore"}, why: "the S3 client stays behind objstore.Store"},
}

// prometheus is the module path prefix of Prometheus's Go libraries.
const prometheus = "github.com/prometheus"

// TestLayersComplete fails when a top-level folder with Go code has no
// rank, so that a new folder gets a place in the diagram.
func TestLayersComplete(t *testing.T) {
	root := moduleRoot(t)
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") || e.Name() == "docs" {
			continue
		}
		matches, _ := filepath.Glob(filepath.Join(root, e.Name(), "*.go"))
		sub, _ := filepath.Glob(filepath.Join(root, e.Name(), "*", "*.go"))
		if len(matches)+len(sub) == 0 {
			continue
		}
		if _, ok := layers[e.Name()]; !ok {
			t.Errorf("folder %s has Go code but no layer in internal/layering (and ARCHITECTURE.md)", e.Name())
		}
	}
}

// TestPackageLayers checks every non-test import of every package.
func TestPackageLayers(t *testing.T) {
	root := moduleRoot(t)
	checked := 0
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); n == "testdata" || n == "node_modules" || (strings.HasPrefix(n, ".") && p != root) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		top, _, ok := strings.Cut(rel, "/")
		if !ok {
			return nil
		}
		rank, ok := layers[top]
		if !ok {
			return nil // TestLayersComplete reports it
		}
		f, err := parser.ParseFile(token.NewFileSet(), p, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		checked++
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			for _, rule := range denyExternal {
				if top != rule.pkg {
					continue
				}
				for _, d := range rule.deny {
					if path == d || strings.HasPrefix(path, d+"/") {
						t.Errorf("%s imports %s: %s", rel, path, rule.why)
					}
				}
			}
			for _, rule := range onlyIn {
				if (path == rule.module || strings.HasPrefix(path, rule.module+"/")) && !slices.Contains(rule.pkgs, top) {
					t.Errorf("%s imports %s: %s", rel, path, rule.why)
				}
			}
			if own, ok := strings.CutPrefix(path, module); ok {
				otop, _, _ := strings.Cut(own, "/")
				if otop == top {
					continue // inside its own folder
				}
				orank, known := layers[otop]
				if !known || orank >= rank {
					t.Errorf("%s imports %s: %s (layer %d) may import only lower layers, and %s is layer %d", rel, path, top, rank, otop, orank)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 100 {
		t.Fatalf("only %d files checked: is the module root right?", checked)
	}
}

func moduleRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	return root
}
