package objstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sediment/sediment/internal/miniotest"
	"github.com/sediment/sediment/internal/vfs"
)

// These tests run against a real MinIO on loopback (internal/miniotest:
// installed when missing; skipped without it, failed under CI). One server
// serves the package's tests, each under its own prefix; the outage test
// has its own.

var (
	sharedMinIO     *miniotest.Server
	sharedMinIOErr  error
	sharedMinIODir  string
	sharedMinIOOnce sync.Once
	prefixSeq       atomic.Int64
)

func TestMain(m *testing.M) {
	code := m.Run()
	if sharedMinIO != nil {
		sharedMinIO.Stop()
	}
	if sharedMinIODir != "" {
		os.RemoveAll(sharedMinIODir)
	}
	os.Exit(code)
}

// newS3 returns an S3 store on a fresh prefix of srv, or of the package's
// shared server (started by the first test that needs it) when srv is nil.
func newS3(t *testing.T, srv *miniotest.Server) *S3 {
	t.Helper()
	if srv == nil {
		sharedMinIOOnce.Do(func() {
			if sharedMinIODir, sharedMinIOErr = os.MkdirTemp("", "objstore-minio-"); sharedMinIOErr == nil {
				sharedMinIO, sharedMinIOErr = miniotest.Launch(sharedMinIODir)
			}
		})
		miniotest.Require(t, sharedMinIOErr)
		srv = sharedMinIO
	}
	cfg, err := ParseS3URL(fmt.Sprintf("s3://sediment-test/run/%s/%d", strings.ReplaceAll(t.Name(), "/", "-"), prefixSeq.Add(1)))
	if err != nil {
		t.Fatal(err)
	}
	if err := cfg.SetEndpointURL("http://" + srv.Endpoint); err != nil {
		t.Fatal(err)
	}
	cfg.PathStyle = true
	cfg.AccessKey, cfg.SecretKey = miniotest.AccessKey, miniotest.SecretKey
	cfg.MaxRetries = 2
	s, err := OpenS3(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := s.CreateBucket(ctx); err != nil {
		t.Fatalf("create bucket: %v\n%s", err, srv.Log())
	}
	return s
}

func TestS3Contract(t *testing.T) { testStoreContract(t, newS3(t, nil)) }

func TestS3ManifestWritersRace(t *testing.T) { testManifestWritersRace(t, newS3(t, nil)) }

func TestS3CollectGarbage(t *testing.T) { testCollectGarbage(t, newS3(t, nil), nil) }

func TestS3Publish(t *testing.T) {
	ctx := context.Background()
	s := newS3(t, nil)
	data := make([]byte, 3<<20)
	for i := range data {
		data[i] = byte(rand.N(7)) // compressible, but not constant
	}
	u := SegmentUpload{Source: testSource, Node: "n1", Seq: 1, File: bytes.NewReader(data), Size: int64(len(data)), MinTime: 1, MaxTime: 2, Rows: 5}
	e, err := PublishSegment(ctx, s, u, &PublishOptions{Update: fastRetry})
	if err != nil {
		t.Fatal(err)
	}
	head, err := s.Head(ctx, SegmentKey(testSource, "n1", 1))
	if err != nil {
		t.Fatal(err)
	}
	if !head.Sum.HasCRC || !head.Sum.HasSHA || !head.Sum.Matches(SumBytes(data)) || head.ETag != e.ETag || head.Size != int64(len(data)) {
		t.Fatalf("stored object %+v (sum %s), want %s", head, head.Sum, SumBytes(data))
	}
	if _, err := PublishSegment(ctx, s, u, &PublishOptions{Update: fastRetry}); err != nil {
		t.Fatalf("republish: %v", err)
	}
	u.File = bytes.NewReader(data[1:])
	u.Size--
	if _, err := PublishSegment(ctx, s, u, nil); !errors.Is(err, ErrCollision) {
		t.Fatalf("other bytes under a listed name: %v, want ErrCollision", err)
	}
}

// changingReader returns other bytes from its second pass on: what the
// server receives is not what Put checksummed first, as when a file
// changes or memory goes bad between the two.
type changingReader struct {
	data  []byte
	reads atomic.Int64
	limit int64
}

func (r *changingReader) ReadAt(p []byte, off int64) (int, error) {
	if r.reads.Add(int64(len(p))) > r.limit && off == 0 && len(p) > 0 {
		n := copy(p, r.data[off:])
		p[0] ^= 0xff
		return n, nil
	}
	if off >= int64(len(r.data)) {
		return 0, io.EOF
	}
	n := copy(p, r.data[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// TestS3PutVerifiesChecksum: bytes that reach the server differently from
// how Put checksummed them are reported as ErrChecksum.
func TestS3PutVerifiesChecksum(t *testing.T) {
	s := newS3(t, nil)
	data := bytes.Repeat([]byte("segment bytes "), 1000)
	r := &changingReader{data: data, limit: int64(len(data))}
	_, err := s.Put(context.Background(), "bad", r, int64(len(data)), PutOptions{IfNoneMatch: true})
	if !errors.Is(err, ErrChecksum) {
		t.Fatalf("put of bytes that changed: %v, want ErrChecksum", err)
	}
}

// TestS3CacheReads: ranged reads through the cache fetch only the chunks
// they touch, serve repeats from disk, stay within the cache's bound, and
// find their chunks again after a restart.
func TestS3CacheReads(t *testing.T) {
	s := newS3(t, nil)
	testCacheOverStore(t, s)
}

// TestS3StoreGoesAway: with the server stopped, every call fails cleanly
// with a retryable error (reads through the cache too, for chunks not
// cached); when it is back, calls succeed and nothing was lost.
func TestS3StoreGoesAway(t *testing.T) {
	ctx := context.Background()
	srv := miniotest.Start(t)
	s := newS3(t, srv)
	data := bytes.Repeat([]byte("0123456789"), 100000) // 1 MB
	if _, err := s.Put(ctx, "obj", bytes.NewReader(data), int64(len(data)), PutOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := UpdateManifest(ctx, s, testSource, "n1", nil, func(m *Manifest) error {
		_, err := m.Add(testEntry("n1", 1, "x"))
		return err
	}, nil); err != nil {
		t.Fatal(err)
	}
	c, err := OpenCache(s, CacheOptions{FS: vfs.NewMemFS(), Dir: "/cache", ChunkBytes: 64 << 10, FetchTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	f, err := c.Open(ctx, "obj", ObjectInfo{})
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 100)
	if _, err := f.ReadAt(buf, 0); err != nil {
		t.Fatal(err)
	}

	srv.Stop()
	calls := map[string]func() error{
		"head": func() error { _, err := s.Head(ctx, "obj"); return err },
		"get":  func() error { _, _, err := s.Get(ctx, "obj", GetOptions{}); return err },
		"put": func() error {
			_, err := s.Put(ctx, "obj2", bytes.NewReader(data), int64(len(data)), PutOptions{IfNoneMatch: true})
			return err
		},
		"list":   func() error { _, err := s.List(ctx, ""); return err },
		"delete": func() error { return s.Delete(ctx, "obj") },
		"manifest update": func() error {
			_, err := UpdateManifest(ctx, s, testSource, "n1", nil, func(m *Manifest) error {
				_, err := m.Add(testEntry("n1", 2, "y"))
				return err
			}, nil)
			return err
		},
		"cached read": func() error { _, err := f.ReadAt(buf, 500000); return err },
	}
	for name, call := range calls {
		if err := call(); !errors.Is(err, ErrUnavailable) || !Retryable(err) {
			t.Errorf("%s with the store down: %v, want ErrUnavailable", name, err)
		}
	}
	if _, err := f.ReadAt(buf, 0); err != nil {
		t.Errorf("read of a cached chunk with the store down: %v", err)
	}

	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	for name, call := range calls {
		if name == "delete" {
			continue
		}
		if err := call(); err != nil {
			t.Errorf("%s with the store back: %v", name, err)
		}
	}
	if _, err := f.ReadAt(buf, 500000); err != nil || !bytes.Equal(buf, data[500000:500100]) {
		t.Fatalf("read after the store came back: %v", err)
	}
	m, _, err := ReadManifest(ctx, s, testSource)
	if err != nil || len(m.Segments) != 2 {
		t.Fatalf("manifest after the outage: %+v, %v", m, err)
	}
}
