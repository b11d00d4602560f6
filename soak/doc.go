// Package soak holds Sediment's soak test: a black-box run of the
// `sediment` binary for a long time under mixed ingest, Studio-shaped
// queries, flush, compaction and retention, with kill -9 cycles and a full
// disk, checking that nothing acknowledged is lost or duplicated, that
// nothing panics and that memory stays within the limit plus the query
// budget.
//
// The test is behind the build tag soak (and Linux: it mounts a tmpfs and
// reads /proc), so `go test ./...` does not run it:
//
//	go test -tags soak ./soak -run Soak -timeout 40m -soak.duration 20m
//
// It builds the binary from this module (`go build ./cmd/sediment`), mounts
// a small tmpfs for the data directory (it needs root or CAP_SYS_ADMIN and
// skips otherwise), and prints a summary; -soak.json writes it as JSON.
// soak_test.go lists the flags. The README's "Soak test" section has the
// figures of a 20-minute run.
package soak
