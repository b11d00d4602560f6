package objstore

import (
	"container/list"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	iofs "io/fs"
	"log/slog"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sediment/sediment/internal/vfs"
)

// The cache keeps byte ranges of objects in a local directory:
//
//	<dir>/<object dir>/<chunk index:%016x>.chunk      a chunk (below)
//	<dir>/<object dir>/<chunk index:%016x>.chunk.tmp  a chunk being written
//
//	chunk file: +--------------------------+----------------------------------+
//	            | data: the chunk's bytes  | CRC-32C of each 16 KiB piece of  |
//	            | (ChunkBytes, or less for | data, in order, 4 bytes LE each  |
//	            | the object's last chunk) | (the last piece may be shorter)  |
//	            +--------------------------+----------------------------------+
//
// A read of a cached chunk reads and checks only the pieces it needs.
// An object is cut into chunks of ChunkBytes aligned on multiples of it
// (the last one shorter); a read fetches the chunks it touches that are
// not here, adjacent ones in one ranged GET. The object directory's name
// is a hash of the object's key and version (size and CRC-32C, or size
// and ETag when the store reports no checksum) and of the chunk size, so a
// cached chunk is only
// ever read for the version it came from, also after a restart: a new
// version gets a new directory and the old one ages out. A chunk whose
// piece fails its CRC (a torn write, a bad disk) is dropped and fetched
// again.
//
// Chunks are written to a temporary file and renamed, without fsync: a
// cache loses nothing it cannot fetch again, and the CRC catches what a
// power failure tears.

// CacheOptions configure a Cache. Dir is required.
type CacheOptions struct {
	// FS is the file system (default the OS).
	FS vfs.FS
	// Dir is the cache's directory, created if missing. It must belong to
	// this cache alone.
	Dir string
	// MaxBytes bounds the bytes kept (default 1 GiB; --cache-size). Least
	// recently used chunks are evicted past it.
	MaxBytes int64
	// ChunkBytes is the fetch and cache unit (default 256 KiB).
	ChunkBytes int64
	// MaxFetchBytes bounds one ranged GET (default 8 MiB): a read of many
	// missing chunks fetches them in runs of at most this.
	MaxFetchBytes int64
	// FetchTimeout bounds each GET (default 30s).
	FetchTimeout time.Duration
	// Logger receives what goes wrong locally (default discards).
	Logger *slog.Logger
}

// Cache is a read-through cache of object bytes over a Store, bounded in
// bytes, shared by every file opened through it and safe for concurrent
// use.
type Cache struct {
	store Store
	opts  CacheOptions
	// base is cancelled by Close, ending the fetches under way.
	base   context.Context
	cancel context.CancelFunc

	mu       sync.Mutex
	lru      list.List // *cachedChunk, most recently used first
	chunks   map[chunkID]*list.Element
	inflight map[chunkID]*chunkFetch
	bytes    int64 // on disk: data and CRC of every chunk in lru

	hits, misses, fetches, fetchedBytes, evictions, damaged atomic.Int64
}

type chunkID struct {
	obj string // the object directory's name
	idx int64
}

type cachedChunk struct {
	id   chunkID
	size int64 // bytes on disk
}

// chunkFetch is a chunk being fetched; whoever needs it meanwhile waits
// for done and takes data or err.
type chunkFetch struct {
	done chan struct{}
	data []byte
	err  error
}

// CacheStats are a cache's counters since it was opened.
type CacheStats struct {
	// Hits and Misses count chunk reads served from disk and fetched.
	Hits, Misses int64
	// Fetches counts ranged GETs, FetchedBytes the bytes they returned.
	Fetches, FetchedBytes int64
	// Evictions counts chunks evicted; Damaged those dropped because they
	// failed their checksum (and fetched again).
	Evictions, Damaged int64
	// Bytes and Chunks are what the cache holds now.
	Bytes  int64
	Chunks int
}

const chunkExt = ".chunk"

// pieceBytes is the unit a chunk file's CRCs cover.
const pieceBytes = 16 << 10

// chunkFileSize is the size of the file of a chunk of n bytes.
func chunkFileSize(n int64) int64 { return n + 4*((n+pieceBytes-1)/pieceBytes) }

// OpenCache opens (or creates) the cache in opts.Dir, taking over the
// chunks a previous run left there (evicting down to MaxBytes), and
// returns it. What the previous run used most recently is not known:
// the chunks found start in directory order.
func OpenCache(store Store, opts CacheOptions) (*Cache, error) {
	if opts.Dir == "" {
		return nil, errors.New("objstore: cache needs a directory")
	}
	if opts.FS == nil {
		opts.FS = vfs.OS
	}
	if opts.MaxBytes <= 0 {
		opts.MaxBytes = 1 << 30
	}
	if opts.ChunkBytes <= 0 {
		opts.ChunkBytes = 256 << 10
	}
	if opts.MaxFetchBytes <= 0 {
		opts.MaxFetchBytes = 8 << 20
	}
	opts.MaxFetchBytes = max(opts.MaxFetchBytes, opts.ChunkBytes)
	if opts.FetchTimeout <= 0 {
		opts.FetchTimeout = 30 * time.Second
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	c := &Cache{store: store, opts: opts, chunks: map[chunkID]*list.Element{}, inflight: map[chunkID]*chunkFetch{}}
	c.base, c.cancel = context.WithCancel(context.Background())
	if err := opts.FS.MkdirAll(opts.Dir); err != nil {
		return nil, fmt.Errorf("objstore: cache directory: %w", err)
	}
	if err := c.load(); err != nil {
		return nil, err
	}
	c.mu.Lock()
	victims := c.evictLocked()
	c.mu.Unlock()
	c.removeChunks(victims)
	return c, nil
}

// load adopts the chunks on disk and removes temporary files and empty
// object directories.
func (c *Cache) load() error {
	fs := c.opts.FS
	dirs, err := fs.List(c.opts.Dir)
	if err != nil {
		return fmt.Errorf("objstore: cache directory: %w", err)
	}
	for _, d := range dirs {
		if !validObjDir(d) {
			continue // not ours: leave it
		}
		dp := filepath.Join(c.opts.Dir, d)
		names, err := fs.List(dp)
		if err != nil {
			continue // a file, not a directory
		}
		kept := 0
		for _, n := range names {
			p := filepath.Join(dp, n)
			idx, ok := parseChunkName(n)
			if !ok {
				if strings.HasSuffix(n, chunkExt+".tmp") {
					fs.Remove(p)
				}
				continue
			}
			size, err := fileSize(fs, p)
			if err != nil || size < 4 || size > chunkFileSize(c.opts.ChunkBytes) {
				fs.Remove(p)
				continue
			}
			id := chunkID{obj: d, idx: idx}
			c.chunks[id] = c.lru.PushBack(&cachedChunk{id: id, size: size})
			c.bytes += size
			kept++
		}
		if kept == 0 {
			fs.Remove(dp)
		}
	}
	return nil
}

func fileSize(fs vfs.FS, p string) (int64, error) {
	f, err := fs.Open(p)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	return f.Size()
}

func validObjDir(d string) bool {
	if len(d) != 32 {
		return false
	}
	_, err := hex.DecodeString(d)
	return err == nil
}

func chunkName(idx int64) string { return fmt.Sprintf("%016x%s", idx, chunkExt) }

func parseChunkName(n string) (int64, bool) {
	if len(n) != 16+len(chunkExt) || !strings.HasSuffix(n, chunkExt) {
		return 0, false
	}
	v, err := strconv.ParseUint(n[:16], 16, 63)
	return int64(v), err == nil
}

// objectDir names the directory of one version of an object cut into
// chunks of chunkBytes.
func objectDir(info ObjectInfo, chunkBytes int64) string {
	version := info.ETag
	if info.Sum.HasCRC {
		version = fmt.Sprintf("crc32c:%08x", info.Sum.CRC32C)
	}
	h := sha256.Sum256(fmt.Appendf(nil, "%s\x00%d\x00%s\x00%d", info.Key, info.Size, version, chunkBytes))
	return hex.EncodeToString(h[:16])
}

// Open returns key as a read-only vfs.File whose reads go through the
// cache. info is what the caller knows of the object (from a manifest:
// Size, Sum, ETag); when it has neither a checksum nor an ETag, Open asks
// the store (Head). With an ETag, every fetch reads that version only
// (If-Match), failing with ErrPrecondition if the object was replaced.
func (c *Cache) Open(ctx context.Context, key string, info ObjectInfo) (*File, error) {
	if info.ETag == "" && !info.Sum.HasCRC {
		h, err := c.store.Head(ctx, key)
		if err != nil {
			return nil, err
		}
		info = h
	}
	info.Key = key
	if info.Size < 0 {
		return nil, fmt.Errorf("objstore: %s: bad size %d", key, info.Size)
	}
	return &File{c: c, info: info, obj: objectDir(info, c.opts.ChunkBytes)}, nil
}

// Stats returns the cache's counters.
func (c *Cache) Stats() CacheStats {
	c.mu.Lock()
	b, n := c.bytes, c.lru.Len()
	c.mu.Unlock()
	return CacheStats{Hits: c.hits.Load(), Misses: c.misses.Load(), Fetches: c.fetches.Load(),
		FetchedBytes: c.fetchedBytes.Load(), Evictions: c.evictions.Load(), Damaged: c.damaged.Load(),
		Bytes: b, Chunks: n}
}

// Close ends the fetches under way (their readers get an error). Files
// opened through the cache fail their reads from then on.
func (c *Cache) Close() error {
	c.cancel()
	return nil
}

// span is bytes of an object starting at off.
type span struct {
	off  int64
	data []byte
}

// readRange returns bytes [off, end) of f's object as one span per chunk
// they touch (each covering at least its part of the range), fetching the
// chunks that are not cached.
func (c *Cache) readRange(f *File, off, end int64) ([]span, error) {
	cs := c.opts.ChunkBytes
	first, last := off/cs, (end-1)/cs
	out := make([]span, last-first+1)
	for attempt := 0; ; attempt++ {
		var local, owned []int64
		var waits []*chunkFetch
		var waitIdx []int64
		c.mu.Lock()
		for idx := first; idx <= last; idx++ {
			if out[idx-first].data != nil {
				continue
			}
			id := chunkID{f.obj, idx}
			if el := c.chunks[id]; el != nil {
				c.lru.MoveToFront(el)
				local = append(local, idx)
			} else if fe := c.inflight[id]; fe != nil {
				waits = append(waits, fe)
				waitIdx = append(waitIdx, idx)
			} else {
				c.inflight[id] = &chunkFetch{done: make(chan struct{})}
				owned = append(owned, idx)
			}
		}
		c.mu.Unlock()

		var firstErr error
		// Ours to fetch, in runs of adjacent chunks.
		for len(owned) > 0 {
			n := 1
			for n < len(owned) && owned[n] == owned[n-1]+1 && int64(n+1)*cs <= c.opts.MaxFetchBytes {
				n++
			}
			run := owned[:n]
			owned = owned[n:]
			data, err := c.fetchRun(f, run)
			if err != nil && firstErr == nil {
				firstErr = err
			}
			for i, idx := range run {
				if err == nil {
					out[idx-first] = span{off: idx * cs, data: data[i]}
				}
			}
		}
		missing := false
		for _, idx := range local {
			base := idx * cs
			sp, err := c.readLocal(f, idx, max(off, base)-base, min(end, base+cs)-base)
			if err != nil {
				missing = true // evicted or damaged meanwhile: fetch it
				continue
			}
			out[idx-first] = sp
		}
		for i, fe := range waits {
			select {
			case <-fe.done:
			case <-c.base.Done():
				return nil, fmt.Errorf("objstore: cache closed")
			}
			if fe.err != nil {
				if firstErr == nil {
					firstErr = fe.err
				}
				continue
			}
			out[waitIdx[i]-first] = span{off: waitIdx[i] * cs, data: fe.data}
		}
		if firstErr != nil {
			return nil, firstErr
		}
		if !missing {
			return out, nil
		}
		if attempt == 2 {
			return nil, fmt.Errorf("objstore: %s: cached chunks keep disappearing", f.info.Key)
		}
	}
}

// fetchRun fetches adjacent chunks with one GET, hands them to whoever
// waits for them, and stores them.
func (c *Cache) fetchRun(f *File, run []int64) ([][]byte, error) {
	cs := c.opts.ChunkBytes
	from := run[0] * cs
	to := min((run[len(run)-1]+1)*cs, f.info.Size)
	data, err := c.get(f, from, to-from)
	chunks := make([][]byte, len(run))
	if err == nil {
		for i := range run {
			lo := int64(i) * cs
			chunks[i] = data[lo:min(lo+cs, int64(len(data)))]
		}
	}
	// Waiters get the chunks at once. A fetched chunk stays listed as in
	// flight (done, with its data) until it is stored: a reader coming
	// in between would otherwise find it neither cached nor in flight and
	// fetch it again.
	c.mu.Lock()
	for i, idx := range run {
		id := chunkID{f.obj, idx}
		fe := c.inflight[id]
		if err != nil {
			delete(c.inflight, id)
		}
		fe.data, fe.err = chunks[i], err
		close(fe.done)
	}
	c.mu.Unlock()
	if err != nil {
		return nil, err
	}
	c.misses.Add(int64(len(run)))
	for i, idx := range run {
		c.store1(f, idx, chunks[i])
	}
	c.mu.Lock()
	for _, idx := range run {
		delete(c.inflight, chunkID{f.obj, idx})
	}
	c.mu.Unlock()
	return chunks, nil
}

// get reads [off, off+n) of f's object from the store.
func (c *Cache) get(f *File, off, n int64) ([]byte, error) {
	ctx, cancel := context.WithTimeout(c.base, c.opts.FetchTimeout)
	defer cancel()
	rc, info, err := c.store.Get(ctx, f.info.Key, GetOptions{Offset: off, Length: n, IfMatch: f.info.ETag})
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	if info.Size != f.info.Size {
		return nil, opErr("get", f.info.Key, ErrPrecondition, fmt.Errorf("object is %d bytes, expected %d", info.Size, f.info.Size))
	}
	buf := make([]byte, n)
	if _, err := io.ReadFull(rc, buf); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
			err = opErr("get", f.info.Key, ErrUnavailable, fmt.Errorf("short read at %d: %w", off, err))
		}
		return nil, err
	}
	c.fetches.Add(1)
	c.fetchedBytes.Add(n)
	return buf, nil
}

// store1 writes a fetched chunk to disk and accounts it, evicting what it
// must. A chunk larger than the whole cache is not kept.
func (c *Cache) store1(f *File, idx int64, data []byte) {
	size := chunkFileSize(int64(len(data)))
	if size > c.opts.MaxBytes {
		return
	}
	fs := c.opts.FS
	dp := filepath.Join(c.opts.Dir, f.obj)
	p := filepath.Join(dp, chunkName(idx))
	tmp := p + ".tmp"
	err := fs.MkdirAll(dp)
	if err == nil {
		err = writeChunkFile(fs, tmp, data)
	}
	if err != nil {
		fs.Remove(tmp)
		c.opts.Logger.Warn("cache: write chunk", "key", f.info.Key, "chunk", idx, "err", err)
		return
	}
	id := chunkID{f.obj, idx}
	c.mu.Lock()
	if c.chunks[id] != nil { // another reader stored it meanwhile
		c.mu.Unlock()
		fs.Remove(tmp)
		return
	}
	// Renamed under the lock, so that an eviction never removes a file
	// the index does not account.
	if err := fs.Rename(tmp, p); err != nil {
		c.mu.Unlock()
		fs.Remove(tmp)
		c.opts.Logger.Warn("cache: write chunk", "key", f.info.Key, "chunk", idx, "err", err)
		return
	}
	c.chunks[id] = c.lru.PushFront(&cachedChunk{id: id, size: size})
	c.bytes += size
	victims := c.evictLocked()
	c.mu.Unlock()
	c.removeChunks(victims)
}

func writeChunkFile(fs vfs.FS, p string, data []byte) error {
	w, err := fs.Create(p)
	if err != nil {
		return err
	}
	buf := make([]byte, 0, chunkFileSize(int64(len(data))))
	buf = append(buf, data...)
	for lo := 0; lo < len(data); lo += pieceBytes {
		buf = binary.LittleEndian.AppendUint32(buf, crc32.Checksum(data[lo:min(lo+pieceBytes, len(data))], castagnoli))
	}
	_, err = w.Write(buf)
	return errors.Join(err, w.Close())
}

// evictLocked drops least recently used chunks from the index until the
// cache fits, returning them for removeChunks. Callers hold c.mu.
func (c *Cache) evictLocked() []chunkID {
	var victims []chunkID
	for c.bytes > c.opts.MaxBytes {
		el := c.lru.Back()
		if el == nil {
			break
		}
		ch := c.lru.Remove(el).(*cachedChunk)
		delete(c.chunks, ch.id)
		c.bytes -= ch.size
		victims = append(victims, ch.id)
	}
	c.evictions.Add(int64(len(victims)))
	return victims
}

// removeChunks deletes evicted chunks' files, unless the chunk was stored
// again meanwhile (checked under the lock, as store1 renames under it).
func (c *Cache) removeChunks(ids []chunkID) {
	for _, id := range ids {
		c.mu.Lock()
		if c.chunks[id] == nil {
			if err := c.opts.FS.Remove(c.chunkPath(id)); err != nil && !errors.Is(err, iofs.ErrNotExist) {
				c.opts.Logger.Warn("cache: evict chunk", "chunk", id.idx, "err", err)
			}
		}
		c.mu.Unlock()
	}
}

func (c *Cache) chunkPath(id chunkID) string {
	return filepath.Join(c.opts.Dir, id.obj, chunkName(id.idx))
}

// readLocal reads bytes [lo, hi) of cached chunk idx (offsets within
// the chunk), checking the pieces it reads; a chunk that is gone or
// damaged is dropped from the index and reported as an error.
func (c *Cache) readLocal(f *File, idx, lo, hi int64) (span, error) {
	id := chunkID{f.obj, idx}
	n := min(c.opts.ChunkBytes, f.info.Size-idx*c.opts.ChunkBytes)
	data, from, err := readChunkFile(c.opts.FS, c.chunkPath(id), n, lo, hi)
	if err == nil {
		c.hits.Add(1)
		return span{off: idx*c.opts.ChunkBytes + from, data: data}, nil
	}
	if !errors.Is(err, iofs.ErrNotExist) {
		c.damaged.Add(1)
		c.opts.Logger.Warn("cache: damaged chunk dropped", "key", f.info.Key, "chunk", idx, "err", err)
	}
	c.mu.Lock()
	if el := c.chunks[id]; el != nil {
		ch := c.lru.Remove(el).(*cachedChunk)
		delete(c.chunks, id)
		c.bytes -= ch.size
		c.opts.FS.Remove(c.chunkPath(id))
	}
	c.mu.Unlock()
	return span{}, err
}

// readChunkFile reads the pieces covering bytes [lo, hi) of the file of
// a chunk of n bytes, checks their CRCs, and returns them with the offset
// in the chunk of their first byte.
func readChunkFile(fs vfs.FS, p string, n, lo, hi int64) ([]byte, int64, error) {
	if lo < 0 || hi > n || lo > hi {
		return nil, 0, fmt.Errorf("bad range %d..%d of a chunk of %d bytes", lo, hi, n)
	}
	r, err := fs.Open(p)
	if err != nil {
		return nil, 0, err
	}
	defer r.Close()
	size, err := r.Size()
	if err != nil {
		return nil, 0, err
	}
	if size != chunkFileSize(n) {
		return nil, 0, fmt.Errorf("%w: chunk file of %d bytes, expected %d", ErrChecksum, size, chunkFileSize(n))
	}
	p0 := lo / pieceBytes
	p1 := max((hi+pieceBytes-1)/pieceBytes, p0+1) // at least one piece
	from, to := p0*pieceBytes, min(p1*pieceBytes, n)
	data := make([]byte, to-from)
	sums := make([]byte, 4*(p1-p0))
	if k, err := r.ReadAt(data, from); int64(k) != to-from {
		return nil, 0, fmt.Errorf("read chunk: %w", err)
	}
	if k, err := r.ReadAt(sums, n+4*p0); k != len(sums) {
		return nil, 0, fmt.Errorf("read chunk checksums: %w", err)
	}
	for i := range p1 - p0 {
		piece := data[i*pieceBytes : min((i+1)*pieceBytes, int64(len(data)))]
		if got, stored := crc32.Checksum(piece, castagnoli), binary.LittleEndian.Uint32(sums[4*i:]); got != stored {
			return nil, 0, fmt.Errorf("%w: chunk piece %d: crc32c:%08x, computed crc32c:%08x", ErrChecksum, p0+i, stored, got)
		}
	}
	return data, from, nil
}
