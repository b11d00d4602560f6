package engine

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync/atomic"

	"github.com/sediment/sediment/segment"
)

// External supplies parts of a shard that live outside this engine: on a
// query node (docs/scale.md), the segments its manifest lists in object
// storage and the events ingest nodes have not published yet. With
// Options.External set, every Snapshot of a shard includes them besides
// the shard's own segments and heads (a query node has none of those).
//
// An implementation outside the engine (remote.QuerySource) does the I/O;
// the engine only reads the segments it is handed.
type External interface {
	// Parts returns the segments a snapshot of shard includes now, and
	// gaps: what it cannot include (an ingest node or the store that did
	// not answer), each a sentence a client reads in the answer's
	// warnings. It is called without locks held, once per snapshot; it
	// bounds its own time.
	Parts(shard string) (parts []ExternalPart, gaps []string)
}

// ExternalPart is one segment of an External source.
type ExternalPart struct {
	// Name identifies it in logs and errors, e.g. "n1/000000000000002a.seg".
	Name string
	// Reader is the open segment; Release is called once the snapshots
	// that include it are done with it (nil: Reader.Close).
	Reader  *segment.Reader
	Release func()
}

// PartialError is a query's failure to include events it cannot reach
// (External gaps) when the query has no place for warnings.
type PartialError struct {
	Source string
	Cause  string
}

func (e *PartialError) Error() string {
	return fmt.Sprintf("source %s: the answer would miss events: %s", e.Source, e.Cause)
}

// externalIDs numbers external segments in a range no shard's own ids
// reach, so that they never collide with them.
var externalIDs atomic.Uint64

const externalIDBase = 1 << 62

// addExternal adds what Options.External supplies to sn.
func (sn *Snapshot) addExternal(s *Shard) {
	parts, gaps := s.opts.External.Parts(s.id)
	for _, p := range parts {
		ref, err := externalSegRef(s, p)
		if err != nil {
			gaps = append(gaps, externalReadGap(p.Name, err))
			continue
		}
		sn.segs = append(sn.segs, ref)
	}
	slices.SortFunc(sn.segs, func(a, b *segRef) int {
		amin, _ := a.r.TimeRange()
		bmin, _ := b.r.TimeRange()
		if c := cmp.Compare(amin, bmin); c != 0 {
			return c
		}
		return cmp.Compare(a.id, b.id)
	})
	if len(gaps) > 0 {
		lost := slices.Clip(sn.walLost) // never append into the shard's own
		for _, g := range gaps {
			lost = append(lost, lostUnit{kind: lossRemote, rows: -1, minTime: math.MinInt64, maxTime: math.MaxInt64, cause: g})
		}
		sn.walLost = lost
	}
}

// externalSegRef wraps an external segment for scans. It is in no
// shard's list of segments, so damage found in it is reported but never
// recorded on this node's disk (markBlockDamaged).
func externalSegRef(s *Shard, p ExternalPart) (*segRef, error) {
	release := p.Release
	if release == nil {
		release = func() { p.Reader.Close() }
	}
	if p.Reader.Column("timestamp", segment.TypeTimestamp) < 0 {
		release()
		return nil, errors.New("no timestamp column")
	}
	mb, err := p.Reader.Section(sectionMeta)
	if err != nil {
		release()
		return nil, err
	}
	meta, err := decodeSegMeta(mb)
	if err == nil && meta.sortKey != "" && len(meta.blocks) != p.Reader.NumBlocks() {
		err = fmt.Errorf("%w: %d blocks described, the footer has %d", errBadMeta, len(meta.blocks), p.Reader.NumBlocks())
	}
	if err != nil {
		release()
		return nil, err
	}
	ref := &segRef{id: externalIDBase + externalIDs.Add(1), path: p.Name, r: p.Reader, meta: meta, shard: s, extRelease: release}
	ref.refs.Store(1)
	return ref, nil
}
