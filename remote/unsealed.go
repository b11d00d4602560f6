package remote

import (
	"bytes"
	"fmt"
	"io"
	"slices"

	"github.com/sediment/sediment/engine"
	"github.com/sediment/sediment/internal/vfs"
	"github.com/sediment/sediment/objstore"
)

// UnsealedPath is the ingest nodes' internal route a query node asks
// (POST, JSON UnsealedRequest, authenticated with the cluster key in
// ClusterKeyHeader; the answer is the binary stream of unsealedwire.go).
const UnsealedPath = "/internal/v1/unsealed"

// ClusterKeyHeader carries the key (--cluster-key) nodes share for their
// internal routes.
const ClusterKeyHeader = "X-Sediment-Cluster-Key"

// UnsealedRequest is what a query node asks an ingest node: the events of
// Source that the manifest version it read does not list, given the
// segment names that version lists (all nodes'; the ingest node looks at
// its own).
type UnsealedRequest struct {
	Source string   `json:"source"`
	Listed []string `json:"listed"`
	// KeepsParts says the asker holds head parts between asks: the node
	// marks those it may keep (tag 3, unsealedwire.go) and, for the names
	// in Have (what the asker holds from earlier answers) that it still
	// lists, sends only the name (tag 2).
	KeepsParts bool     `json:"keeps_parts,omitempty"`
	Have       []string `json:"have,omitempty"`
}

// WriteUnsealed writes this node's answer to req: the names of its
// segments req lists that it no longer serves (to skip), its segments req
// does not list, and its heads encoded as segments, all from one snapshot
// of the source's shard, so that with the listed segments a query node
// counts every event of this node once. fs is the engine's file system.
func WriteUnsealed(w io.Writer, eng *engine.Engine, fs vfs.FS, node string, req UnsealedRequest) error {
	if fs == nil {
		fs = vfs.OS
	}
	var sh *engine.Shard
	for _, s := range eng.Shards() {
		if s.ID() == req.Source {
			sh = s
			break
		}
	}
	if sh == nil {
		uw, err := newUnsealedWriter(w, node, nil)
		if err != nil {
			return err
		}
		return uw.end()
	}
	sn := sh.Snapshot()
	defer sn.Release()
	own := sn.OwnSegments()
	ownNames := make(map[string]bool, len(own))
	for _, sg := range own {
		ownNames[objstore.SegmentName(node, sg.ID)] = true
	}
	listed := make(map[string]bool, len(req.Listed))
	var skip []string
	for _, name := range req.Listed {
		listed[name] = true
		if n, _, ok := objstore.ParseSegmentName(name); ok && n == node && !ownNames[name] {
			skip = append(skip, name)
		}
	}
	slices.Sort(skip)
	heads, err := sn.HeadParts()
	if err != nil {
		return fmt.Errorf("remote: encoding the heads of %s: %w", req.Source, err)
	}
	uw, err := newUnsealedWriter(w, node, skip)
	if err != nil {
		return err
	}
	for _, sg := range own {
		name := objstore.SegmentName(node, sg.ID)
		if listed[name] {
			continue
		}
		if sg.Evicted != nil { // listed after the manifest version the query node read
			if err := uw.part(name, io.NewSectionReader(sg.Evicted, 0, sg.Size), sg.Size); err != nil {
				return err
			}
			continue
		}
		f, err := fs.Open(sg.Path)
		if err != nil {
			return err
		}
		err = uw.part(name, io.NewSectionReader(f, 0, sg.Size), sg.Size)
		f.Close()
		if err != nil {
			return err
		}
	}
	have := make(map[string]bool, len(req.Have))
	for _, name := range req.Have {
		have[name] = true
	}
	for _, h := range heads {
		name := node + "/" + h.Name
		var err error
		switch {
		case !req.KeepsParts || !h.Kept:
			err = uw.part(name, bytes.NewReader(h.Data), int64(len(h.Data)))
		case have[name]:
			err = uw.held(name)
		default:
			err = uw.partTagged(keepTag, name, bytes.NewReader(h.Data), int64(len(h.Data)))
		}
		if err != nil {
			return err
		}
	}
	return uw.end()
}
