package engine

import (
	"errors"
	"maps"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/sediment/sediment/event"
	"github.com/sediment/sediment/internal/vfs"
)

// fillUntilFull appends batches of 40 events from next on until the shard
// refuses one, and returns the acknowledged events and the next number.
func fillUntilFull(t testing.TB, s *Shard, next int) (map[string]event.Event, int, error) {
	t.Helper()
	acked := map[string]event.Event{}
	for k := 0; k < 10_000; k++ {
		var batch []event.Event
		for i := 0; i < 40; i++ {
			batch = append(batch, testEvent(next+i, 1_700_000_000_000_000+int64(next+i)*1000))
		}
		if err := s.Append(ctx, batch); err != nil {
			return acked, next + 40, err
		}
		for _, ev := range batch {
			acked[ev.ID] = ev
		}
		next += 40
	}
	t.Fatal("the disk never filled")
	return nil, 0, nil
}

// TestDiskFullRefusesIngestAndResumes fills a small disk through the
// write-ahead log: ingest answers ErrDiskFull and the shard shows
// ConditionDiskFull while queries keep answering; once space is freed a
// probe clears it without a restart, ingest resumes in a fresh log file,
// and every acknowledged event is there, also after a crash and restart.
func TestDiskFullRefusesIngestAndResumes(t *testing.T) {
	for _, mode := range []AckMode{AckSync, AckBuffered} {
		t.Run(mode.String(), func(t *testing.T) {
			fs := vfs.NewMemFS()
			opts := testOptions(fs)
			opts.AckMode = mode
			e := openTestEngine(t, fs, opts)
			defer e.Close()
			s, _ := e.Shard(shardID)
			want := appendRange(t, s, 0, 100, 1_700_000_000_000_000)
			if err := s.Flush(); err != nil {
				t.Fatal(err)
			}
			u, _ := fs.DiskUsage("/")
			fs.SetCapacity(memUnlimitedForTest - u.Free + 100_000) // 100 kB left
			acked, next, err := fillUntilFull(t, s, 100)
			if !errors.Is(err, ErrDiskFull) {
				t.Fatalf("append on a full disk: %v, want ErrDiskFull", err)
			}
			maps.Copy(want, acked)
			c, ok := hasCondition(s, ConditionDiskFull)
			if !ok || !c.RefusesIngest || strings.Contains(c.Detail, "/data") {
				t.Fatalf("condition on a full disk: %+v, %v", c, ok)
			}
			// Refused at once now, without touching the log.
			if err := s.Append(ctx, []event.Event{testEvent(next, 1)}); !errors.Is(err, ErrDiskFull) {
				t.Fatalf("append while full: %v", err)
			}
			// Queries keep working, and see every acknowledged event.
			assertEvents(t, s, want)
			// Still full: the probe fails and the condition stays.
			if err := e.CheckDisk(); !errors.Is(err, ErrDiskFull) {
				t.Fatalf("probe on a full disk: %v", err)
			}
			// The log was cut back to its last acknowledged record: a
			// crash now loses nothing acknowledged and finds no damage.
			if mode == AckSync {
				crashed := openTestEngine(t, fs.CrashClone(), opts)
				cs, _ := crashed.Shard(shardID)
				assertEvents(t, cs, want)
				checkClean(t, crashed)
				crashed.Close()
			}

			fs.SetCapacity(0) // space freed
			if err := e.CheckDisk(); err != nil {
				t.Fatalf("probe after space returned: %v", err)
			}
			if _, ok := hasCondition(s, ConditionDiskFull); ok {
				t.Fatal("condition still raised after the probe succeeded")
			}
			maps.Copy(want, appendRange(t, s, next, next+200, 1_700_000_000_000_000))
			assertEvents(t, s, want)
			checkClean(t, e)
			if err := s.Flush(); err != nil {
				t.Fatal(err)
			}
			assertEvents(t, s, want)
			if mode == AckBuffered {
				if err := e.Close(); err != nil {
					t.Fatal(err)
				}
			}
			e2 := openTestEngine(t, fs.CrashClone(), opts)
			defer e2.Close()
			s2, _ := e2.Shard(shardID)
			assertEvents(t, s2, want)
			checkClean(t, e2)
		})
	}
}

// memUnlimitedForTest is MemFS's size without a capacity.
const memUnlimitedForTest = 1 << 50

// TestFlushOnFullDiskKeepsTheHead fails a flush for lack of space: the
// temporary segment is removed, the head stays readable and in the log,
// ingest is refused, and after space returns the flush goes through.
func TestFlushOnFullDiskKeepsTheHead(t *testing.T) {
	fs := newFaultFS()
	e := openTestEngine(t, fs, nil)
	defer e.Close()
	s, _ := e.Shard(shardID)
	want := appendRange(t, s, 0, 300, 1_700_000_000_000_000)
	fs.set(func(op, path string) error {
		if op == "write" && isSegmentTemp(path) {
			return &vfsError{op, path, syscall.ENOSPC}
		}
		return nil
	})
	err := s.Flush()
	if !errors.Is(err, ErrDiskFull) {
		t.Fatalf("flush on a full disk: %v", err)
	}
	assertNoTempFiles(t, fs, shardID)
	if len(segmentIDs(s)) != 0 {
		t.Fatal("a segment was published")
	}
	assertEvents(t, s, want)
	if _, ok := hasCondition(s, ConditionDiskFull); !ok {
		t.Fatal("no disk_full condition after a flush ran out of space")
	}
	if err := s.Append(ctx, []event.Event{testEvent(999, 1)}); !errors.Is(err, ErrDiskFull) {
		t.Fatalf("append while full: %v", err)
	}
	fs.set(nil)
	if err := e.CheckDisk(); err != nil {
		t.Fatal(err)
	}
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	if len(segmentIDs(s)) != 1 {
		t.Fatal("flush after space returned wrote no segment")
	}
	assertNoTempFiles(t, fs, shardID)
	assertEvents(t, s, want)
	checkClean(t, e)
}

// TestCompactionOnFullDiskKeepsInputs runs out of space mid-compaction:
// the inputs stay, the temporary file goes, and the retry succeeds.
func TestCompactionOnFullDiskKeepsInputs(t *testing.T) {
	fs := newFaultFS()
	e := openTestEngine(t, fs, nil)
	defer e.Close()
	s, _ := e.Shard(shardID)
	want := map[string]event.Event{}
	for k := 0; k < 3; k++ {
		maps.Copy(want, appendRange(t, s, k*100, k*100+100, 1_700_000_000_000_000))
		s.Flush()
	}
	before := segmentIDs(s)
	fs.set(func(op, path string) error {
		if op == "write" && isSegmentTemp(path) {
			return &vfsError{op, path, syscall.ENOSPC}
		}
		return nil
	})
	if _, err := s.Compact(); !vfs.IsNoSpace(err) {
		t.Fatalf("compaction on a full disk: %v", err)
	}
	assertNoTempFiles(t, fs, shardID)
	if got := segmentIDs(s); len(got) != len(before) {
		t.Fatalf("segments %v after a failed compaction, were %v", got, before)
	}
	assertEvents(t, s, want)
	fs.set(nil)
	if n, err := s.Compact(); err != nil || n != 3 {
		t.Fatalf("retry compacted %d: %v", n, err)
	}
	assertEvents(t, s, want)
	checkClean(t, e)
}

// TestFreeSpaceFloor refuses ingest below MinFreeDiskBytes before the disk
// is full, postpones compaction that would go below it, and resumes once
// free space is back above it.
func TestFreeSpaceFloor(t *testing.T) {
	fs := vfs.NewMemFS()
	opts := testOptions(fs)
	opts.MinFreeDiskBytes = 1 << 20
	e := openTestEngine(t, fs, opts)
	defer e.Close()
	s, _ := e.Shard(shardID)
	want := map[string]event.Event{}
	for k := 0; k < 2; k++ {
		maps.Copy(want, appendRange(t, s, k*100, k*100+100, 1_700_000_000_000_000))
		s.Flush()
	}
	if err := e.CheckDisk(); err != nil {
		t.Fatalf("check with plenty of space: %v", err)
	}
	u, _ := fs.DiskUsage("/")
	used := memUnlimitedForTest - u.Free
	fs.SetCapacity(used + 1<<20 - 1) // one byte under the floor
	if err := e.CheckDisk(); !errors.Is(err, ErrDiskFull) {
		t.Fatalf("check under the floor: %v", err)
	}
	c, ok := hasCondition(s, ConditionDiskFull)
	if !ok || !strings.Contains(c.Detail, "below the floor") {
		t.Fatalf("condition under the floor: %+v", c)
	}
	if err := s.Append(ctx, []event.Event{testEvent(500, 1)}); !errors.Is(err, ErrDiskFull) {
		t.Fatalf("append under the floor: %v", err)
	}
	if n, err := s.Compact(); err == nil || n != 0 || !strings.Contains(err.Error(), "postponed") {
		t.Fatalf("compaction under the floor: %d, %v", n, err)
	}
	assertEvents(t, s, want)
	fs.SetCapacity(used + 4<<20)
	if err := e.CheckDisk(); err != nil {
		t.Fatalf("check above the floor: %v", err)
	}
	maps.Copy(want, appendRange(t, s, 200, 300, 1_700_000_000_000_000))
	assertEvents(t, s, want)
	checkClean(t, e)
}

// TestOpenOnFullDisk starts on a disk with no room for a new log file:
// the engine opens, serves what is stored, refuses ingest, and takes
// events once space is back.
func TestOpenOnFullDisk(t *testing.T) {
	fs := vfs.NewMemFS()
	e := openTestEngine(t, fs, nil)
	s, _ := e.Shard(shardID)
	want := appendRange(t, s, 0, 100, 1_700_000_000_000_000)
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	fs.SetCapacity(1) // less than a log file header
	e = openTestEngine(t, fs, nil)
	defer e.Close()
	s, _ = e.Shard(shardID)
	assertEvents(t, s, want)
	if err := s.Append(ctx, []event.Event{testEvent(100, 1)}); !errors.Is(err, ErrDiskFull) {
		t.Fatalf("append on a full disk: %v", err)
	}
	fs.SetCapacity(0)
	if err := e.CheckDisk(); err != nil {
		t.Fatal(err)
	}
	maps.Copy(want, appendRange(t, s, 100, 150, 1_700_000_000_000_000))
	assertEvents(t, s, want)
	names, _ := fs.List(filepath.Join("/data/sources", shardID, "wal"))
	if len(names) == 0 {
		t.Fatal("no log file after ingest resumed")
	}
	checkClean(t, e)
}
