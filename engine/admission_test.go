package engine

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/sediment/sediment/event"
)

// admissionSetup opens a shard whose heads hold 10 events and whose
// background flush blocks while the returned channel is open: the first
// full head is frozen and stays being written, so the shard's backlog
// (MaxFrozenHeads 1) is full.
func admissionSetup(t *testing.T, wait time.Duration) (*Shard, chan struct{}) {
	t.Helper()
	fs := newFaultFS()
	block := make(chan struct{})
	fs.set(func(op, path string) error {
		if op == "write" && isSegmentTemp(path) {
			<-block
		}
		return nil
	})
	opts := backgroundOptions(fs)
	opts.HeadMaxRows = 10
	opts.MaxFrozenHeads = 1
	opts.AdmissionWait = wait
	e := openTestEngine(t, fs, opts)
	t.Cleanup(func() {
		select {
		case <-block:
		default:
			close(block)
		}
		e.Close()
	})
	s, err := e.Shard("src")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Append(context.Background(), tenEvents(0)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the full head to be frozen", func() bool {
		s.mu.RLock()
		defer s.mu.RUnlock()
		return len(s.frozen) == 1
	})
	return s, block
}

func tenEvents(from int) []event.Event {
	evs := make([]event.Event, 10)
	for i := range evs {
		evs[i] = testEvent(from+i, 1_700_000_000_000_000+int64(from+i))
	}
	return evs
}

// TestAppendWaitsForFlush: an append that finds the shard's backlog full
// waits for the head being written, and is stored once it is, rather than
// refused.
func TestAppendWaitsForFlush(t *testing.T) {
	s, block := admissionSetup(t, time.Hour)
	done := make(chan error, 1)
	go func() { done <- s.Append(context.Background(), tenEvents(10)) }()
	waitFor(t, "the append to wait", func() bool { return s.Admission().Waiting == 1 })
	select {
	case err := <-done:
		t.Fatalf("append returned (%v) while the backlog was full", err)
	default:
	}
	close(block)
	if err := <-done; err != nil {
		t.Fatalf("append after the flush: %v", err)
	}
	if st := s.Admission(); st.Delayed != 1 || st.Refused != 0 || st.Waiting != 0 || st.DelayedFor <= 0 {
		t.Fatalf("admission stats %+v, want one delayed append and none refused", st)
	}
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	if n := len(readAll(t, s)); n != 20 {
		t.Fatalf("%d events stored, want 20", n)
	}
}

// TestAppendRefusedAfterAdmissionWait: when no head is written out within
// the admission wait, the append is refused with the bound that was
// reached, and nothing of it is stored.
func TestAppendRefusedAfterAdmissionWait(t *testing.T) {
	s, block := admissionSetup(t, time.Millisecond)
	err := s.Append(context.Background(), tenEvents(10))
	var bp *BackpressureError
	if !errors.As(err, &bp) || !errors.Is(err, ErrBackpressure) || bp.Reason != BackpressureFrozenHeads || bp.Waited <= 0 {
		t.Fatalf("append: %v, want a *BackpressureError for frozen_heads after a wait", err)
	}
	if st := s.Admission(); st.Refused != 1 || st.Delayed != 1 {
		t.Fatalf("admission stats %+v", st)
	}
	close(block)
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	if n := len(readAll(t, s)); n != 10 {
		t.Fatalf("%d events stored, want the 10 accepted", n)
	}
}

// TestAppendBatchCancelledWhileWaiting: a waiting append ends with its
// context.
func TestAppendBatchCancelledWhileWaiting(t *testing.T) {
	s, _ := admissionSetup(t, time.Hour)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Append(ctx, tenEvents(10)) }()
	waitFor(t, "the append to wait", func() bool { return s.Admission().Waiting == 1 })
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("append: %v, want context.Canceled", err)
	}
}
