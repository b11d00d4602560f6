package catalog

import (
	"errors"
	"reflect"
	"testing"

	"github.com/sediment/sediment/internal/vfs"
)

// FuzzDecodeFile feeds arbitrary bytes to the catalog file decoder: it
// must return a state or an error wrapping ErrCorrupt, never panic, and a
// state it accepts must survive being written in the current format and
// read back unchanged.
func FuzzDecodeFile(f *testing.F) {
	c, err := Open("/data", testOpts(vfs.NewMemFS()))
	if err != nil {
		f.Fatal(err)
	}
	if _, err := c.SeedSupabase(); err != nil {
		f.Fatal(err)
	}
	if _, err := c.CreateAccessToken("k", []string{"public"}, "env:public", ""); err != nil {
		f.Fatal(err)
	}
	seed, _ := vfs.ReadFile(c.opts.FS, c.path)
	f.Add(seed)
	f.Add([]byte(`{"format":1}`))
	f.Add([]byte(`{"format":1,"next_source_id":2,"sources":[{"id":1,"token":"00000000-0000-4000-8000-000000000001","name":"a"}]}`))
	f.Add([]byte(`{"format":1,"sources":[null]}`))
	f.Add([]byte(`{"format":2,"checksum":"crc32c:00000000","catalog":{}}`))
	f.Add([]byte(`{"format":2,"checksum":"crc32c:00000000","catalog":{},"x":1}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		st, _, err := decodeFile(data)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error not wrapping ErrCorrupt: %v", err)
			}
			return
		}
		st.reindex()
		out, err := encodeFile(st)
		if err != nil {
			t.Fatal(err)
		}
		back, format, err := decodeFile(out)
		if err != nil || format != FormatLatest {
			t.Fatalf("re-decoding an accepted state: format %d, %v", format, err)
		}
		if !reflect.DeepEqual(back.payload(), st.payload()) {
			t.Fatal("the state changed in a write and read")
		}
	})
}
