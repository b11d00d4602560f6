package objstore

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
)

// Where objects live, relative to the store's prefix:
//
//	catalog                                       the catalog (sources, endpoints, tokens)
//	sources/<source>/manifest                     the source's live segments (manifest.md)
//	sources/<source>/segments/<node>/<seq>.seg    one sealed segment; seq is %016x
//
// A segment's name holds the node that wrote it and that node's sequence
// number for the source (the engine's segment id), so two ingest nodes
// never pick the same name; and every segment is created with
// If-None-Match: *, so even a misconfigured pair of nodes sharing an id
// cannot overwrite each other's segments (PublishSegment reports it).

// CatalogKey is the catalog's object.
const CatalogKey = "catalog"

// maxIDLen bounds source and node ids (the engine's source ids are UUIDs).
const maxIDLen = 128

// ValidID reports whether id may be a source or node id in a key: 1 to
// 128 of a-z, A-Z, 0-9, '-' and '_'.
func ValidID(id string) bool {
	if id == "" || len(id) > maxIDLen {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// SourcePrefix is the prefix of every object of source.
func SourcePrefix(source string) string { return "sources/" + source + "/" }

// ManifestKey is source's manifest.
func ManifestKey(source string) string { return SourcePrefix(source) + "manifest" }

// SegmentsPrefix is the prefix of source's segment objects.
func SegmentsPrefix(source string) string { return SourcePrefix(source) + "segments/" }

// SegmentName is a segment's name within its source: "<node>/<seq:%016x>.seg".
func SegmentName(node string, seq uint64) string { return fmt.Sprintf("%s/%016x.seg", node, seq) }

// SegmentKey is the object of segment seq written by node for source.
func SegmentKey(source, node string, seq uint64) string {
	return SegmentsPrefix(source) + SegmentName(node, seq)
}

// ParseSegmentName splits a segment name into its node and sequence; ok
// is false for anything SegmentName does not produce.
func ParseSegmentName(name string) (node string, seq uint64, ok bool) {
	node, file, found := strings.Cut(name, "/")
	if !found || !ValidID(node) || len(file) != 16+len(".seg") || !strings.HasSuffix(file, ".seg") {
		return "", 0, false
	}
	for i := 0; i < 16; i++ { // lower-case hex only: one name per segment
		if c := file[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return "", 0, false
		}
	}
	seq, err := strconv.ParseUint(file[:16], 16, 64)
	if err != nil {
		return "", 0, false
	}
	return node, seq, true
}

// NewNodeID returns a random node id ("n" and 16 hex digits). A node keeps
// its id in its data directory, so that a replacement node on the same
// data directory resumes under it; two nodes must never share one.
func NewNodeID() string {
	var b [8]byte
	rand.Read(b[:]) // never fails (crypto/rand panics instead)
	return "n" + hex.EncodeToString(b[:])
}
