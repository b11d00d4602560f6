package engine

import (
	"errors"
	"fmt"
	"math"
	"math/bits"

	"github.com/sediment/sediment/event"
	"github.com/sediment/sediment/segment"
)

// A head holds at most Options.MaxColumns columns, and a segment what its
// head held. No event may lose a field because other events used the
// columns up, so an event that needs a column a full head cannot take goes
// to a new head, and the full one is frozen and flushed. Heads and
// write-ahead log files go together (a flush deletes the files of the
// head it wrote, and replay skips the files a segment covers), so the new
// head starts a new log file too: the committer stages a group's events
// in the head first, finds where they overflow, and only then writes each
// head's records to its own log file. Replay splits heads the same way, at
// file boundaries. With Options.MaxEventFields at most MaxColumns-3, every
// event fits an empty head; fields that still cannot be stored (a path too
// long for a segment) are counted per source.

// headMark is a head's state before an event was staged, to take the event
// back out.
type headMark struct {
	staged, cols, bytes  int
	stagedMin, stagedMax int64
	droppedFields        int64
}

func (h *head) mark() headMark {
	return headMark{staged: h.staged, cols: len(h.cols), bytes: h.bytes,
		stagedMin: h.stagedMin, stagedMax: h.stagedMax, droppedFields: h.droppedFields}
}

// truncate takes every row staged since m back out of the head: their
// values, and the columns they created. Visible rows are never touched.
func (h *head) truncate(m headMark) {
	from := h.rows + m.staged
	for _, c := range h.cols[:m.cols] {
		c.truncateRows(from)
	}
	for _, c := range h.cols[m.cols:] {
		c.node.cols[c.typ] = nil
	}
	clear(h.cols[m.cols:])
	h.cols = h.cols[:m.cols]
	h.staged, h.bytes = m.staged, m.bytes
	h.stagedMin, h.stagedMax = m.stagedMin, m.stagedMax
	h.droppedFields = m.droppedFields
	h.capSkipped = 0
}

// publish makes the staged rows visible.
func (h *head) publish() {
	if h.staged == 0 {
		return
	}
	h.rows += h.staged
	h.staged = 0
	h.minTime = min(h.minTime, h.stagedMin)
	h.maxTime = max(h.maxTime, h.stagedMax)
	h.stagedMin, h.stagedMax = math.MaxInt64, math.MinInt64
}

// truncateRows drops the column's values of rows from on. Those rows are
// staged, so no view can see them: views copy the presence words from the
// first not wholly visible one on, and never read values past the ones
// their presence bits count.
func (c *headColumn) truncateRows(from int) {
	w := from >> 6
	if w >= len(c.present) {
		return
	}
	keep := uint64(1)<<(uint(from)&63) - 1
	k := bits.OnesCount64(c.present[w] &^ keep)
	for _, x := range c.present[w+1:] {
		k += bits.OnesCount64(x)
	}
	c.present[w] &= keep
	clear(c.present[w+1:])
	c.present = c.present[:w+1]
	if k == 0 {
		return
	}
	c.n -= k
	switch c.typ {
	case segment.TypeBool:
		c.bools = c.bools[:c.n]
	case segment.TypeInt64, segment.TypeTimestamp:
		c.ints = c.ints[:c.n]
	case segment.TypeFloat64:
		c.floats = c.floats[:c.n]
	case segment.TypeString, segment.TypeArray:
		if c.dict != nil {
			// Dictionary entries the rows added stay: unused, harmless.
			c.codes = c.codes[:c.n]
		} else {
			c.offs = c.offs[:c.n+1]
			c.packed.truncate(c.offs[c.n])
		}
	}
}

// stagePlan says where a commit group's events went: heads[0] is the
// shard's head, later ones are new heads (not yet the shard's) that each
// start a new log file. pieces[k] are the event ranges staged in heads[k],
// in log order; marks[k] is heads[k]'s state before the group.
type stagePlan struct {
	heads  []*head
	marks  []headMark
	pieces [][]eventRange
	// last[i] is the index of the last head holding events of group[i]
	// (-1 for a request without events).
	last []int
}

// eventRange is events [from, to) of one request.
type eventRange struct {
	req      *appendReq
	from, to int
}

// stage adds the group's events to h as staged rows, moving on to new
// heads where an event needs a column h cannot take. Only the committer
// calls it; new heads are private to it until rotate installs them. An
// error (an event that does not decode) leaves h with rows staged: the
// caller takes them back out (truncate to marks[0]).
func (s *Shard) stage(h *head, group []*appendReq) (*stagePlan, error) {
	p := &stagePlan{heads: []*head{h}, pieces: make([][]eventRange, 1), last: make([]int, len(group))}
	h.mu.Lock()
	defer h.mu.Unlock()
	p.marks = append(p.marks, h.mark())
	cur := h
	for gi, r := range group {
		p.last[gi] = -1
		from, n := 0, r.events()
		for i := 0; i < n; i++ {
			m := cur.mark()
			if err := cur.addEncoded(r.batch.Event(i)); err != nil {
				return p, fmt.Errorf("shard %s: event %d of a batch: %w", s.id, i, err)
			}
			if cur.capSkipped == 0 {
				continue
			}
			if cur.rows+m.staged == 0 {
				// Too wide for an empty head (MaxEventFields is clamped so
				// that this cannot happen): keep what fits, count the rest.
				cur.droppedFields += cur.capSkipped
				cur.capSkipped = 0
				continue
			}
			cur.truncate(m)
			k := len(p.heads) - 1
			if i > from {
				p.pieces[k] = append(p.pieces[k], eventRange{r, from, i})
				p.last[gi] = k
			}
			cur = s.startHead(s.opts.Now(), 0)
			p.heads = append(p.heads, cur)
			p.marks = append(p.marks, cur.mark())
			p.pieces = append(p.pieces, nil)
			from = i
			i-- // add it again, to the new head
		}
		if from < n {
			k := len(p.heads) - 1
			p.pieces[k] = append(p.pieces[k], eventRange{r, from, n})
			p.last[gi] = k
		}
	}
	return p, nil
}

// logRecords returns the log records of the events staged in heads[k],
// in log order, appended to recs: a request's own records when the head
// holds all its events (its buffer, not a copy: the request waits for the
// commit, so the buffer stays as it is), else a record of the range,
// built in scratch, which is returned for reuse.
func (p *stagePlan) logRecords(recs [][]byte, scratch []byte, k int) ([][]byte, []byte) {
	// Records built in scratch are sliced once it stops growing.
	type built struct{ at, start, end int }
	var ranges []built
	var raw []byte
	for _, er := range p.pieces[k] {
		if er.from == 0 && er.to == er.req.events() {
			recs = append(recs, er.req.rec)
			continue
		}
		start := len(scratch)
		scratch, raw = er.req.batch.appendRangeRecord(scratch, raw, er.from, er.to)
		ranges = append(ranges, built{len(recs), start, len(scratch)})
		recs = append(recs, nil)
	}
	for _, b := range ranges {
		recs[b.at] = scratch[b.start:b.end]
	}
	return recs, scratch
}

// errHeadSplit stops the replay of a file that must start a new head.
var errHeadSplit = errors.New("engine: log file starts a new head")

// replayWAL replays one log file into the shard's head, as startup does,
// and returns what reading the file found (walReplay). When the file's events need columns
// the head cannot take, the head is frozen at the end of the previous file
// and the file replayed into a new one, as the committer split them: a
// head and its log files stay together. Only a file too wide for a head of
// its own (written by an older version, or before MaxColumns was lowered)
// loses fields, which are counted.
func (s *Shard) replayWAL(path string, seq uint64, tail tailMode, scratch *[]byte) (*walParse, error) {
	for split := false; ; split = true {
		h := s.head
		m := h.mark()
		fresh := h.rows+h.staged == 0
		p, err := walReplay(s.opts.FS, path, tail, func(evs []event.Event) error {
			for j := range evs {
				*scratch = h.add(&evs[j], *scratch)
				if h.capSkipped == 0 {
					continue
				}
				if !fresh && !split {
					return errHeadSplit
				}
				h.droppedFields += h.capSkipped
				h.capSkipped = 0
			}
			return nil
		})
		if errors.Is(err, errHeadSplit) {
			h.truncate(m)
			h.publish()
			h.frozen = true
			h.walLast = seq - 1
			s.frozen = append(s.frozen, h)
			s.head = s.startHead(s.opts.Now(), seq)
			continue
		}
		h.publish()
		s.countDroppedFields(h.droppedFields - m.droppedFields)
		return p, err
	}
}
