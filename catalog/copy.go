package catalog

import (
	"fmt"
	"path/filepath"

	"github.com/sediment/sediment/internal/vfs"
)

// WriteCopy writes the catalog as it is now to dir/catalog.json, durably,
// for a snapshot of the data directory, and returns the tokens of the
// sources it holds (the shards the snapshot should take). dir must exist.
func (c *Catalog) WriteCopy(dir string) (sourceTokens []string, err error) {
	st := c.load() // immutable: changes publish a new state
	data, err := encodeFile(st)
	if err != nil {
		return nil, err
	}
	if err := vfs.WriteFileAtomic(c.opts.FS, filepath.Join(dir, FileName), data); err != nil {
		return nil, fmt.Errorf("write catalog copy: %w", err)
	}
	sourceTokens = make([]string, len(st.sources))
	for i, s := range st.sources {
		sourceTokens[i] = s.Token
	}
	return sourceTokens, nil
}
