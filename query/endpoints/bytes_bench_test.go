package endpoints

import (
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/sediment/sediment/index"
	"github.com/sediment/sediment/internal/vfs"
	"github.com/sediment/sediment/segment"
)

// BenchmarkPeersBytes reports where the bytes of the peers fixture
// (key=project, flushed and compacted) go: bytes per event of the segment
// files, of their columns (pages, dictionaries, histories) and of the rest
// (index, footers), and, in the log, the columns and index fields that
// take the most:
//
//	go test ./query/endpoints -run '^$' -bench PeersBytes -benchtime 1x -v
//
// It measures sizes, not time: one iteration is enough.
func BenchmarkPeersBytes(b *testing.B) {
	f := loadPeers(b, "project")
	type colKey struct {
		path string
		typ  segment.ColType
	}
	byCol := map[colKey]int64{}
	byField := map[string]int64{}
	var files, cols int64
	err := filepath.WalkDir(f.dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".seg") || filepath.Base(filepath.Dir(path)) != "segments" {
			return err
		}
		file, err := vfs.OS.Open(path)
		if err != nil {
			return err
		}
		r, err := segment.Open(file, filepath.Base(path))
		if err != nil {
			file.Close()
			return err
		}
		defer r.Close()
		files += r.Size()
		for i, n := range r.ColumnBytes() {
			c := r.Columns()[i]
			byCol[colKey{c.Path, c.Type}] += n
			cols += n
		}
		dir, err := r.Section("index")
		if err != nil || dir == nil {
			return err
		}
		ix, err := index.Open(dir, r)
		if err != nil {
			return err
		}
		for k, n := range ix.FieldBytes() {
			byField[k] += n
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	rows := float64(f.rows)
	keys := make([]colKey, 0, len(byCol))
	for k := range byCol {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return byCol[keys[i]] > byCol[keys[j]] })
	var out strings.Builder
	fmt.Fprintf(&out, "%d events: %.1f B/event in segment files, %.1f in columns, %.1f in the rest (index, footers)\n",
		f.rows, float64(files)/rows, float64(cols)/rows, float64(files-cols)/rows)
	for _, k := range keys[:min(len(keys), 60)] {
		fmt.Fprintf(&out, "%8.2f B/event %5.1f%%  %s (%v)\n", float64(byCol[k])/rows, 100*float64(byCol[k])/float64(files), k.path, k.typ)
	}
	fields := make([]string, 0, len(byField))
	for k := range byField {
		fields = append(fields, k)
	}
	sort.Slice(fields, func(i, j int) bool { return byField[fields[i]] > byField[fields[j]] })
	for _, k := range fields[:min(len(fields), 10)] {
		fmt.Fprintf(&out, "%8.2f B/event %5.1f%%  index %s\n", float64(byField[k])/rows, 100*float64(byField[k])/float64(files), k)
	}
	b.Log("\n" + out.String())
	for range b.N {
	}
	b.ReportMetric(float64(files)/rows, "B/event")
	b.ReportMetric(float64(cols)/rows, "column-B/event")
	b.ReportMetric(float64(files-cols)/rows, "other-B/event")
}
