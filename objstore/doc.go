// Package objstore keeps Sediment's sealed segments, per-source manifests
// and the catalog on S3-compatible object storage (S3, MinIO, Ceph, GCS's
// S3 interface, R2), and reads them back through a bounded local cache.
//
// The pieces, one file each:
//
//   - Store (store.go): the few object operations Sediment needs: ranged
//     Get, Put with the object's CRC32-C verified against the checksum the
//     server computed, conditional Put (create only, or replace the version
//     read), Head, List by prefix and Delete. S3 (s3.go) implements it with
//     minio-go; MemStore (mem.go) in memory, with fault injection for tests.
//   - UpdateObject (update.go): read, modify, conditional put, retry on a
//     lost race with backoff: several writers never lose each other's
//     updates. The manifests and the catalog are written this way.
//   - Manifest (manifest.go, docs/format/manifest.md): the live segments of
//     one source, with a format version and a checksum.
//   - Keys and node ids (keys.go): where each object lives, and segment
//     names that never collide across ingest nodes.
//   - PublishSegment and RemoveSegments (publish.go): upload a segment and
//     list it in the manifest, or delist segments, idempotently.
//   - CollectGarbage (gc.go): deletes segment objects no manifest lists
//     (uploads interrupted before their manifest update, and segments
//     delisted by compaction or retention) once a grace period has passed.
//   - Cache (cache.go, cachefile.go): a read-through cache of object bytes
//     in a local directory, fetched in aligned chunks on demand, bounded in
//     bytes and evicted least recently used, surviving restarts. Cache.Open
//     returns a vfs.File, which segment.Open reads like a local file.
//
// The package knows nothing of the engine: the engine declares the
// interface it calls (engine.Remote) and a package above both adapts one to
// the other. See docs/scale.md for the architecture this is the base of.
package objstore
