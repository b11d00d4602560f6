package objstore

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/sediment/sediment/internal/vfs"
)

func randomBytes(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, seed))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

func putObject(t *testing.T, s Store, key string, data []byte) ObjectInfo {
	t.Helper()
	info, err := s.Put(context.Background(), key, bytes.NewReader(data), int64(len(data)), PutOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return info
}

func readAt(t *testing.T, f *File, off int64, n int) []byte {
	t.Helper()
	buf := make([]byte, n)
	got, err := f.ReadAt(buf, off)
	if err != nil && !(errors.Is(err, io.EOF) && off+int64(n) > f.info.Size) {
		t.Fatalf("read %d+%d: %v", off, n, err)
	}
	return buf[:got]
}

// dirBytes is what the cache directory holds on disk.
func dirBytes(t *testing.T, dir string) int64 {
	t.Helper()
	var total int64
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if fi, err := d.Info(); err == nil {
				total += fi.Size()
			}
		}
		return nil
	})
	return total
}

// testCacheOverStore reads an object of s through a cache on the real
// file system.
func testCacheOverStore(t *testing.T, s Store) {
	ctx := context.Background()
	const chunk = 64 << 10
	data := randomBytes(16*chunk+1000, 1)
	info := putObject(t, s, "obj", data)
	dir := t.TempDir()
	opts := CacheOptions{Dir: dir, ChunkBytes: chunk, MaxBytes: 8 * (chunk + 4)}
	c, err := OpenCache(s, opts)
	if err != nil {
		t.Fatal(err)
	}
	f, err := c.Open(ctx, "obj", info)
	if err != nil {
		t.Fatal(err)
	}

	// One small read fetches one chunk; reading it again fetches nothing.
	if got := readAt(t, f, 3*chunk+100, 100); !bytes.Equal(got, data[3*chunk+100:3*chunk+200]) {
		t.Fatal("first read returned other bytes")
	}
	if st := c.Stats(); st.Fetches != 1 || st.FetchedBytes != chunk || st.Misses != 1 {
		t.Fatalf("after one read: %+v, want one chunk fetched", st)
	}
	readAt(t, f, 3*chunk+5000, 10)
	if st := c.Stats(); st.Fetches != 1 || st.Hits != 1 {
		t.Fatalf("after the same chunk again: %+v, want a hit and no fetch", st)
	}
	// A read across three missing chunks fetches them in one request.
	if got := readAt(t, f, 5*chunk+10, 2*chunk); !bytes.Equal(got, data[5*chunk+10:7*chunk+10]) {
		t.Fatal("spanning read returned other bytes")
	}
	if st := c.Stats(); st.Fetches != 2 || st.FetchedBytes != 4*chunk {
		t.Fatalf("after a read over chunks 5-7: %+v, want one more fetch of 3 chunks", st)
	}
	// The end: a short last chunk, and a read past it.
	if got := readAt(t, f, int64(len(data))-10, 100); !bytes.Equal(got, data[len(data)-10:]) {
		t.Fatalf("tail read %d bytes", len(got))
	}

	// The whole object through a cache of 8 chunks: it is read right, and
	// the cache stays within its bound.
	all, err := io.ReadAll(io.NewSectionReader(f, 0, info.Size))
	if err != nil || !bytes.Equal(all, data) {
		t.Fatalf("whole object: %d bytes, %v", len(all), err)
	}
	st := c.Stats()
	if st.Bytes > opts.MaxBytes || st.Evictions == 0 || dirBytes(t, dir) != st.Bytes {
		t.Fatalf("after reading it all: %+v, %d bytes on disk; want at most %d and evictions", st, dirBytes(t, dir), opts.MaxBytes)
	}
	before := st

	// A restart finds the chunks it had, and reads them without fetching.
	c.Close()
	c2, err := OpenCache(s, opts)
	if err != nil {
		t.Fatal(err)
	}
	if st := c2.Stats(); st.Chunks != before.Chunks || st.Bytes != before.Bytes {
		t.Fatalf("after a restart: %+v, had %d chunks, %d bytes", st, before.Chunks, before.Bytes)
	}
	f2, err := c2.Open(ctx, "obj", info)
	if err != nil {
		t.Fatal(err)
	}
	if got := readAt(t, f2, info.Size-chunk, chunk); !bytes.Equal(got, data[len(data)-chunk:]) {
		t.Fatal("read after restart returned other bytes")
	}
	if st := c2.Stats(); st.Fetches != 0 || st.Hits == 0 {
		t.Fatalf("after a restart, reading what was cached: %+v, want hits and no fetch", st)
	}

	// A new version of the object is never served from the old one's
	// chunks.
	newData := randomBytes(len(data), 2)
	newInfo := putObject(t, s, "obj", newData)
	f3, err := c2.Open(ctx, "obj", newInfo)
	if err != nil {
		t.Fatal(err)
	}
	if got := readAt(t, f3, info.Size-chunk, chunk); !bytes.Equal(got, newData[len(newData)-chunk:]) {
		t.Fatal("the new version was read from the old version's chunks")
	}
	// A reader of the old version finds it replaced rather than mixing.
	if _, err := f2.ReadAt(make([]byte, 10), 0); !errors.Is(err, ErrPrecondition) {
		t.Fatalf("reading a replaced version: %v, want ErrPrecondition", err)
	}
}

func TestCacheOverMemStore(t *testing.T) { testCacheOverStore(t, NewMemStore(nil)) }

// TestCacheDamagedChunk: a cached chunk that fails its checksum is
// dropped and fetched again; the reader gets the right bytes.
func TestCacheDamagedChunk(t *testing.T) {
	ctx := context.Background()
	m := NewMemStore(nil)
	data := randomBytes(3000, 3)
	info := putObject(t, m, "obj", data)
	fs := vfs.NewMemFS()
	c, err := OpenCache(m, CacheOptions{FS: fs, Dir: "/c", ChunkBytes: 1024})
	if err != nil {
		t.Fatal(err)
	}
	f, _ := c.Open(ctx, "obj", info)
	readAt(t, f, 1100, 10)
	p := filepath.Join("/c", objectDir(info, 1024), chunkName(1))
	w, err := fs.OpenRW(p)
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]byte("garbage"))
	w.Close()
	if got := readAt(t, f, 1024, 1024); !bytes.Equal(got, data[1024:2048]) {
		t.Fatal("damaged chunk served")
	}
	if st := c.Stats(); st.Damaged != 1 || st.Fetches != 2 {
		t.Fatalf("%+v, want one damaged chunk fetched again", st)
	}
	// A truncated chunk file is found at restart and ignored too.
	w, _ = fs.OpenRW(p)
	w.Truncate(2)
	w.Close()
	c2, err := OpenCache(m, CacheOptions{FS: fs, Dir: "/c", ChunkBytes: 1024})
	if err != nil {
		t.Fatal(err)
	}
	if st := c2.Stats(); st.Chunks != 0 || fs.Exists(p) {
		t.Fatalf("after restart: %+v; the truncated chunk should be gone", st)
	}
}

// TestCacheConcurrentReaders: many readers of overlapping ranges of two
// objects through a small cache all read the right bytes, and a chunk
// wanted by several readers at once is fetched once.
func TestCacheConcurrentReaders(t *testing.T) {
	ctx := context.Background()
	m := NewMemStore(nil)
	objs := map[string][]byte{"a": randomBytes(200_000, 4), "b": randomBytes(150_000, 5)}
	infos := map[string]ObjectInfo{}
	for k, d := range objs {
		infos[k] = putObject(t, m, k, d)
	}
	c, err := OpenCache(m, CacheOptions{FS: vfs.NewMemFS(), Dir: "/c", ChunkBytes: 4096, MaxBytes: 40_000, MaxFetchBytes: 16384})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(g), 9))
			for range 300 {
				key := []string{"a", "b"}[r.IntN(2)]
				f, err := c.Open(ctx, key, infos[key])
				if err != nil {
					t.Error(err)
					return
				}
				data := objs[key]
				off := r.IntN(len(data))
				n := 1 + r.IntN(20000)
				buf := make([]byte, n)
				got, err := f.ReadAt(buf, int64(off))
				if err != nil && !errors.Is(err, io.EOF) {
					t.Error(err)
					return
				}
				if want := data[off:min(off+n, len(data))]; !bytes.Equal(buf[:got], want) {
					t.Errorf("%s %d+%d: wrong bytes", key, off, n)
					return
				}
			}
		}()
	}
	wg.Wait()
	if st := c.Stats(); st.Bytes > 40_000 {
		t.Fatalf("cache holds %d bytes, more than its 40000", st.Bytes)
	}

	// One chunk wanted by 8 readers at once: fetched once.
	c2, _ := OpenCache(m, CacheOptions{FS: vfs.NewMemFS(), Dir: "/c2", ChunkBytes: 4096})
	start := make(chan struct{})
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f, _ := c2.Open(ctx, "a", infos["a"])
			<-start
			if _, err := f.ReadAt(make([]byte, 100), 5000); err != nil {
				t.Error(err)
			}
		}()
	}
	close(start)
	wg.Wait()
	if st := c2.Stats(); st.Fetches != 1 {
		t.Fatalf("%d fetches of one chunk read by 8 readers at once", st.Fetches)
	}
}

// TestCacheStoreDown: a read that needs the store while it is away fails
// with a retryable error; cached chunks still read; when it is back, so
// does the rest.
func TestCacheStoreDown(t *testing.T) {
	ctx := context.Background()
	m := NewMemStore(nil)
	data := randomBytes(10_000, 6)
	info := putObject(t, m, "obj", data)
	c, _ := OpenCache(m, CacheOptions{FS: vfs.NewMemFS(), Dir: "/c", ChunkBytes: 1024})
	f, _ := c.Open(ctx, "obj", info)
	readAt(t, f, 0, 100)
	m.SetDown(true)
	if _, err := f.ReadAt(make([]byte, 100), 5000); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("store down: %v, want ErrUnavailable", err)
	}
	if got := readAt(t, f, 0, 100); !bytes.Equal(got, data[:100]) {
		t.Fatal("cached chunk not served while the store is down")
	}
	m.SetDown(false)
	if got := readAt(t, f, 5000, 100); !bytes.Equal(got, data[5000:5100]) {
		t.Fatal("read after the store came back")
	}
	// Open without info asks the store.
	f2, err := c.Open(ctx, "obj", ObjectInfo{})
	if err != nil || f2.Info().ETag != info.ETag {
		t.Fatalf("open by key: %+v, %v", f2.Info(), err)
	}
}

// TestCacheFileReadOnly: File is a read-only vfs.File.
func TestCacheFileReadOnly(t *testing.T) {
	m := NewMemStore(nil)
	info := putObject(t, m, "obj", []byte("hello world"))
	c, _ := OpenCache(m, CacheOptions{FS: vfs.NewMemFS(), Dir: "/c", ChunkBytes: 4})
	var f vfs.File
	f, _ = c.Open(context.Background(), "obj", info)
	got, err := io.ReadAll(f)
	if err != nil || string(got) != "hello world" {
		t.Fatalf("sequential read %q, %v", got, err)
	}
	if size, _ := f.Size(); size != 11 {
		t.Fatalf("size %d", size)
	}
	if _, err := f.Write([]byte("x")); !errors.Is(err, ErrReadOnly) {
		t.Fatalf("write: %v", err)
	}
	if err := f.Truncate(0); !errors.Is(err, ErrReadOnly) {
		t.Fatalf("truncate: %v", err)
	}
}

// FuzzCacheChunkFile: any bytes as a cached chunk file read back as the
// chunk only when they are that chunk and its CRC; never a panic, and no
// allocation beyond the file's size.
func FuzzCacheChunkFile(f *testing.F) {
	fs := vfs.NewMemFS()
	fs.MkdirAll("/c")
	writeChunkFile(fs, "/c/seed", []byte("chunk bytes"))
	seed, _ := vfs.ReadFile(fs, "/c/seed")
	f.Add(seed, int64(11), int64(2), int64(5))
	f.Add(seed[:5], int64(11), int64(0), int64(11))
	f.Add([]byte{}, int64(0), int64(0), int64(0))
	f.Fuzz(func(t *testing.T, file []byte, want, lo, hi int64) {
		if want < 0 || want > 1<<20 {
			t.Skip()
		}
		fs := vfs.NewMemFS()
		fs.MkdirAll("/c")
		if err := vfs.WriteFileAtomic(fs, "/c/x", file); err != nil {
			t.Fatal(err)
		}
		data, from, err := readChunkFile(fs, "/c/x", want, lo, hi)
		if err != nil {
			return
		}
		if from > lo || from+int64(len(data)) < hi || !bytes.Equal(data, file[from:from+int64(len(data))]) {
			t.Fatalf("read [%d,+%d) of a file of %d for [%d,%d)", from, len(data), len(file), lo, hi)
		}
	})
}

// BenchmarkCacheReadAt reads 64 KiB at random offsets of a 16 MiB object
// through a cache of 256 KiB chunks on the OS file system: "hit" with
// every chunk cached, "miss" with a cache too small to keep any (each read
// fetches from an in-memory store).
//
//	go test ./objstore -run '^$' -bench CacheReadAt -count 6 | tee new.txt
func BenchmarkCacheReadAt(b *testing.B) {
	const size, read = 16 << 20, 64 << 10
	m := NewMemStore(nil)
	data := randomBytes(size, 7)
	info, err := m.Put(context.Background(), "obj", bytes.NewReader(data), size, PutOptions{})
	if err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct {
		name     string
		maxBytes int64
	}{{"hit", 2 * size}, {"miss", 1}} {
		b.Run(bc.name, func(b *testing.B) {
			c, err := OpenCache(m, CacheOptions{Dir: b.TempDir(), MaxBytes: bc.maxBytes})
			if err != nil {
				b.Fatal(err)
			}
			f, _ := c.Open(context.Background(), "obj", info)
			if bc.name == "hit" {
				io.Copy(io.Discard, io.NewSectionReader(f, 0, size))
			}
			r := rand.New(rand.NewPCG(1, 2))
			buf := make([]byte, read)
			b.SetBytes(read)
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				if _, err := f.ReadAt(buf, r.Int64N(size-read)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
