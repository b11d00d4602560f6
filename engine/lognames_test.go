package engine

import (
	"strings"
	"testing"
)

// TestLogRecordsNameTheSource: a record about a shard also names its
// source, as the name is when the record is written.
func TestLogRecordsNameTheSource(t *testing.T) {
	var buf logBuffer
	name := "edge.logs"
	opts, err := (&Options{Logger: buf.logger(), SourceName: func(id string) string {
		if id == "tok123" {
			return name
		}
		return ""
	}}).withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	opts.Logger.With("component", "engine").Warn("write-ahead log resumed", "shard", "tok123", "file", "7.wal")
	name = "edge.renamed"
	opts.Logger.Error("source degraded", "shard", "tok123")
	opts.Logger.Info("not about a source", "data_dir", "/d")
	opts.Logger.Info("unknown shard", "shard", "other")
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 4 {
		t.Fatalf("%d lines:\n%s", len(lines), buf.String())
	}
	for i, want := range []string{"source=edge.logs", "source=edge.renamed", "", ""} {
		has := strings.Contains(lines[i], "source=")
		if want == "" && has || want != "" && !strings.Contains(lines[i], want) {
			t.Errorf("line %d: %s (want %q)", i, lines[i], want)
		}
	}
	if !strings.Contains(lines[0], "component=engine") || !strings.Contains(lines[0], "shard=tok123") {
		t.Errorf("attributes lost: %s", lines[0])
	}
}
