//go:build soak && linux

package soak

import (
	"fmt"
	"strconv"
	"sync"
	"testing"

	"github.com/sediment/sediment/bench/gen"
)

// Every event the harness sends carries an id it chose, which says where
// it came from, so that the final check can tell, for each id it reads
// back, which request sent it and what the server answered:
//
//	rrrrrrrr-ssss-4k0o-8000-qqqqqqqqqqqq
//
// r: the run's nonce (32 bits), s: the stream (one per sender), k: the
// source (gen.Source, one hex digit), o: 1 for an event stamped older than
// the source's retention, q: the event's sequence number in its stream
// (48 bits). Every attempt to send an event uses new sequence numbers, so
// an id names one request, and seeing one twice is a duplicate the server
// made, never a retry the client made.

// eventRef is what an event id says.
type eventRef struct {
	run    uint32
	stream uint16
	src    gen.Source
	old    bool
	seq    uint64
}

// appendEventID appends the id of ref to dst.
func appendEventID(dst []byte, ref eventRef) []byte {
	old := 0
	if ref.old {
		old = 1
	}
	return fmt.Appendf(dst, "%08x-%04x-4%x0%x-8000-%012x", ref.run, ref.stream, uint8(ref.src)&0xf, old, ref.seq&(1<<48-1))
}

// parseEventID reads an id written by appendEventID.
func parseEventID(id string) (eventRef, bool) {
	if len(id) != 36 || id[8] != '-' || id[13] != '-' || id[18] != '-' || id[23] != '-' ||
		id[14] != '4' || id[16] != '0' || id[19:23] != "8000" {
		return eventRef{}, false
	}
	hex := func(s string, bits int) (uint64, bool) {
		v, err := strconv.ParseUint(s, 16, bits)
		return v, err == nil
	}
	run, ok1 := hex(id[0:8], 32)
	stream, ok2 := hex(id[9:13], 16)
	src, ok3 := hex(id[15:16], 8)
	old, ok4 := hex(id[17:18], 8)
	seq, ok5 := hex(id[24:36], 64)
	if !ok1 || !ok2 || !ok3 || !ok4 || !ok5 || old > 1 || src >= uint64(len(gen.AllSources())) {
		return eventRef{}, false
	}
	return eventRef{run: uint32(run), stream: uint16(stream), src: gen.Source(src), old: old == 1, seq: seq}, true
}

// sendState is what became of one attempt to send an event.
type sendState uint8

const (
	stateNone     sendState = iota // never sent (a hole cannot happen; checked)
	stateInDoubt                   // sent, no answer (the server was killed, or the run ended)
	stateAcked                     // answered 200
	stateRefused                   // answered 429, 503 or 507: not stored, to be sent again
	stateRejected                  // answered anything else (a failure of its own)
)

// A mark packs an event's state, source and retention flag in a byte.
const (
	markStateMask = 0x7
	markSrcShift  = 3
	markSrcMask   = 0xf << markSrcShift
	markOld       = 0x80
)

// stream is one sender's sequence of events: the mark of each sequence
// number. Its sender writes it; the spot checks after restarts read it.
type stream struct {
	id    uint16
	mu    sync.Mutex
	marks []uint8
}

// reserve takes sequence numbers for a batch (one per event, its source
// src and the retention flag of each) and marks them in doubt; it returns
// the first.
func (s *stream) reserve(src gen.Source, old []bool) uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	first := uint64(len(s.marks))
	for _, o := range old {
		m := uint8(stateInDoubt) | uint8(src)<<markSrcShift
		if o {
			m |= markOld
		}
		s.marks = append(s.marks, m)
	}
	return first
}

// settle records the server's answer for n events from first.
func (s *stream) settle(first uint64, n int, st sendState) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := first; i < first+uint64(n); i++ {
		s.marks[i] = s.marks[i]&^markStateMask | uint8(st)
	}
}

// mark returns the state, source and retention flag of seq (ok false when
// seq was never reserved).
func (s *stream) mark(seq uint64) (st sendState, src gen.Source, old, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if seq >= uint64(len(s.marks)) {
		return 0, 0, false, false
	}
	m := s.marks[seq]
	return sendState(m & markStateMask), gen.Source(m & markSrcMask >> markSrcShift), m&markOld != 0, true
}

// snapshot returns a copy of the marks.
func (s *stream) snapshot() []uint8 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]uint8(nil), s.marks...)
}

// lastAcked returns the ids of up to n of the newest acknowledged events of
// src inside retention.
func (s *stream) lastAcked(run uint32, src gen.Source, n int) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var ids []string
	for i := len(s.marks) - 1; i >= 0 && len(ids) < n; i-- {
		m := s.marks[i]
		if sendState(m&markStateMask) == stateAcked && m&markOld == 0 && gen.Source(m&markSrcMask>>markSrcShift) == src {
			ids = append(ids, string(appendEventID(nil, eventRef{run: run, stream: s.id, src: src, seq: uint64(i)})))
		}
	}
	return ids
}

// TestEventIDRoundTrip checks that every id the harness writes reads back
// as what it was written from, and that other ids are not taken for ours.
func TestEventIDRoundTrip(t *testing.T) {
	for _, ref := range []eventRef{
		{run: 0xdeadbeef, stream: 3, src: gen.PgBouncerLogs, old: true, seq: 1<<48 - 1},
		{run: 1, stream: 0xffff, src: gen.EdgeLogs, seq: 0},
		{run: 42, stream: 7, src: gen.AuthLogs, seq: 123456},
	} {
		id := string(appendEventID(nil, ref))
		got, ok := parseEventID(id)
		if !ok || got != ref {
			t.Errorf("%s reads back as %+v (%v), want %+v", id, got, ok, ref)
		}
	}
	for _, id := range []string{"", "0b6e3c5e-2b1a-4c7e-9a55-3d2f1c0b9e8d", "deadbeef-0003-4810-8000-00000000000g", "deadbeef-0003-4f10-8000-000000000001"} {
		if ref, ok := parseEventID(id); ok {
			t.Errorf("%q read as %+v", id, ref)
		}
	}
}
