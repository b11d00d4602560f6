package ui

import (
	"bytes"
	"compress/gzip"
	"io"
	"regexp"
	"slices"
	"strings"
	"testing"
)

func TestAssetsPrepared(t *testing.T) {
	names := Names()
	for _, want := range []string{"index.html", "app.css", "main.js", "search.js"} {
		if !slices.Contains(names, want) {
			t.Fatalf("asset %s missing from %v", want, names)
		}
	}
	for _, n := range names {
		a, ok := Lookup(n)
		if !ok || a.Name != n || len(a.Body) == 0 || len(a.ETag) < 10 {
			t.Fatalf("asset %s: %+v", n, a)
		}
		if a.Gzip != nil {
			zr, err := gzip.NewReader(bytes.NewReader(a.Gzip))
			if err != nil {
				t.Fatal(err)
			}
			plain, err := io.ReadAll(zr)
			if err != nil || !bytes.Equal(plain, a.Body) {
				t.Fatalf("asset %s: gzip copy differs (%v)", n, err)
			}
		}
	}
	if Index().ContentType != "text/html; charset=utf-8" {
		t.Fatalf("index content type %q", Index().ContentType)
	}
	if a, _ := Lookup("main.js"); a.ContentType != "text/javascript; charset=utf-8" {
		t.Fatalf("main.js content type %q", a.ContentType)
	}
	for _, bad := range []string{"", "/main.js", "../ui.go", "static/main.js", "nope.js"} {
		if _, ok := Lookup(bad); ok {
			t.Fatalf("Lookup(%q) found something", bad)
		}
	}
}

// TestReferencesResolve checks that every file the page and the modules
// name is embedded, and that the page preloads every module (so that a
// cold load fetches them at once rather than one import at a time).
func TestReferencesResolve(t *testing.T) {
	index := string(Index().Body)
	refs := regexp.MustCompile(`(?:href|src)="ui/([^"]+)"`).FindAllStringSubmatch(index, -1)
	preloaded := map[string]bool{}
	for _, m := range refs {
		if _, ok := Lookup(m[1]); !ok {
			t.Errorf("index.html names ui/%s, which is not embedded", m[1])
		}
		preloaded[m[1]] = true
	}
	imports := regexp.MustCompile(`(?m)^import .* from '\./([^']+)';$`)
	for _, n := range Names() {
		if !strings.HasSuffix(n, ".js") {
			continue
		}
		if !preloaded[n] {
			t.Errorf("index.html does not load or preload %s", n)
		}
		a, _ := Lookup(n)
		for _, m := range imports.FindAllStringSubmatch(string(a.Body), -1) {
			if _, ok := Lookup(m[1]); !ok {
				t.Errorf("%s imports ./%s, which is not embedded", n, m[1])
			}
		}
	}
}

// TestNothingFromOtherOrigins keeps the explorer working without network
// access beyond the server: no URL of another origin in any file (the SVG
// namespace is a name, not a fetch), no @import, no web fonts.
func TestNothingFromOtherOrigins(t *testing.T) {
	external := regexp.MustCompile(`(?i)(https?:)?//[a-z0-9.-]+\.[a-z]{2,}`)
	for _, n := range Names() {
		a, _ := Lookup(n)
		body := strings.ReplaceAll(string(a.Body), "http://www.w3.org/2000/svg", "")
		for _, line := range strings.Split(body, "\n") {
			code := line
			if i := strings.Index(code, "// "); i >= 0 && strings.HasSuffix(n, ".js") {
				code = code[:i] // a comment
			}
			if m := external.FindString(code); m != "" {
				t.Errorf("%s refers to another origin: %q in %q", n, m, strings.TrimSpace(line))
			}
		}
		if strings.Contains(body, "@import") || strings.Contains(body, "@font-face") {
			t.Errorf("%s loads styles or fonts", n)
		}
	}
}
