package objstore

import (
	"bytes"
	"context"
	"errors"
	"io"
	"testing"
)

// testStoreContract checks the behaviour every Store must have, as S3
// has it; both MemStore and S3 (on MinIO) run it.
func testStoreContract(t *testing.T, s Store) {
	ctx := context.Background()
	data := bytes.Repeat([]byte("0123456789abcdef"), 1000) // 16000 bytes

	t.Run("put then head, get and ranged get", func(t *testing.T) {
		info, err := s.Put(ctx, "a/one", bytes.NewReader(data), int64(len(data)), PutOptions{})
		if err != nil {
			t.Fatal(err)
		}
		want := SumBytes(data)
		if info.Size != int64(len(data)) || info.ETag == "" || !info.Sum.HasCRC || info.Sum.CRC32C != want.CRC32C {
			t.Fatalf("put info %+v, want size %d crc %08x", info, len(data), want.CRC32C)
		}
		h, err := s.Head(ctx, "a/one")
		if err != nil {
			t.Fatal(err)
		}
		if h.ETag != info.ETag || h.Size != info.Size || !h.Sum.Matches(want) || !h.Sum.HasSHA || h.Sum.SHA256 != want.SHA256 {
			t.Fatalf("head %+v (sum %s), want etag %s and %s", h, h.Sum, info.ETag, want)
		}
		got := readAll(t, s, "a/one", GetOptions{})
		if !bytes.Equal(got, data) {
			t.Fatalf("get returned %d bytes, not what was put", len(got))
		}
		got = readAll(t, s, "a/one", GetOptions{Offset: 100, Length: 50})
		if !bytes.Equal(got, data[100:150]) {
			t.Fatalf("range 100+50 = %q", got)
		}
		got = readAll(t, s, "a/one", GetOptions{Offset: 15990, Length: 100})
		if !bytes.Equal(got, data[15990:]) {
			t.Fatalf("range past the end = %q, want it clipped", got)
		}
		got = readAll(t, s, "a/one", GetOptions{Offset: 16000, Length: 10})
		if len(got) != 0 {
			t.Fatalf("range at the end = %q, want nothing", got)
		}
		got = readAll(t, s, "a/one", GetOptions{Offset: 10, IfMatch: info.ETag})
		if !bytes.Equal(got, data[10:]) {
			t.Fatalf("get from 10 if-match = %d bytes", len(got))
		}
	})

	t.Run("missing objects", func(t *testing.T) {
		if _, _, err := s.Get(ctx, "a/none", GetOptions{}); !errors.Is(err, ErrNotExist) {
			t.Fatalf("get missing: %v, want ErrNotExist", err)
		}
		if _, err := s.Head(ctx, "a/none"); !errors.Is(err, ErrNotExist) {
			t.Fatalf("head missing: %v, want ErrNotExist", err)
		}
		if err := s.Delete(ctx, "a/none"); err != nil {
			t.Fatalf("delete missing: %v, want nil", err)
		}
	})

	t.Run("conditional puts", func(t *testing.T) {
		v1 := []byte("version 1")
		first, err := s.Put(ctx, "c/obj", bytes.NewReader(v1), int64(len(v1)), PutOptions{IfNoneMatch: true})
		if err != nil {
			t.Fatalf("create: %v", err)
		}
		_, err = s.Put(ctx, "c/obj", bytes.NewReader(v1), int64(len(v1)), PutOptions{IfNoneMatch: true})
		if !errors.Is(err, ErrPrecondition) {
			t.Fatalf("second create: %v, want ErrPrecondition", err)
		}
		v2 := []byte("version 2, longer")
		second, err := s.Put(ctx, "c/obj", bytes.NewReader(v2), int64(len(v2)), PutOptions{IfMatch: first.ETag})
		if err != nil {
			t.Fatalf("replace with the current etag: %v", err)
		}
		if second.ETag == first.ETag {
			t.Fatalf("replacing kept etag %s", first.ETag)
		}
		v3 := []byte("version 3 from a stale reader")
		if _, err := s.Put(ctx, "c/obj", bytes.NewReader(v3), int64(len(v3)), PutOptions{IfMatch: first.ETag}); !errors.Is(err, ErrPrecondition) {
			t.Fatalf("replace with a stale etag: %v, want ErrPrecondition", err)
		}
		if got := readAll(t, s, "c/obj", GetOptions{}); !bytes.Equal(got, v2) {
			t.Fatalf("object is %q after a lost race, want %q", got, v2)
		}
		if _, _, err := s.Get(ctx, "c/obj", GetOptions{IfMatch: first.ETag}); !errors.Is(err, ErrPrecondition) {
			t.Fatalf("get if-match a replaced etag: %v, want ErrPrecondition", err)
		}
		// If-None-Match: the version the caller has is not sent again
		// (304); another one is.
		if _, _, err := s.Get(ctx, "c/obj", GetOptions{IfNoneMatch: second.ETag}); !errors.Is(err, ErrNotModified) || Retryable(err) {
			t.Fatalf("get if-none-match the current etag: %v, want ErrNotModified", err)
		}
		if got := readAll(t, s, "c/obj", GetOptions{IfNoneMatch: first.ETag}); !bytes.Equal(got, v2) {
			t.Fatalf("get if-none-match a replaced etag = %q, want %q", got, v2)
		}
		if _, err := s.Put(ctx, "c/none", bytes.NewReader(v1), int64(len(v1)), PutOptions{IfMatch: first.ETag}); !errors.Is(err, ErrPrecondition) && !errors.Is(err, ErrNotExist) {
			t.Fatalf("replace a missing object: %v, want a precondition failure", err)
		}
	})

	t.Run("list and delete", func(t *testing.T) {
		for _, k := range []string{"l/x/1", "l/x/2", "l/y/1", "lz"} {
			if _, err := s.Put(ctx, k, bytes.NewReader([]byte(k)), int64(len(k)), PutOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		objs, err := s.List(ctx, "l/")
		if err != nil {
			t.Fatal(err)
		}
		var keys []string
		for _, o := range objs {
			keys = append(keys, o.Key)
			if o.Size != int64(len(o.Key)) || o.Modified.IsZero() {
				t.Errorf("listed %+v", o)
			}
		}
		if want := []string{"l/x/1", "l/x/2", "l/y/1"}; !equalStrings(keys, want) {
			t.Fatalf("list l/ = %v, want %v", keys, want)
		}
		if err := s.Delete(ctx, "l/x/2"); err != nil {
			t.Fatal(err)
		}
		objs, err = s.List(ctx, "l/x/")
		if err != nil {
			t.Fatal(err)
		}
		if len(objs) != 1 || objs[0].Key != "l/x/1" {
			t.Fatalf("after delete, list l/x/ = %+v", objs)
		}
	})

	t.Run("empty object", func(t *testing.T) {
		info, err := s.Put(ctx, "e/empty", bytes.NewReader(nil), 0, PutOptions{IfNoneMatch: true})
		if err != nil {
			t.Fatal(err)
		}
		if info.Size != 0 || info.Sum.CRC32C != 0 {
			t.Fatalf("empty object info %+v", info)
		}
		if got := readAll(t, s, "e/empty", GetOptions{}); len(got) != 0 {
			t.Fatalf("empty object read %q", got)
		}
	})
}

func readAll(t *testing.T, s Store, key string, opts GetOptions) []byte {
	t.Helper()
	rc, _, err := s.Get(context.Background(), key, opts)
	if err != nil {
		t.Fatalf("get %s %+v: %v", key, opts, err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		t.Fatalf("read %s: %v", key, err)
	}
	return b
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestMemStoreContract(t *testing.T) { testStoreContract(t, NewMemStore(nil)) }

func TestMemStoreFaults(t *testing.T) {
	ctx := context.Background()
	m := NewMemStore(nil)
	body := []byte("hello")
	put := func() error {
		_, err := m.Put(ctx, "k", bytes.NewReader(body), int64(len(body)), PutOptions{})
		return err
	}
	if err := put(); err != nil {
		t.Fatal(err)
	}

	m.FailCall(2)
	if _, err := m.Head(ctx, "k"); err != nil {
		t.Fatalf("first call after FailCall(2): %v", err)
	}
	if _, err := m.Head(ctx, "k"); !errors.Is(err, ErrUnavailable) || !Retryable(err) {
		t.Fatalf("second call: %v, want ErrUnavailable", err)
	}
	if _, err := m.Head(ctx, "k"); err != nil {
		t.Fatalf("third call: %v (the failure is once)", err)
	}

	m.SetDown(true)
	for _, err := range []error{put(), func() error { _, err := m.Head(ctx, "k"); return err }(), m.Delete(ctx, "k")} {
		if !errors.Is(err, ErrUnavailable) {
			t.Fatalf("store down: %v, want ErrUnavailable", err)
		}
	}
	m.SetDown(false)
	if got := readAll(t, m, "k", GetOptions{}); string(got) != "hello" {
		t.Fatalf("after coming back: %q", got)
	}

	m.CorruptNextPut()
	if err := put(); !errors.Is(err, ErrChecksum) {
		t.Fatalf("corrupted upload: %v, want ErrChecksum", err)
	}
	if err := put(); err != nil {
		t.Fatalf("next upload: %v", err)
	}

	m.LoseAnswer(1)
	if err := m.Delete(ctx, "k"); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("lost answer: %v, want ErrUnavailable", err)
	}
	if _, err := m.Head(ctx, "k"); !errors.Is(err, ErrNotExist) {
		t.Fatalf("the call whose answer was lost did not happen: %v", err)
	}
}
