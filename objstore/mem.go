package objstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// MemStore is a Store in memory, for tests. Besides behaving as S3 does
// for the operations of Store (conditional puts, ranged gets, ETags), it
// injects the failures a real store has:
//
//   - FailCall(n): the n-th call from now fails as if the network dropped
//     it (ErrUnavailable), once;
//   - SetDown(true) ... SetDown(false): the store goes away (every call
//     fails with ErrUnavailable) and comes back with its objects;
//   - BeforeConditionalPut(fn): fn runs just before a conditional put
//     checks its condition, so a test can write the object there and make
//     the put lose the race;
//   - CorruptNextPut(): the next Put stores its bytes with one flipped,
//     as a faulty server or network would (Put must notice);
//   - LoseAnswer(n): the n-th call from now is carried out, but its
//     answer is lost (ErrUnavailable): the caller cannot tell whether it
//     happened.
//
// The zero value is not usable; call NewMemStore.
type MemStore struct {
	now func() time.Time

	mu      sync.Mutex
	objects map[string]*memObject
	seq     uint64 // ETags

	calls      atomic.Int64
	failAt     atomic.Int64 // call number that fails; 0 none
	loseAt     atomic.Int64 // call number whose answer is lost; 0 none
	down       atomic.Bool
	corruptPut atomic.Bool
	beforeCond atomic.Pointer[func(key string)]

	gets, getBytes, puts, heads, lists, deletes atomic.Int64
}

type memObject struct {
	data     []byte
	etag     string
	modified time.Time
	sum      Checksum
}

// NewMemStore returns an empty store whose clock (for ObjectInfo.Modified)
// is now (nil: time.Now).
func NewMemStore(now func() time.Time) *MemStore {
	if now == nil {
		now = time.Now
	}
	return &MemStore{now: now, objects: map[string]*memObject{}}
}

// errMemDown is the cause MemStore gives for injected failures.
var errMemDown = errors.New("memstore: connection refused (injected)")

// FailCall makes the n-th call from now (1: the next one) fail with
// ErrUnavailable without doing anything. Calls are counted across all
// goroutines.
func (m *MemStore) FailCall(n int64) { m.failAt.Store(m.calls.Load() + n) }

// LoseAnswer makes the n-th call from now (1: the next one) happen but
// fail with ErrUnavailable, as when the connection drops after the store
// acted.
func (m *MemStore) LoseAnswer(n int64) { m.loseAt.Store(m.calls.Load() + n) }

// ClearFaults cancels the failures injected and not yet happened.
func (m *MemStore) ClearFaults() {
	m.failAt.Store(0)
	m.loseAt.Store(0)
	m.down.Store(false)
	m.corruptPut.Store(false)
	m.beforeCond.Store(nil)
}

// SetDown makes every call fail with ErrUnavailable (true) until it is
// called with false; the objects stay.
func (m *MemStore) SetDown(down bool) { m.down.Store(down) }

// BeforeConditionalPut sets fn to run (once per conditional put, outside
// the store's lock) before the put checks its condition; nil removes it.
func (m *MemStore) BeforeConditionalPut(fn func(key string)) {
	if fn == nil {
		m.beforeCond.Store(nil)
		return
	}
	m.beforeCond.Store(&fn)
}

// CorruptNextPut makes the next Put store its bytes with the first one
// flipped, as the server computing its checksum over damaged bytes would.
func (m *MemStore) CorruptNextPut() { m.corruptPut.Store(true) }

// MemStats counts the calls a MemStore served (failed ones excluded).
type MemStats struct {
	Gets, GetBytes, Puts, Heads, Lists, Deletes int64
}

// Stats returns the counts so far.
func (m *MemStore) Stats() MemStats {
	return MemStats{Gets: m.gets.Load(), GetBytes: m.getBytes.Load(), Puts: m.puts.Load(),
		Heads: m.heads.Load(), Lists: m.lists.Load(), Deletes: m.deletes.Load()}
}

// Keys returns every key stored, sorted.
func (m *MemStore) Keys() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	keys := make([]string, 0, len(m.objects))
	for k := range m.objects {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// SetModified changes an object's modification time, as if it had been
// stored at t (for garbage collection tests).
func (m *MemStore) SetModified(key string, t time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if o := m.objects[key]; o != nil {
		o.modified = t
	}
}

// String names the store.
func (m *MemStore) String() string { return "mem" }

// enter counts a call and returns its number and the injected failure,
// if any.
func (m *MemStore) enter(ctx context.Context, op, key string) (int64, error) {
	n := m.calls.Add(1)
	if err := ctx.Err(); err != nil {
		return n, opErr(op, key, nil, err)
	}
	if m.down.Load() {
		return n, opErr(op, key, ErrUnavailable, errMemDown)
	}
	if f := m.failAt.Load(); f > 0 && n == f {
		return n, opErr(op, key, ErrUnavailable, errMemDown)
	}
	return n, nil
}

// errLostAnswer is the cause given for a call whose answer was lost.
var errLostAnswer = errors.New("memstore: connection reset after the request was sent (injected)")

// lost returns the error of call n if its answer is to be lost.
func (m *MemStore) lost(n int64, op, key string) error {
	if l := m.loseAt.Load(); l > 0 && n == l {
		return opErr(op, key, ErrUnavailable, errLostAnswer)
	}
	return nil
}

func (o *memObject) info(key string) ObjectInfo {
	return ObjectInfo{Key: key, Size: int64(len(o.data)), ETag: o.etag, Modified: o.modified, Sum: o.sum}
}

// Get implements Store.
func (m *MemStore) Get(ctx context.Context, key string, opts GetOptions) (io.ReadCloser, ObjectInfo, error) {
	call, err := m.enter(ctx, "get", key)
	if err != nil {
		return nil, ObjectInfo{}, err
	}
	if opts.Offset < 0 || opts.Length < 0 {
		return nil, ObjectInfo{}, opErr("get", key, nil, fmt.Errorf("bad range %d+%d", opts.Offset, opts.Length))
	}
	m.mu.Lock()
	o := m.objects[key]
	m.mu.Unlock()
	if o == nil {
		return nil, ObjectInfo{}, opErr("get", key, ErrNotExist, errors.New("no such key"))
	}
	if opts.IfMatch != "" && opts.IfMatch != o.etag {
		return nil, ObjectInfo{}, opErr("get", key, ErrPrecondition, fmt.Errorf("etag %s, not %s", o.etag, opts.IfMatch))
	}
	if opts.IfNoneMatch != "" && opts.IfNoneMatch == o.etag {
		m.gets.Add(1)
		return nil, ObjectInfo{}, opErr("get", key, ErrNotModified, errors.New("304 not modified"))
	}
	size := int64(len(o.data))
	from := min(opts.Offset, size)
	to := size
	if opts.Length > 0 {
		to = min(from+opts.Length, size)
	}
	// o.data is never modified once stored (a put replaces the object).
	m.gets.Add(1)
	m.getBytes.Add(to - from)
	if err := m.lost(call, "get", key); err != nil {
		return nil, ObjectInfo{}, err
	}
	return io.NopCloser(bytes.NewReader(o.data[from:to])), o.info(key), nil
}

// Put implements Store.
func (m *MemStore) Put(ctx context.Context, key string, body io.ReaderAt, size int64, opts PutOptions) (ObjectInfo, error) {
	call, err := m.enter(ctx, "put", key)
	if err != nil {
		return ObjectInfo{}, err
	}
	if opts.IfNoneMatch && opts.IfMatch != "" {
		return ObjectInfo{}, opErr("put", key, nil, errors.New("IfNoneMatch and IfMatch together"))
	}
	if size < 0 {
		return ObjectInfo{}, opErr("put", key, nil, fmt.Errorf("bad size %d", size))
	}
	data := make([]byte, size)
	if n, err := body.ReadAt(data, 0); int64(n) < size {
		if err == nil || errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return ObjectInfo{}, opErr("put", key, nil, fmt.Errorf("read body: %w", err))
	}
	sent := SumBytes(data) // what the client computed while sending
	if m.corruptPut.CompareAndSwap(true, false) && size > 0 {
		data[0] ^= 0xff
	}
	conditional := opts.IfNoneMatch || opts.IfMatch != ""
	if fn := m.beforeCond.Load(); conditional && fn != nil {
		(*fn)(key)
	}
	m.mu.Lock()
	cur := m.objects[key]
	switch {
	case opts.IfNoneMatch && cur != nil:
		m.mu.Unlock()
		return ObjectInfo{}, opErr("put", key, ErrPrecondition, errors.New("object exists"))
	case opts.IfMatch != "" && (cur == nil || cur.etag != opts.IfMatch):
		m.mu.Unlock()
		return ObjectInfo{}, opErr("put", key, ErrPrecondition, fmt.Errorf("etag is not %s", opts.IfMatch))
	}
	m.seq++
	stored := SumBytes(data) // what the server computed over what it got
	o := &memObject{data: data, etag: fmt.Sprintf("%016x", m.seq), modified: m.now(),
		sum: Checksum{CRC32C: stored.CRC32C, HasCRC: true, SHA256: sent.SHA256, HasSHA: true}}
	m.objects[key] = o
	m.mu.Unlock()
	m.puts.Add(1)
	if err := m.lost(call, "put", key); err != nil {
		return ObjectInfo{}, err
	}
	info := o.info(key)
	if info.Sum.CRC32C != sent.CRC32C {
		return info, opErr("put", key, ErrChecksum, fmt.Errorf("sent crc32c:%08x, stored crc32c:%08x", sent.CRC32C, info.Sum.CRC32C))
	}
	return info, nil
}

// Head implements Store.
func (m *MemStore) Head(ctx context.Context, key string) (ObjectInfo, error) {
	call, err := m.enter(ctx, "head", key)
	if err != nil {
		return ObjectInfo{}, err
	}
	m.mu.Lock()
	o := m.objects[key]
	m.mu.Unlock()
	if o == nil {
		return ObjectInfo{}, opErr("head", key, ErrNotExist, errors.New("no such key"))
	}
	m.heads.Add(1)
	return o.info(key), m.lost(call, "head", key)
}

// List implements Store.
func (m *MemStore) List(ctx context.Context, prefix string) ([]ObjectInfo, error) {
	call, err := m.enter(ctx, "list", prefix)
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	var out []ObjectInfo
	for k, o := range m.objects {
		if strings.HasPrefix(k, prefix) {
			info := o.info(k)
			info.Sum = Checksum{} // List does not report sums
			out = append(out, info)
		}
	}
	m.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	m.lists.Add(1)
	if err := m.lost(call, "list", prefix); err != nil {
		return nil, err
	}
	return out, nil
}

// Delete implements Store.
func (m *MemStore) Delete(ctx context.Context, key string) error {
	call, err := m.enter(ctx, "delete", key)
	if err != nil {
		return err
	}
	m.mu.Lock()
	delete(m.objects, key)
	m.mu.Unlock()
	m.deletes.Add(1)
	return m.lost(call, "delete", key)
}

var _ Store = (*MemStore)(nil)
