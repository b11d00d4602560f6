package bench

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"time"

	"github.com/sediment/sediment/engine"
)

// DiskUsage is what a data directory holds once settled.
type DiskUsage struct {
	Shards       int   `json:"shards"`
	Segments     int   `json:"segments"`
	SegmentBytes int64 `json:"segment_bytes"` // sum of the .seg files
	WALBytes     int64 `json:"wal_bytes"`     // what is left in write-ahead logs
	Rows         int64 `json:"rows"`          // events stored
	// SettleSeconds is how long the final flush and compaction took.
	SettleSeconds float64 `json:"settle_seconds"`
}

// BytesPerEvent is SegmentBytes over Rows.
func (u DiskUsage) BytesPerEvent() float64 {
	if u.Rows == 0 {
		return 0
	}
	return float64(u.SegmentBytes) / float64(u.Rows)
}

// CompactDataDir opens the data directory of a stopped server, settles it
// (Settle) and measures it. opts may set the storage settings compaction
// writes with (nil: the engine's defaults, as the server uses).
func CompactDataDir(dir string, opts *engine.Options) (DiskUsage, error) {
	o := engine.Options{}
	if opts != nil {
		o = *opts
	}
	eng, err := engine.Open(dir, settleOptions(o))
	if err != nil {
		return DiskUsage{}, fmt.Errorf("open %s: %w", dir, err)
	}
	start := time.Now()
	if err := Settle(eng); err != nil {
		_ = eng.Close()
		return DiskUsage{}, err
	}
	settle := time.Since(start)
	u, merr := Measure(eng, dir)
	u.SettleSeconds = settle.Seconds()
	return u, errors.Join(merr, eng.Close())
}

// settleCompactionInputs is the smallest run of small segments Settle
// merges. A server merges a run once CompactionMinInputs (default 4) have
// piled up; a benchmark that stops before then would measure segments
// that a long-running server would already have compacted, so Settle
// merges any two (one alone is never rewritten).
const settleCompactionInputs = 2

// settleOptions returns o for an engine that Settle runs on: no background
// work, eager merges.
func settleOptions(o engine.Options) *engine.Options {
	o.DisableBackground = true
	o.CompactionMinInputs = settleCompactionInputs
	return &o
}

// Settle brings an engine to the state a long-running server reaches: every
// head flushed to a segment and every shard compacted until no merge is
// left. Open the engine with settleOptions so that merges happen eagerly.
func Settle(eng *engine.Engine) error {
	for _, sh := range eng.Shards() {
		if err := sh.Flush(); err != nil {
			return fmt.Errorf("flush %s: %w", sh.ID(), err)
		}
		for {
			n, err := sh.Compact()
			if err != nil {
				return fmt.Errorf("compact %s: %w", sh.ID(), err)
			}
			if n == 0 {
				break
			}
		}
	}
	return nil
}

// Measure sums the segment and WAL files of eng, an engine open on dir,
// and counts the events it stores.
func Measure(eng *engine.Engine, dir string) (DiskUsage, error) {
	u, err := measureFiles(dir)
	u.Rows = countRows(eng)
	u.Shards = len(eng.Shards())
	return u, err
}

// measureFiles sums the sizes of <dir>/sources/*/segments/*.seg and
// <dir>/sources/*/wal/*.wal.
func measureFiles(dir string) (DiskUsage, error) {
	var u DiskUsage
	root := filepath.Join(dir, "sources")
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && path == root {
				return filepath.SkipDir
			}
			return err
		}
		if d.IsDir() {
			return nil
		}
		parent := filepath.Base(filepath.Dir(path))
		switch {
		case parent == "segments" && strings.HasSuffix(path, ".seg"):
			fi, err := d.Info()
			if err != nil {
				return err
			}
			u.Segments++
			u.SegmentBytes += fi.Size()
		case parent == "wal" && strings.HasSuffix(path, ".wal"):
			fi, err := d.Info()
			if err != nil {
				return err
			}
			u.WALBytes += fi.Size()
		}
		return nil
	})
	return u, err
}

// countRows counts the events of every shard.
func countRows(eng *engine.Engine) int64 {
	var n int64
	for _, sh := range eng.Shards() {
		sn := sh.Snapshot()
		n += int64(sn.Rows())
		sn.Release()
	}
	return n
}
