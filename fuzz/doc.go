// Package fuzz holds Sediment's fuzz targets: one per decoder and parser
// that takes outside bytes (ingest bodies, logplex lines, event
// normalisation, write-ahead logs, segment files and their footers, index
// directories, object store manifests, SQL, LQL), one that searches values
// laid end to end for a user's pattern, one that checks the packed pair
// literal search against bytes.Index, and one that plans and
// executes random SQL predicates over a small engine and checks
// three-valued logic. Each target
// is seeded with representative inputs of its package's tests (and the
// corpora under testdata/fuzz), calls only exported APIs, and fails on a
// panic, on an error of the wrong kind, on a broken round trip or
// invariant, and (for binary formats) on an allocation far larger than the
// input justifies.
//
// The seeds run with the ordinary tests. To fuzz, one target at a time:
//
//	go test ./fuzz -run '^$' -fuzz '^FuzzSegmentFooter$' -fuzztime 60s
//
// or every target in turn (what CI runs, for 3s each):
//
//	bash fuzz/run.sh 60s
//
// A failing input is written to testdata/fuzz/<Target>/ and from then on
// runs as a regression test; commit it with the fix.
package fuzz
