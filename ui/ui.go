// Package ui is Sediment's web log explorer: the page and scripts that
// `sediment serve` answers at `/`, embedded in the binary so that a build
// needs only Go. The sources are plain JavaScript modules, CSS and HTML
// under static/, served as they are: there is no build step, no framework
// and nothing fetched from another origin (the page works with no network
// beyond the server).
//
// The package knows nothing of HTTP servers: it hands out Assets (bytes,
// content type, a gzip copy, an ETag) and httpapi serves them.
//
// Files under static/:
//
//	index.html   the page: sign-in, navigation, the three views
//	app.css      layout for 1280×800 and phone screens, light and dark
//	main.js      start-up, routing (the state lives in the URL's hash)
//	api.js       calls to the HTTP API with the key from sessionStorage
//	state.js     the URL hash ⇄ view state
//	time.js      UTC/local formatting, relative and absolute ranges
//	lql.js       building LQL clauses from clicked values
//	sources.js   the sources view
//	search.js    the search view: LQL box, range picker, results
//	histogram.js the chart from the search's c: clause, drag to zoom
//	table.js     the results table, rendering only the visible rows
//	jsonview.js  an event as formatted JSON with clickable values
//	tail.js      live tail over Server-Sent Events, bounded
//	endpoints.js the query endpoints view
//	dom.js       small DOM helpers
package ui

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"mime"
	"path"
	"sort"
	"strings"
)

//go:embed static
var files embed.FS

// Asset is one embedded file, ready to serve.
type Asset struct {
	// Name is the file's path under static/ ("index.html", "search.js").
	Name string
	// ContentType is the media type with its charset for text.
	ContentType string
	// Body is the file as it is.
	Body []byte
	// Gzip is Body gzip-compressed, or nil when compressing does not make
	// it smaller.
	Gzip []byte
	// ETag is a strong entity tag of Body, quoted as HTTP writes it.
	ETag string
}

// assets are every embedded file by name, prepared once at start-up.
var assets = loadAssets()

// IndexName is the page served at `/`.
const IndexName = "index.html"

// Lookup returns the asset called name (a path under static/, without a
// leading slash). Names with `..`, empty segments or a trailing slash are
// never found.
func Lookup(name string) (*Asset, bool) {
	a, ok := assets[name]
	return a, ok
}

// Index returns the page served at `/`.
func Index() *Asset { return assets[IndexName] }

// Names lists every asset name, sorted.
func Names() []string {
	out := make([]string, 0, len(assets))
	for n := range assets {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

func loadAssets() map[string]*Asset {
	out := map[string]*Asset{}
	err := fs.WalkDir(files, "static", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		body, err := files.ReadFile(p)
		if err != nil {
			return err
		}
		name := strings.TrimPrefix(p, "static/")
		sum := sha256.Sum256(body)
		a := &Asset{Name: name, ContentType: contentType(name), Body: body, ETag: `"` + hex.EncodeToString(sum[:12]) + `"`}
		if z := gzipped(body); len(z) < len(body) {
			a.Gzip = z
		}
		out[name] = a
		return nil
	})
	if err != nil {
		// The files are compiled in: failing to read them is a build defect.
		panic("ui: embedded files: " + err.Error())
	}
	return out
}

// contentType names the media type of a file by its extension.
func contentType(name string) string {
	switch path.Ext(name) {
	case ".html":
		return "text/html; charset=utf-8"
	case ".js":
		return "text/javascript; charset=utf-8"
	case ".css":
		return "text/css; charset=utf-8"
	case ".svg":
		return "image/svg+xml"
	case ".png":
		return "image/png"
	}
	if t := mime.TypeByExtension(path.Ext(name)); t != "" {
		return t
	}
	return "application/octet-stream"
}

func gzipped(b []byte) []byte {
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	zw.Write(b)
	zw.Close()
	return buf.Bytes()
}
