package main

import (
	"fmt"
	"io"
	"path/filepath"

	"github.com/sediment/sediment/catalog"
)

// catalogRecovery says, in one paragraph, how to recover from a damaged
// catalog file in dataDir: from its previous version when that is intact,
// else from a backup.
func catalogRecovery(dataDir string) string {
	_, prev := catalog.CheckFiles(dataDir, nil)
	cur := filepath.Join(dataDir, catalog.FileName)
	if prev.OK() {
		return fmt.Sprintf("To recover, stop any sediment server on %s and run `sediment fsck --data-dir %s --restore-catalog`: "+
			"it keeps the damaged file as %s.damaged-<time> and puts back %s, the catalog as it was before its last change "+
			"(that change to sources, endpoints or access tokens is lost; make it again). Or restore %s from a backup.",
			dataDir, dataDir, cur, prev.Path, cur)
	}
	why := "is missing"
	if prev.Exists {
		why = fmt.Sprintf("is damaged too (%v)", prev.Err)
	}
	return fmt.Sprintf("Its previous version %s %s: restore %s from a backup.", prev.Path, why, cur)
}

// restoreCatalog is fsck's --restore-catalog: with the data directory
// locked (no server may run on it), put the catalog's previous version in
// place of a damaged catalog file. It reports what it did; false when it
// could not.
func restoreCatalog(dataDir string, stdout, stderr io.Writer) bool {
	lock, err := lockDataDir(dataDir)
	if err != nil {
		fmt.Fprintf(stderr, "sediment fsck: --restore-catalog: %v; stop the server first\n", err)
		return false
	}
	defer lock.Close()
	kept, err := catalog.RestorePrevious(dataDir, nil)
	if err != nil {
		fmt.Fprintf(stderr, "sediment fsck: --restore-catalog: %v\n", err)
		return false
	}
	fmt.Fprintf(stdout, "catalog: restored %s from %s", filepath.Join(dataDir, catalog.FileName), catalog.PrevFileName)
	if kept != "" {
		fmt.Fprintf(stdout, "; the damaged file is kept as %s", kept)
	}
	fmt.Fprintln(stdout)
	return true
}

// checkCatalog prints fsck's lines about the catalog files and returns the
// number of problems and, when it opens, the catalog.
func checkCatalog(dataDir string, stdout io.Writer) (int, *catalog.Catalog) {
	bad := 0
	cur, prev := catalog.CheckFiles(dataDir, nil)
	switch {
	case !cur.Exists && prev.Exists:
		fmt.Fprintf(stdout, "catalog: damaged: %s is missing but its previous version %s exists\n", cur.Path, prev.Path)
		fmt.Fprintf(stdout, "  %s\n", catalogRecovery(dataDir))
		bad++
	case cur.Err != nil:
		fmt.Fprintf(stdout, "catalog: damaged: %s: %v\n", cur.Path, cur.Err)
		fmt.Fprintf(stdout, "  %s\n", catalogRecovery(dataDir))
		bad++
	case cur.Exists && cur.Format < catalog.FormatLatest:
		fmt.Fprintf(stdout, "catalog: note: %s is in format %d, without a checksum; `sediment serve` rewrites it with one when it starts\n", cur.Path, cur.Format)
	}
	if prev.Exists && prev.Err != nil {
		fmt.Fprintf(stdout, "catalog: damaged: %s (the previous version): %v; the next change to the catalog rewrites it\n", prev.Path, prev.Err)
		bad++
	}
	if bad > 0 && !cur.OK() {
		return bad, nil
	}
	cat, err := catalog.Open(dataDir, &catalog.Options{ReadOnly: true})
	if err != nil {
		fmt.Fprintf(stdout, "catalog: damaged: %v\n", err)
		return bad + 1, nil
	}
	return bad, cat
}
