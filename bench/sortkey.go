package bench

import (
	"github.com/sediment/sediment/catalog"
	"github.com/sediment/sediment/engine"
)

// SortKeyNone, as a sweep setting's sort key (`--sort-key none`), orders
// every source's segments by time only. A setting without a sort key
// keeps what the seeded catalog gives each source (the edge logs:
// project).
const SortKeyNone = "none"

func init() { SortKeySetter = setCatalogSortKeys }

// setCatalogSortKeys gives every source of a sweep's catalog the setting's
// sort key, as an operator would with PUT /api/sources/<token>;
// ingestInProcess then gives each shard its source's key, as the server
// does.
func setCatalogSortKeys(_ *engine.Options, cat *catalog.Catalog, key string) error {
	if key == SortKeyNone {
		key = ""
	}
	for _, src := range cat.Sources() {
		k := key
		if _, err := cat.UpdateSource(src.Token, catalog.SourceParams{SortKey: &k}); err != nil {
			return err
		}
	}
	return nil
}
