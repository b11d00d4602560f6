package engine

// packedBytes holds the values of a packed head column (strings past the
// dictionary, encoded arrays) back to back, in slots that never move: a
// column grows by adding slots instead of copying all its bytes into a
// larger array, so a head holds what it was given (plus at most one
// partly filled slot) rather than a reservation sized for its predecessor
// or the spare half of a doubled array. The bytes were most of a head
// (435 of a platform edge event's 618), and the reservation of a new head
// was made in full while the previous one was still being written out.
//
// Offsets are virtual: slot i covers [i<<headSlotShift, (i+1)<<headSlotShift).
// A value never straddles two slots: one that does not fit in the rest of
// the last slot starts the next one, so a value's start is its
// predecessor's end, or, when the two lie in different slots, the start
// of the slot its end is in (a value longer than a slot gets slots of its
// own, the first holding all of it, the others nil). The column's offs
// keep each value's end, as before, so a value is found from offs alone
// (see at).
//
// Views (headColView) take the slots before the last as they are (no
// writer touches them again) and a copy of the last one's header, which
// appends rewrite.
type packedBytes struct {
	slots [][]byte
	end   uint32 // virtual offset after the last value
	// open says the last slot takes more values; it grows in place (the
	// first slot of a column starts small, later ones are allocated
	// whole). A truncated column starts its next value in a new slot.
	open bool
	// firstCap is the capacity of the first slot (a size hint from the
	// previous head; 0: start small).
	firstCap int
	// pool gives full-size slots of flushed heads (headslots.go); nil:
	// allocate them.
	pool *slotPool
}

// headSlotShift sets the slot size: 64 KiB, small enough that the spare
// room of a column's last slot is little even when many sources each
// have a head, large enough that the gap a value leaves at a slot's end
// (half a value on average) is too. Tests lower it.
var headSlotShift uint = 16

func slotSize() int { return 1 << headSlotShift }

// add appends v and returns the virtual offset after it.
func (p *packedBytes) add(v string) uint32 {
	if v == "" {
		return p.end // where its predecessor ends, in no slot
	}
	size := slotSize()
	if n := len(p.slots); p.open && n > 0 {
		cur := p.slots[n-1]
		if len(cur)+len(v) <= size {
			if len(cur)+len(v) > cap(cur) {
				cur = append(p.newSlot(min(size, max(2*cap(cur), len(cur)+len(v)))), cur...)
			}
			p.slots[n-1] = append(cur, v...)
			p.end += uint32(len(v))
			return p.end
		}
	}
	base := uint32(len(p.slots)) << headSlotShift
	if len(v) > size {
		// Slots of its own; the next value starts after them.
		p.slots = append(p.slots, []byte(v))
		for extra := (len(v) - 1) >> headSlotShift; extra > 0; extra-- {
			p.slots = append(p.slots, nil)
		}
		p.open = false
	} else {
		c := size
		if len(p.slots) == 0 {
			c = min(size, max(p.firstCap, len(v), 1024))
		}
		p.slots = append(p.slots, append(p.newSlot(c), v...))
		p.open = true
	}
	p.end = base + uint32(len(v))
	return p.end
}

// newSlot returns an empty slot of capacity c, from the pool when c is a
// whole slot.
func (p *packedBytes) newSlot(c int) []byte {
	if c == slotSize() {
		if s := p.pool.get(); s != nil {
			return s
		}
	}
	return make([]byte, 0, c)
}

// truncate drops the values after virtual offset end (a value's end, or
// 0). Only staged values are dropped, which no view reads. Within the
// last slot, it is cut back and stays as open as it was: no view holds
// an open slot but as a copy of its header (a truncation that drops
// slots closes the one it keeps, and slots added later lie past it).
// Slots that held only dropped values go; the one end is in is then kept
// as it is (a view may hold it among its fixed slots) and closed.
func (p *packedBytes) truncate(end uint32) {
	if end == p.end {
		return
	}
	keep := 0
	if end > 0 {
		keep = int((end-1)>>headSlotShift) + 1
	}
	if last := max(keep-1, 0); last == len(p.slots)-1 && p.open {
		p.slots[last] = p.slots[last][:int(end-uint32(last)<<headSlotShift)]
		p.end = end
		return
	}
	clear(p.slots[keep:])
	p.slots = p.slots[:keep]
	p.end = end
	p.open = false
}

// at returns the bytes of the value between virtual offsets start (its
// predecessor's end) and end, from a view's slots and last slot.
func packedAt(slots [][]byte, last []byte, start, end uint32) []byte {
	if start == end {
		return nil
	}
	s := uint64(start)
	if start>>headSlotShift != (end-1)>>headSlotShift {
		// It did not fit after its predecessor: it starts a slot.
		s = (s + uint64(slotSize()) - 1) &^ uint64(slotSize()-1)
	}
	i := int(s >> headSlotShift)
	b := last
	if i < len(slots) {
		b = slots[i]
	}
	off := int(s & uint64(slotSize()-1))
	return b[off : off+int(uint64(end)-s)]
}
