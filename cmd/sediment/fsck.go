package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/sediment/sediment/engine"
)

func init() {
	commands["fsck"] = command{summary: "check a data directory: every checksum, index and time bound; --repair-wal repairs damaged logs", run: runFsck}
}

// runFsck is `sediment fsck`: open the data directory read-only (a running
// server may keep using it) and verify every segment's checksums, that
// indexes agree with their columns, time bounds and the write-ahead logs.
// Each problem is printed with what it costs and the command (if any) that
// repairs it. With --repair-wal (the server stopped), damaged logs are
// first rewritten without their damaged records.
func runFsck(args []string, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("fsck", flag.ContinueOnError)
	fl.SetOutput(stderr)
	dataDir := fl.String("data-dir", "./data", "data directory to check")
	restore := fl.Bool("restore-catalog", false, "first replace a damaged catalog.json with catalog.json.prev, the catalog before its last change (keeping the damaged file beside it); the server must be stopped")
	only := fl.String("source", "", "check (and repair) this source only: its name or token")
	repairWAL := fl.Bool("repair-wal", false, "with the server stopped, rewrite damaged write-ahead logs without their damaged records (the originals are kept in the source's quarantine/), then check")
	fl.Usage = func() {
		fmt.Fprintln(stderr, "usage: sediment fsck [--data-dir DIR] [--source NAME|TOKEN] [--repair-wal] [--restore-catalog]")
		fmt.Fprintln(stderr, "Checks a data directory without changing it (but for --repair-wal and --restore-catalog); exit status 1 if anything is damaged.")
		fl.PrintDefaults()
	}
	if err := fl.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return 0
		}
		return 2
	}
	if fl.NArg() > 0 {
		fl.Usage()
		return 2
	}
	if _, err := os.Stat(*dataDir); err != nil {
		fmt.Fprintln(stderr, "sediment fsck:", err)
		return 2
	}
	if *restore && !restoreCatalog(*dataDir, stdout, stderr) {
		return 1
	}
	names := map[string]string{} // token → name
	bad, cat := checkCatalog(*dataDir, stdout)
	haveCatalog := cat != nil
	if cat != nil {
		for _, s := range cat.Sources() {
			names[s.Token] = s.Name
		}
	}
	want := ""
	if *only != "" {
		want = *only
		for tok, name := range names {
			if name == *only {
				want = tok
			}
		}
		if _, err := os.Stat(filepath.Join(*dataDir, "sources", want)); err != nil {
			fmt.Fprintf(stderr, "sediment fsck: no stored data for source %q\n", *only)
			return 2
		}
	}
	label := func(id string) string {
		name := names[id]
		if name == "" {
			name = "(no source in the catalog)"
			if !haveCatalog {
				name = "(catalog unreadable)"
			}
		}
		return name + " " + id
	}
	sourceArg := func(id string) string {
		if n := names[id]; n != "" && !strings.ContainsAny(n, " '\"") {
			return n
		}
		return id
	}

	if *repairWAL {
		lock, err := lockDataDir(*dataDir)
		if err != nil {
			fmt.Fprintf(stderr, "sediment fsck: --repair-wal needs the server stopped: %v\n", err)
			return 2
		}
		defer lock.Close()
		ids, err := shardDirs(*dataDir)
		if err != nil {
			fmt.Fprintln(stderr, "sediment fsck:", err)
			return 2
		}
		for _, id := range ids {
			if want != "" && id != want {
				continue
			}
			reps, err := engine.RepairWAL(*dataDir, id, nil)
			for _, r := range reps {
				fmt.Fprintf(stdout, "%s: %s\n", label(id), r)
			}
			if err != nil {
				fmt.Fprintf(stdout, "%s: write-ahead log not repaired: %v\n", label(id), err)
				return 1
			}
		}
	}

	eng, err := engine.Open(*dataDir, &engine.Options{ReadOnly: true})
	if err != nil {
		fmt.Fprintln(stderr, "sediment fsck: open:", err)
		return 1
	}
	defer eng.Close()
	for _, sh := range eng.Shards() {
		in := sh.Info()
		if want != "" && in.ID != want {
			continue
		}
		fmt.Fprintf(stdout, "%s: %d segments, %d rows, %.1f MiB on disk, %d rows in the write-ahead log",
			label(in.ID), in.Segments, in.SegmentRows, float64(in.SegmentBytes)/(1<<20), in.HeadRows)
		if in.Segments+in.HeadRows > 0 && in.MaxTime > 0 {
			fmt.Fprintf(stdout, ", %s .. %s", fmtTime(in.MinTime), fmtTime(in.MaxTime))
		}
		fmt.Fprintln(stdout)
		for _, p := range sh.CheckProblems() {
			var re *engine.SegmentReadError
			if errors.As(p, &re) {
				fmt.Fprintf(stdout, "  unreadable: %v\n", p)
				bad++
				continue
			}
			fmt.Fprintf(stdout, "  damaged: %v\n", p)
			if hint := repairHint(p, *dataDir, sourceArg(in.ID)); hint != "" {
				fmt.Fprintf(stdout, "    repair: %s\n", hint)
			}
			bad++
		}
		// Set aside earlier: known losses, not counted again.
		for _, l := range in.Lost {
			fmt.Fprintf(stdout, "  set aside: %s\n", describeLost(l))
		}
	}
	if bad > 0 {
		fmt.Fprintf(stdout, "%d problem(s) found\n", bad)
		return 1
	}
	fmt.Fprintln(stdout, "ok")
	return 0
}

// shardDirs lists the source directories of a data directory.
func shardDirs(dataDir string) ([]string, error) {
	ents, err := os.ReadDir(filepath.Join(dataDir, "sources"))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range ents {
		if e.IsDir() {
			out = append(out, e.Name())
		}
	}
	return out, nil
}

func fmtTime(us int64) string { return time.UnixMicro(us).UTC().Format(time.RFC3339) }

// repairHint says what a problem costs and what repairs it.
func repairHint(p error, dataDir, source string) string {
	repairCmd := fmt.Sprintf("stop the server, then run `sediment fsck --data-dir %s --repair-wal --source %s` (or restart it with `sediment serve --repair-wal`)", dataDir, source)
	var wce *engine.WALCorruptError
	var wve *engine.WALVersionError
	var sde *engine.SegmentDamageError
	var ide *engine.IndexDamagedError
	switch {
	case errors.As(p, &ide):
		return "nothing is lost: the server scans the segment without its index, and its next compaction rebuilds the index and removes the record (" + ide.File[:len(ide.File)-len(".seg")] + ".ixdmg)"
	case errors.As(p, &wce) && (wce.Header || wce.Recovered):
		return "nothing is lost: the server reads every record of the file; to rewrite it clean, " + repairCmd
	case errors.As(p, &wce):
		return "until then the source is read-only (ingest answers 503); " + repairCmd + "; the repair drops only that and keeps the file as it was in quarantine/"
	case errors.As(p, &wve):
		return "not damage: a newer Sediment wrote this log; run that version"
	case errors.As(p, &sde) && sde.Unit == "block":
		return fmt.Sprintf("nothing to run: the server sets block %d aside when a query or compaction first reads it (answers then say its %s events are missing), and a compaction rewrites the segment without it, keeping the original in quarantine/", sde.Block, thousands(sde.Events))
	case errors.As(p, &sde) && sde.Unit == "index":
		return "nothing is lost: queries scan the segment without its index, and the next compaction rebuilds it"
	case errors.As(p, &sde) && sde.Unit == "segment":
		return "nothing to run: the server moves the segment to quarantine/ when it starts; its events are lost and answers over its time range say so"
	case errors.As(p, &sde):
		return "the segment disagrees with itself; the server keeps serving it: keep a copy of the file and report it"
	}
	return ""
}

// describeLost is one line about data set aside.
func describeLost(l engine.LostData) string {
	what := "segment " + l.Segment + " (the whole segment)"
	if l.Block >= 0 {
		what = fmt.Sprintf("segment %s block %d", l.Segment, l.Block)
	}
	events := "an unknown number of events"
	if l.Events >= 0 {
		events = thousands(l.Events) + " events"
	}
	span := ""
	if l.MinTime != 0 || l.MaxTime != 0 {
		span = fmt.Sprintf(" from %s to %s", fmtTime(l.MinTime), fmtTime(l.MaxTime))
	}
	where := "in quarantine/"
	if l.InUse {
		where = "skipped in the segment in use until a compaction rewrites it"
	}
	return fmt.Sprintf("%s: %s%s, %s (%s); found %s", what, events, span, where, l.Cause, l.Found.Format(time.RFC3339))
}

// thousands formats n with commas.
func thousands(n int64) string {
	s := fmt.Sprint(n)
	if n < 0 {
		return s
	}
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}
