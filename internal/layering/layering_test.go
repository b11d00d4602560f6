// Package layering holds a test that keeps Sediment's package layers
// apart: storage knows nothing of SQL or HTTP, the engine nothing of HTTP,
// and only the HTTP layer speaks JSON through goccy/go-json or fasthttp.
package layering

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/sediment/sediment/"

// forbidden lists, per package prefix (a directory of the module and all
// below it), the import prefixes its non-test files must not use.
var forbidden = []struct {
	pkg  string
	deny []string
	why  string
}{
	{pkg: "internal/vec", deny: []string{module}, why: "shared leaf"},
	{pkg: "internal/vfs", deny: []string{module}, why: "shared leaf"},
	{pkg: "internal/jsonstr", deny: []string{module}, why: "shared leaf"},
	{pkg: "segment", deny: []string{module + "index", module + "engine", module + "sql", module + "httpapi", module + "cmd", module + "bench", "net/http", "github.com/valyala/fasthttp", "github.com/goccy/go-json"}, why: "storage format knows nothing above it"},
	{pkg: "index", deny: []string{module + "engine", module + "sql", module + "httpapi", module + "cmd", module + "bench", "net/http", "github.com/valyala/fasthttp", "github.com/goccy/go-json"}, why: "index format knows nothing above it"},
	{pkg: "sql", deny: []string{module + "engine", module + "httpapi", module + "cmd", module + "bench", module + "segment", module + "index", "net/http", "github.com/valyala/fasthttp"}, why: "SQL reads storage only through sql/scan"},
	{pkg: "engine", deny: []string{module + "httpapi", module + "cmd", module + "bench", "net/http", "github.com/valyala/fasthttp", "github.com/goccy/go-json"}, why: "the engine is usable without HTTP"},
	{pkg: "engine/catalog", deny: []string{module + "sql/parser"}, why: "the catalog gets its SQL validator injected"},
	{pkg: "httpapi", deny: []string{module + "cmd", module + "bench"}, why: "commands wire the server, not the reverse"},
}

func TestPackageLayers(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, rule := range forbidden {
		dir := filepath.Join(root, filepath.FromSlash(rule.pkg))
		err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				if n := d.Name(); n == "testdata" || n == "node_modules" || strings.HasPrefix(n, ".") {
					return filepath.SkipDir
				}
				return nil
			}
			if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
				return nil
			}
			f, err := parser.ParseFile(token.NewFileSet(), p, nil, parser.ImportsOnly)
			if err != nil {
				return err
			}
			checked++
			rel, _ := filepath.Rel(root, p)
			for _, imp := range f.Imports {
				path, _ := strconv.Unquote(imp.Path.Value)
				for _, d := range rule.deny {
					if path == strings.TrimSuffix(d, "/") || strings.HasPrefix(path, strings.TrimSuffix(d, "/")+"/") {
						t.Errorf("%s imports %s: %s", filepath.ToSlash(rel), path, rule.why)
					}
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if checked < 20 {
		t.Fatalf("only %d files checked: is the module root right?", checked)
	}
}
