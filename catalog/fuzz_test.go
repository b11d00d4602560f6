package catalog

import (
	"encoding/json"
	"testing"

	"github.com/sediment/sediment/internal/vfs"
)

// FuzzDecodeState feeds arbitrary bytes to the catalog file decoder: it
// must return a state or an error, never panic, and a state it accepts must
// survive a save and reload unchanged.
func FuzzDecodeState(f *testing.F) {
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
	f.Fuzz(func(t *testing.T, data []byte) {
		st, err := decodeState(data)
		if err != nil {
			return
		}
		st.reindex()
		out, err := json.Marshal(fileData{Format: FormatLatest, NextSourceID: st.nextSourceID, NextEndpointID: st.nextEndpointID,
			NextTokenID: st.nextTokenID, Sources: st.sources, Endpoints: st.endpoints, AccessTokens: st.tokens})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := decodeState(out); err != nil {
			t.Fatalf("re-decoding an accepted state: %v", err)
		}
	})
}
