package catalog

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestImportBoundaries: the catalog is part of the engine, which knows
// nothing of HTTP, and does not reach up into the SQL parser (the SQL
// validator is injected).
func TestImportBoundaries(t *testing.T) {
	banned := []string{"net/http", "github.com/valyala/fasthttp", "github.com/goccy/go-json", "github.com/sediment/sediment/httpapi", "github.com/sediment/sediment/sql/parser"}
	files, err := filepath.Glob("*.go")
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
			for _, b := range banned {
				if path == b || strings.HasPrefix(path, b+"/") {
					t.Errorf("%s imports %s", f, path)
				}
			}
		}
	}
}
