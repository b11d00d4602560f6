package engine

import (
	"cmp"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/sediment/sediment/internal/vfs"
	"github.com/sediment/sediment/segment"
)

// An ingest node answers a query node's ask for its unsealed events with
// its heads encoded as segment files (remote.WriteUnsealed). Encoding a
// whole head for every ask cost as much as flushing it (a 131k-row head:
// most of a CPU-second), once per query and source, while the head only
// ever grows at its end. So a head is sent as parts, each a segment of a
// range of its rows, and the parts of whole row ranges are kept between
// asks:
//
//	rows:   0 ........ 8192 ....... 16384 ... 17408 ... 18432 ..... 18900
//	parts:  [  level 1: 8192 rows  ][ level 1 ][ lvl 0  ][ lvl 0  ][ tail ]
//	        kept                    kept       kept     kept      encoded per ask
//
// Rows are cut into level-0 parts of headPartRows rows as they fill; once
// headPartFanout level-0 parts make a whole level-1 range (aligned to
// headPartRows*headPartFanout rows), they are encoded again as one part
// and replace the eight. Each row is thus encoded at most twice while
// queries ask, an ask encodes at most headPartRows-1 rows of tail (plus
// the whole parts that filled since the last ask), and a head of 131,072
// rows goes as at most 16+7 parts and a tail. Head rows never change once
// visible, so a kept part stays right until the head is flushed; parts are
// dropped with their head (forgetHeadParts) and kept only within
// Options.HeadPartsCacheBytes across the engine (past it, parts are
// encoded for the ask and not kept).
const (
	headPartRows   = 1024
	headPartFanout = 8
)

// HeadPart is a range of a head's rows encoded as a segment file.
type HeadPart struct {
	// Name names the part for as long as its head lives, across asks:
	// "head-<engine instance>-<head>-<first row>-<end row>" (the instance
	// is random per Open). A part of the same name always holds the same
	// rows, so an asker may keep one and be told it has it.
	Name string
	Data []byte
	// Kept reports whether the part came from (or went into) the cache
	// rather than being encoded for this ask alone: a kept part is sent
	// again as it is while its head lives; the tail is not.
	Kept bool
}

// headPartCache keeps a shard's heads' encoded parts.
type headPartCache struct {
	mu    sync.Mutex
	heads map[*head]*headParts
	seq   uint64
}

// headParts are one head's kept parts, in row order, contiguous from row 0.
type headParts struct {
	mu      sync.Mutex // held while parts are encoded, so that asks share the work
	id      uint64
	parts   []keptPart
	dropped bool // the head is gone: nothing is kept any more
}

type keptPart struct {
	lo, hi int
	data   []byte
}

// headPartBytes counts the bytes of kept parts across all engines of the
// process, against Options.HeadPartsCacheBytes.
var headPartBytes atomic.Int64

// HeadParts encodes the snapshot's heads as segment parts (see the top of
// this file), reusing the parts kept from earlier asks: what an ingest
// node sends a query node for the events it has not sealed yet. Together
// the parts hold every visible row of every head of the snapshot once.
func (sn *Snapshot) HeadParts() ([]HeadPart, error) {
	s := sn.shard
	c := &s.headParts
	live := make(map[*head]bool, len(sn.heads))
	for _, hv := range sn.heads {
		live[hv.h] = true
	}
	var out []HeadPart
	for _, hv := range sn.heads {
		if hv.rows == 0 {
			continue
		}
		hp := c.entry(hv.h)
		parts, err := s.headPartsOf(hv, hp)
		if err != nil {
			return nil, err
		}
		out = append(out, parts...)
	}
	// Heads no longer in the shard's picture were flushed: their parts go.
	s.mu.RLock()
	current := map[*head]bool{s.head: true}
	for _, h := range s.frozen {
		current[h] = true
	}
	s.mu.RUnlock()
	var gone []*headParts
	c.mu.Lock()
	for h, hp := range c.heads {
		if !current[h] && !live[h] {
			delete(c.heads, h)
			gone = append(gone, hp)
		}
	}
	c.mu.Unlock()
	for _, hp := range gone {
		hp.drop()
	}
	return out, nil
}

// entry returns h's kept parts, creating the entry.
func (c *headPartCache) entry(h *head) *headParts {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.heads == nil {
		c.heads = map[*head]*headParts{}
	}
	hp := c.heads[h]
	if hp == nil {
		c.seq++
		hp = &headParts{id: c.seq}
		c.heads[h] = hp
	}
	return hp
}

// forget drops h's parts (h was flushed).
func (c *headPartCache) forget(h *head) {
	c.mu.Lock()
	hp := c.heads[h]
	delete(c.heads, h)
	c.mu.Unlock()
	if hp != nil {
		hp.drop()
	}
}

// dropAll drops every head's parts (the shard closes).
func (c *headPartCache) dropAll() {
	c.mu.Lock()
	heads := c.heads
	c.heads = nil
	c.mu.Unlock()
	for _, hp := range heads {
		hp.drop()
	}
}

// drop lets the parts go (after an ask encoding them ends) and marks the
// entry so that no ask keeps parts in it again.
func (hp *headParts) drop() {
	hp.mu.Lock()
	defer hp.mu.Unlock()
	for _, p := range hp.parts {
		headPartBytes.Add(-int64(len(p.data)))
	}
	hp.parts, hp.dropped = nil, true
}

// headPartsOf returns the parts of hv's rows: kept ones, new whole parts
// (kept while the budget allows), and the tail encoded for this ask.
func (s *Shard) headPartsOf(hv *headView, hp *headParts) ([]HeadPart, error) {
	hp.mu.Lock()
	defer hp.mu.Unlock()
	budget := s.opts.HeadPartsCacheBytes
	if hp.dropped {
		budget = 0
	}
	covered := 0
	if n := len(hp.parts); n > 0 {
		covered = hp.parts[n-1].hi
	}
	// Whole parts that filled since the last ask (a view taken before a
	// newer ask's covers fewer rows: it then uses what lies below it).
	big := headPartRows * headPartFanout
	for covered+headPartRows <= hv.rows && budget > 0 && headPartBytes.Load() < budget {
		lo, hi := covered, covered+headPartRows
		if lo%big == 0 && lo+big <= hv.rows {
			hi = lo + big
		}
		data, err := s.encodeHeadRange(hv, lo, hi)
		if err != nil {
			return nil, err
		}
		hp.keep(keptPart{lo: lo, hi: hi, data: data})
		covered = hi
		// Eight level-0 parts that make a whole level-1 range become one.
		if hi%big == 0 && hi-lo < big {
			first := slices.IndexFunc(hp.parts, func(p keptPart) bool { return p.lo == hi-big })
			if first >= 0 {
				data, err := s.encodeHeadRange(hv, hi-big, hi)
				if err != nil {
					return nil, err
				}
				for _, p := range hp.parts[first:] {
					headPartBytes.Add(-int64(len(p.data)))
				}
				hp.parts = hp.parts[:first]
				hp.keep(keptPart{lo: hi - big, hi: hi, data: data})
			}
		}
	}
	var out []HeadPart
	end := 0
	for _, p := range hp.parts {
		if p.hi > hv.rows {
			break
		}
		out = append(out, HeadPart{Name: s.headPartName(hp.id, p.lo, p.hi), Data: p.data, Kept: true})
		end = p.hi
	}
	if end < hv.rows {
		data, err := s.encodeHeadRange(hv, end, hv.rows)
		if err != nil {
			return nil, err
		}
		out = append(out, HeadPart{Name: s.headPartName(hp.id, end, hv.rows), Data: data})
	}
	return out, nil
}

func (hp *headParts) keep(p keptPart) {
	hp.parts = append(hp.parts, p)
	headPartBytes.Add(int64(len(p.data)))
}

func (s *Shard) headPartName(head uint64, lo, hi int) string {
	return fmt.Sprintf("head-%016x-%d-%d-%d", s.eng.instance, head, lo, hi)
}

// encodeHeadRange writes rows [lo, hi) of hv as a segment file in memory
// (in time order, at the flush's compression level) and returns its bytes.
func (s *Shard) encodeHeadRange(hv *headView, lo, hi int) ([]byte, error) {
	opts := *s.opts
	opts.FS = vfs.NewMemFS()
	tmp := &Shard{id: s.id, dir: "/heads", segDir: "/heads/segments", quarDir: "/heads/quarantine", walDir: "/heads/wal", opts: &opts, eng: s.eng}
	if err := opts.FS.MkdirAll(tmp.segDir); err != nil {
		return nil, err
	}
	ref, err := tmp.writeSegment(1, newHeadRangeSource(hv, lo, hi, opts.BlockRows), segMeta{created: opts.Now().UnixMicro()}, 1)
	if err != nil {
		return nil, err
	}
	ref.r.Close()
	return vfs.ReadFile(opts.FS, ref.path)
}

// newHeadRangeSource presents rows [lo, hi) of a head view in time order,
// with the columns that have a value in them.
func newHeadRangeSource(v *headView, lo, hi, blockRows int) *headSource {
	sub := &headView{h: v.h, rows: v.rows, minTime: v.minTime, maxTime: v.maxTime}
	hs := &headSource{v: sub}
	var ts []int64
	for _, c := range v.cols {
		if c.countBits(lo, hi) == 0 {
			continue
		}
		c.rank = nil // built again for this copy: the view's may be built concurrently
		sub.cols = append(sub.cols, c)
		if c.path == "timestamp" && c.typ == segment.TypeTimestamp {
			ts = c.ints
		}
		hs.cols = append(hs.cols, segment.ColumnDesc{Path: c.path, Type: c.typ, Elem: sortedElems(c.elem)})
	}
	hs.perm = make([]int32, hi-lo)
	for i := range hs.perm {
		hs.perm[i] = int32(lo + i)
	}
	slices.SortStableFunc(hs.perm, func(a, b int32) int { return cmp.Compare(ts[a], ts[b]) })
	hs.specs = timeBlocks(hi-lo, blockRows)
	return hs
}
