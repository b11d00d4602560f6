package httpapi

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	json "github.com/goccy/go-json"
	"github.com/valyala/fasthttp"

	"github.com/sediment/sediment/catalog"
	"github.com/sediment/sediment/engine"
)

// An online snapshot is a copy of the data directory, consistent and taken
// while the server runs, for backups:
//
//	<snapshot>/catalog.json             the catalog (sources, endpoints, token digests)
//	<snapshot>/sources/<token>/...      each source's sealed segments (hard
//	                                    links) and sealed log files (copies)
//	<snapshot>/generated-keys.json      when the server generated its keys
//	<snapshot>/snapshot.json            when, by which build, what it holds
//
// The catalog is copied first, then the shards of the sources it names
// (engine.SnapshotTo): every event acknowledged before the request is in
// it, once. It is written under <name>.partial and renamed when complete,
// so a directory without the suffix is a whole snapshot. A snapshot is a
// data directory: to restore, stop the server, put a copy of the snapshot
// in place of the data directory and start the server on it.

// SnapshotInfo describes a snapshot; it is written to snapshot.json and is
// the answer of POST /api/admin/snapshot. Sources counts the sources with
// stored events; Segments the segment files (SegmentsCopied of them copied
// rather than hard-linked, the snapshot being on another file system);
// WALFiles the write-ahead log files of events not yet in a segment.
type SnapshotInfo struct {
	Path           string `json:"path"`
	CreatedAt      string `json:"created_at"`
	Version        string `json:"version,omitempty"`
	Commit         string `json:"commit,omitempty"`
	Sources        int    `json:"sources"`
	Segments       int    `json:"segments"`
	SegmentsCopied int    `json:"segments_copied"`
	SegmentBytes   int64  `json:"segment_bytes"`
	WALFiles       int    `json:"wal_files"`
	WALBytes       int64  `json:"wal_bytes"`
	// SegmentsFetched counts the evicted segments read back from object
	// storage (SnapshotOptions.FetchEvicted).
	SegmentsFetched int     `json:"segments_fetched"`
	TookSeconds     float64 `json:"took_seconds"`
}

// SnapshotOptions are the extras of WriteSnapshot.
type SnapshotOptions struct {
	// Files are copied into the snapshot (same base name, mode 0600) when
	// they exist, e.g. the generated keys file.
	Files []string
	// Version and Commit are recorded in snapshot.json.
	Version, Commit string
	// Now is the clock (default time.Now).
	Now func() time.Time
	// FetchEvicted writes an ingest node's evicted segments as whole files
	// read back from object storage instead of as stubs, so that the
	// snapshot needs no store (engine.SnapshotDirOptions).
	FetchEvicted bool
}

// ErrSnapshotExists is returned by WriteSnapshot when out exists.
var ErrSnapshotExists = errors.New("snapshot directory exists already")

// WriteSnapshot writes a consistent snapshot of eng and cat to the
// directory out, which must not exist (see above). The engine keeps
// serving meanwhile. `sediment snapshot` calls it on a data directory no
// server holds.
func WriteSnapshot(eng *engine.Engine, cat *catalog.Catalog, out string, o SnapshotOptions) (SnapshotInfo, error) {
	if o.Now == nil {
		o.Now = time.Now
	}
	start := o.Now()
	info := SnapshotInfo{Path: out, CreatedAt: start.UTC().Format(time.RFC3339), Version: o.Version, Commit: o.Commit}
	if _, err := os.Lstat(out); err == nil {
		return info, fmt.Errorf("%w: %s", ErrSnapshotExists, out)
	}
	partial := out + ".partial"
	if err := os.RemoveAll(partial); err != nil { // left by a crash
		return info, err
	}
	if err := os.MkdirAll(partial, 0o755); err != nil {
		return info, err
	}
	err := writeSnapshotDir(eng, cat, partial, o, &info)
	if err == nil {
		info.TookSeconds = o.Now().Sub(start).Seconds()
		err = writeJSONFile(filepath.Join(partial, "snapshot.json"), info, 0o644)
	}
	if err == nil {
		err = os.Rename(partial, out)
	}
	if err == nil {
		err = syncDir(filepath.Dir(out))
	}
	if err != nil {
		os.RemoveAll(partial)
		return info, err
	}
	return info, nil
}

func writeSnapshotDir(eng *engine.Engine, cat *catalog.Catalog, dir string, o SnapshotOptions, info *SnapshotInfo) error {
	tokens, err := cat.WriteCopy(dir)
	if err != nil {
		return fmt.Errorf("copy the catalog: %w", err)
	}
	inCatalog := make(map[string]bool, len(tokens))
	for _, t := range tokens {
		inCatalog[t] = true
	}
	st, err := eng.SnapshotToWith(dir, func(id string) bool { return inCatalog[id] }, engine.SnapshotDirOptions{FetchEvicted: o.FetchEvicted})
	if err != nil {
		return err
	}
	info.Sources, info.Segments, info.SegmentsCopied, info.SegmentBytes = st.Shards, st.Segments, st.SegmentsCopied, st.SegmentBytes
	info.WALFiles, info.WALBytes, info.SegmentsFetched = st.WALFiles, st.WALBytes, st.SegmentsFetched
	for _, f := range o.Files {
		data, err := os.ReadFile(f)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		if err := writeFileSync(filepath.Join(dir, filepath.Base(f)), data, 0o600); err != nil {
			return err
		}
	}
	return nil
}

func writeJSONFile(path string, v any, mode os.FileMode) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return writeFileSync(path, append(data, '\n'), mode)
}

// writeFileSync writes a new file and syncs it and its directory.
func writeFileSync(path string, data []byte, mode os.FileMode) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return err
	}
	_, werr := f.Write(data)
	serr := f.Sync()
	cerr := f.Close()
	if err := errors.Join(werr, serr, cerr); err != nil {
		return err
	}
	return syncDir(filepath.Dir(path))
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	serr := d.Sync()
	return errors.Join(serr, d.Close())
}

// maxSnapshotNameBytes bounds a snapshot's name.
const maxSnapshotNameBytes = 128

// validSnapshotName accepts one path element of letters, digits, '.',
// '-' and '_', not starting with '.' and not ending in ".partial".
func validSnapshotName(n string) bool {
	if n == "" || len(n) > maxSnapshotNameBytes || n[0] == '.' || strings.HasSuffix(n, ".partial") {
		return false
	}
	for i := 0; i < len(n); i++ {
		c := n[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// handleSnapshot answers POST /api/admin/snapshot (private key): it writes
// a snapshot into the server's snapshot directory and answers 201 with its
// SnapshotInfo. The optional "name" (query string or JSON body) names the
// snapshot's directory (default snapshot-<UTC time>); "fetch_evicted=true"
// (or the JSON field) writes an ingest node's evicted segments as whole
// files read back from object storage, so that the snapshot needs no
// store. 400 for a bad name,
// 409 when a snapshot of that name exists or another is being written, 503
// when the server has no snapshot directory.
func (s *Server) handleSnapshot(ctx *fasthttp.RequestCtx) {
	if !s.authorizeManagement(ctx) {
		return
	}
	if s.opts.SnapshotDir == "" {
		sendError(ctx, fasthttp.StatusServiceUnavailable, "snapshots are not configured on this server (sediment serve --snapshot-dir)")
		return
	}
	var req struct {
		Name         string `json:"name"`
		FetchEvicted bool   `json:"fetch_evicted"`
	}
	if !decodeBody(ctx, &req) {
		return
	}
	if q := ctx.QueryArgs().Peek("fetch_evicted"); len(q) > 0 {
		v, err := strconv.ParseBool(string(q))
		if err != nil {
			sendError(ctx, fasthttp.StatusBadRequest, "fetch_evicted must be true or false")
			return
		}
		req.FetchEvicted = req.FetchEvicted || v
	}
	if req.Name == "" {
		req.Name = string(ctx.QueryArgs().Peek("name"))
	}
	if req.Name == "" {
		req.Name = "snapshot-" + s.opts.Now().UTC().Format("20060102T150405Z")
	}
	if !validSnapshotName(req.Name) {
		sendError(ctx, fasthttp.StatusBadRequest, "name must be 1 to 128 letters, digits, '.', '-' or '_', not starting with '.'")
		return
	}
	if !s.snapshotMu.TryLock() {
		sendError(ctx, fasthttp.StatusConflict, "a snapshot is being written; try again once it is done")
		return
	}
	defer s.snapshotMu.Unlock()
	if err := os.MkdirAll(s.opts.SnapshotDir, 0o755); err != nil {
		s.log.Error("create the snapshot directory", "dir", s.opts.SnapshotDir, "err", err)
		sendError(ctx, fasthttp.StatusInternalServerError, "cannot create the snapshot directory: "+err.Error())
		return
	}
	out := filepath.Join(s.opts.SnapshotDir, req.Name)
	if abs, err := filepath.Abs(out); err == nil {
		out = abs // the answer names it unambiguously
	}
	info, err := WriteSnapshot(s.eng, s.cat, out, SnapshotOptions{Files: s.opts.SnapshotFiles,
		Version: s.opts.Version, Commit: s.opts.Commit, Now: s.opts.Now, FetchEvicted: req.FetchEvicted})
	switch {
	case errors.Is(err, ErrSnapshotExists):
		sendError(ctx, fasthttp.StatusConflict, "a snapshot named "+req.Name+" exists already")
	case errors.Is(err, engine.ErrClosed):
		sendStatic(ctx, fasthttp.StatusServiceUnavailable, bodyUnavailable)
	case err != nil:
		s.log.Error("snapshot failed", "path", out, "err", err)
		sendError(ctx, fasthttp.StatusInternalServerError, "snapshot failed: "+err.Error())
	default:
		s.log.Info("snapshot written", "path", out, "sources", info.Sources, "segments", info.Segments, "segments_fetched", info.SegmentsFetched, "wal_files", info.WALFiles)
		sendJSON(ctx, fasthttp.StatusCreated, info)
	}
}
