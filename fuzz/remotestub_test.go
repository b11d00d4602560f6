package fuzz

import (
	"bytes"
	"errors"
	"testing"

	"github.com/sediment/sediment/engine"
)

// FuzzRemoteStub: the stub of an evicted segment (segments/<id>.remote),
// read at every startup of an ingest node. Decoding never panics, fails
// only with engine.ErrRemoteStubCorrupt, allocates little, and what
// decodes encodes back to the same bytes.
func FuzzRemoteStub(f *testing.F) {
	for _, st := range []engine.RemoteStub{{}, {Size: 1 << 40, Rows: 1 << 30, MinTime: -1 << 62, MaxTime: 1 << 62, WALLast: 1<<64 - 1},
		{Size: 4096, Rows: 300, MinTime: 1, MaxTime: 2, WALLast: 7}} {
		f.Add(st.Encode())
	}
	f.Add([]byte("SDRS"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > maxInput {
			t.Skip()
		}
		var st engine.RemoteStub
		var err error
		checkAlloc(t, allocLimit(len(data)), func() { st, err = engine.DecodeRemoteStub(data) })
		if err != nil {
			if !errors.Is(err, engine.ErrRemoteStubCorrupt) {
				t.Fatalf("error does not match ErrRemoteStubCorrupt: %v", err)
			}
			return
		}
		if !bytes.Equal(st.Encode(), data) {
			t.Fatalf("%x decodes to %+v, which encodes to %x", data, st, st.Encode())
		}
	})
}
