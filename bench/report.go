package bench

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// Report kinds.
const (
	KindIngest = "ingest"
	KindQuery  = "query"
	KindSweep  = "sweep"
	KindPeers  = "peers"
)

// Report is one benchmark run, as written for people (WriteTable) and
// machines (WriteJSON, WriteCSV).
type Report struct {
	Kind    string         `json:"kind"`
	Date    time.Time      `json:"date"`
	Machine Machine        `json:"machine"`
	Dataset DatasetInfo    `json:"dataset"`
	Server  string         `json:"server,omitempty"`
	DataDir string         `json:"data_dir,omitempty"`
	Ingest  *IngestResult  `json:"ingest,omitempty"`
	Query   *QueryBench    `json:"query,omitempty"`
	Sweep   *SweepReport   `json:"sweep,omitempty"`
	Peers   *PeersReport   `json:"peers,omitempty"`
	Config  map[string]any `json:"config,omitempty"`
	Notes   []string       `json:"notes,omitempty"`
}

// NewReport starts a report of kind for dataset ds, dated now, on this
// machine.
func NewReport(kind string, ds Dataset) *Report {
	return &Report{Kind: kind, Date: time.Now().UTC().Truncate(time.Second), Machine: ThisMachine(), Dataset: ds.Info()}
}

// ReadReport reads a report written by WriteJSON.
func ReadReport(path string) (*Report, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r Report
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	switch r.Kind {
	case KindIngest, KindQuery, KindSweep, KindPeers:
	default:
		return nil, fmt.Errorf("%s: not a sediment bench report (kind %q)", path, r.Kind)
	}
	return &r, nil
}

// WriteJSON writes the report as indented JSON.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// Metric is one number of a report, named so that the same measurement of
// two reports has the same name.
type Metric struct {
	Name  string
	Value float64
	Unit  string
	// HigherIsBetter says which way is an improvement.
	HigherIsBetter bool
	// Samples are the runs Value summarises (a query's timed runs), for
	// telling a change from noise; nil for a single measurement.
	Samples []float64
	// Exact marks a measurement that does not vary between runs of the
	// same code on the same data (bytes on disk), so that one run on each
	// side is enough to call a change.
	Exact bool
}

// Metrics flattens the report's measurements.
func (r *Report) Metrics() []Metric {
	var out []Metric
	add := func(name string, v float64, unit string, higher bool) {
		out = append(out, Metric{Name: name, Value: v, Unit: unit, HigherIsBetter: higher})
	}
	ingest := func(prefix string, in *IngestResult) {
		add(prefix+"events_per_s", in.EventsPerS, "events/s", true)
		add(prefix+"mb_per_s", in.MBPerS, "MB/s", true)
		add(prefix+"latency_p50", in.LatencyP50, "ms", false)
		add(prefix+"latency_p99", in.LatencyP99, "ms", false)
		if in.PeakRSSBytes > 0 {
			add(prefix+"peak_rss", float64(in.PeakRSSBytes)/(1<<20), "MiB", false)
		}
		if in.ServerCPUSeconds > 0 {
			add(prefix+"server_cpu_per_1m_events", in.ServerCPUPerMillionEv, "CPU-s", false)
		}
		if in.Disk != nil {
			out = append(out, Metric{Name: prefix + "bytes_per_event", Value: in.BytesPerEvent, Unit: "B", Exact: true})
			add(prefix+"settle", in.Disk.SettleSeconds, "s", false)
		}
	}
	queries := func(prefix string, qs []QueryStats) {
		for _, q := range qs {
			if q.Error == "" {
				out = append(out, Metric{Name: prefix + q.Name + " median", Value: q.MedianMs, Unit: "ms", Samples: q.SamplesMs})
				add(prefix+q.Name+" p99", q.P99Ms, "ms", false)
			}
		}
	}
	switch {
	case r.Ingest != nil:
		ingest("", r.Ingest)
	case r.Query != nil:
		queries("", r.Query.Queries)
		if r.Query.PeakRSSBytes > 0 {
			add("peak_rss", float64(r.Query.PeakRSSBytes)/(1<<20), "MiB", false)
		}
	case r.Peers != nil:
		for _, sv := range r.Peers.Servers {
			if sv.Error != "" || sv.Ingest == nil {
				continue
			}
			p := sv.Name + ": "
			queries(p, sv.Queries)
			add(p+"ingest events_per_s", sv.Ingest.EventsPerS, "events/s", true)
			add(p+"cpu_s per 1M events, ingest", sv.CPUPerMillion(false), "s", false)
			add(p+"cpu_s per 1M events, ingest+settle", sv.CPUPerMillion(true), "s", false)
			out = append(out, Metric{Name: p + "bytes_per_event", Value: sv.BytesPerEvent, Unit: "B", Exact: true})
			add(p+"peak_rss ingest", float64(sv.PeakRSSIngest)/(1<<20), "MiB", false)
			add(p+"peak_rss query", float64(sv.PeakRSSQuery)/(1<<20), "MiB", false)
			if sv.GCQuery != nil {
				add(p+"gc share of query cpu", 100*sv.GCQuery.Share, "%", false)
			}
		}
	case r.Sweep != nil:
		for _, s := range r.Sweep.Results {
			if s.Error != "" {
				continue
			}
			p := s.Name + ": "
			add(p+"events_per_s", s.EventsPerS, "events/s", true)
			out = append(out, Metric{Name: p + "bytes_per_event", Value: s.BytesPerEvent, Unit: "B", Exact: true})
			add(p+"query_score", s.QueryScoreMs, "ms", false)
		}
	}
	return out
}

// WriteTable writes the report for people.
func (r *Report) WriteTable(w io.Writer) error {
	fmt.Fprintf(w, "sediment bench %s, %s\n", r.Kind, r.Date.Format("2006-01-02 15:04 MST"))
	fmt.Fprintf(w, "machine: %s\n", r.Machine)
	fmt.Fprintf(w, "data:    %s\n", r.Dataset)
	if r.Server != "" {
		fmt.Fprintf(w, "server:  %s\n", r.Server)
	}
	if r.DataDir != "" {
		fmt.Fprintf(w, "dir:     %s\n", r.DataDir)
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	switch {
	case r.Ingest != nil:
		writeIngestTable(tw, r.Ingest)
	case r.Query != nil:
		if r.Query.Loaded != nil {
			fmt.Fprintln(tw, "loading the data:")
			writeIngestTable(tw, r.Query.Loaded)
			fmt.Fprintln(tw)
		}
		if t := r.Query.Truth; t != nil {
			fmt.Fprintf(tw, "the %s suite, answers checked against the generator's truth: project %s, windows end %s\n\n",
				r.Query.Suite, t.Project, t.Now.Format("2006-01-02 15:04:05 MST"))
		}
		writeQueryTable(tw, r.Query.Queries, r.Query.Runs)
		if r.Query.PeakRSSBytes > 0 {
			fmt.Fprintf(tw, "\npeak RSS of the server while querying:\t%s\n", iec(r.Query.PeakRSSBytes))
		}
	case r.Sweep != nil:
		writeSweepTable(tw, r.Sweep)
	case r.Peers != nil:
		writePeersTable(tw, r.Peers)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, n := range r.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	return nil
}

// String describes the dataset in one line.
func (d DatasetInfo) String() string {
	var srcs []string
	for name, w := range d.Sources {
		srcs = append(srcs, name+"="+strconv.Itoa(w))
	}
	slices.Sort(srcs)
	s := fmt.Sprintf("%s events, %s shape, seed %d, sources %s, log time %s to %s",
		thousands(float64(d.Events)), d.Shape, d.Seed, strings.Join(srcs, ","),
		d.Start.Format("2006-01-02 15:04:05"), d.End.Format("2006-01-02 15:04:05 MST"))
	if d.Projects > 0 {
		s += fmt.Sprintf(", %d projects", d.Projects)
	}
	if d.RareEvery > 0 {
		s += fmt.Sprintf(", a rare token in 1 of %s messages", thousands(float64(d.RareEvery)))
	}
	if d.StorageObjects > 0 {
		s += fmt.Sprintf(", %s storage objects", thousands(float64(d.StorageObjects)))
	}
	return s
}

func writeIngestTable(w io.Writer, in *IngestResult) {
	row := func(k, v string) { fmt.Fprintf(w, "%s\t%s\n", k, v) }
	row("events sent", thousands(float64(in.Events)))
	row("connections × batch", fmt.Sprintf("%d × %d events", in.Connections, in.BatchSize))
	row("elapsed", fmt.Sprintf("%.1f s", in.Seconds))
	row("ingest rate", thousands(in.EventsPerS)+" events/s")
	row("throughput", fmt.Sprintf("%.1f MB/s (%s of JSON, %.0f B/event)", in.MBPerS, iec(in.BodyBytes), float64(in.BodyBytes)/max(float64(in.Events), 1)))
	row("request latency", fmt.Sprintf("p50 %.1f ms, p99 %.1f ms, max %.1f ms", in.LatencyP50, in.LatencyP99, in.LatencyMax))
	row("retried (429/503)", thousands(float64(in.Retries)))
	if in.ServerCPUSeconds > 0 {
		row("server CPU", fmt.Sprintf("%.1f s (%.1f s per million events)", in.ServerCPUSeconds, in.ServerCPUPerMillionEv))
	}
	if in.PeakRSSBytes > 0 {
		row("peak RSS (server)", iec(in.PeakRSSBytes))
	}
	if d := in.Disk; d != nil {
		row("stored events", thousands(float64(d.Rows)))
		row("on disk", fmt.Sprintf("%s in %d segments (WAL left: %s)", iec(d.SegmentBytes), d.Segments, iec(d.WALBytes)))
		row("bytes/event on disk", fmt.Sprintf("%.1f (compression %.1fx)", in.BytesPerEvent, float64(in.BodyBytes)/max(float64(d.SegmentBytes), 1)))
		row("flush+full compaction", fmt.Sprintf("%.1f s", d.SettleSeconds))
	}
}

func writeQueryTable(w io.Writer, qs []QueryStats, runs int) {
	fmt.Fprintf(w, "query\tvia\trows\tanswer\tmedian ms\tp99 ms\t(of %d runs)\n", runs)
	for _, q := range qs {
		if q.Error != "" {
			fmt.Fprintf(w, "%s\t%s\t-\t\tFAILED\t\t%s\n", q.Name, q.Via, q.Error)
			continue
		}
		answer := "-"
		if q.Checked {
			answer = "right"
		}
		fmt.Fprintf(w, "%s\t%s\t%d\t%s\t%s\t%s\t\n", q.Name, q.Via, q.Rows, answer, msCell(q.MedianMs), msCell(q.P99Ms))
	}
}

func writeSweepTable(w io.Writer, s *SweepReport) {
	fmt.Fprintln(w, "setting\tevents/s\tMB/s\tB/event\tsegments\tsettle s\tquery score ms\t")
	for i, r := range s.Results {
		mark := ""
		if i == s.Best {
			mark = "  ← best (" + string(s.Goal) + ")"
		}
		if r.Error != "" {
			fmt.Fprintf(w, "%s\tFAILED: %s\t\t\t\t\t\t\n", r.Name, r.Error)
			continue
		}
		score := msCell(r.QueryScoreMs)
		if r.QueryFailures > 0 {
			score += fmt.Sprintf(" (%d failed)", r.QueryFailures)
		}
		fmt.Fprintf(w, "%s\t%s\t%.1f\t%.1f\t%d\t%.1f\t%s\t%s\n", r.Name, thousands(r.EventsPerS), r.MBPerS, r.BytesPerEvent,
			r.Disk.Segments, r.Disk.SettleSeconds, score, mark)
	}
	fmt.Fprintln(w)
	for _, g := range Goals() {
		i := s.BestFor[g]
		if i < 0 {
			fmt.Fprintf(w, "best for %s:\tnone (every setting failed)\n", g)
			continue
		}
		fmt.Fprintf(w, "best for %s:\t%s\n", g, s.Results[i].Name)
	}
	if s.Best >= 0 {
		b := s.Results[s.Best]
		fmt.Fprintf(w, "\nrecommended (%s):\t%s\n", s.Goal, b.Name)
		fmt.Fprintf(w, "as serve flags:\tsediment serve %s\n", b.Setting.ServeFlags())
		if b.SegmentRowsUsed > 0 && b.SegmentRowsUsed != b.Setting.SegmentRows {
			fmt.Fprintf(w, "\t(measured with segments of %s rows, scaled to this sweep's events)\n", thousands(float64(b.SegmentRowsUsed)))
		}
	}
	if s.Truth != nil {
		fmt.Fprintf(w, "\nanswers checked against the generator's truth (%s suite): %s events, %d rare, %s distinct paths\n",
			s.Suite, thousands(float64(s.Truth.Events)), s.Truth.Rare, thousands(float64(s.Truth.Paths)))
	}
	if s.Best >= 0 && len(s.Results[s.Best].Queries) > 0 {
		fmt.Fprintf(w, "\nqueries of %s:\n", s.Results[s.Best].Name)
		writeQueryTable(w, s.Results[s.Best].Queries, s.Results[s.Best].Queries[0].Runs)
	}
	for _, n := range s.Notes {
		fmt.Fprintf(w, "\nnote:\t%s\n", n)
	}
}

// WriteCSV writes the report's main table as CSV: for ingest and peers one
// row per metric, for queries one row per query, for a sweep one row per setting
// (with each query's median as a column).
func (r *Report) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	f := func(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }
	switch {
	case r.Ingest != nil, r.Peers != nil:
		cw.Write([]string{"metric", "value", "unit"})
		for _, m := range r.Metrics() {
			cw.Write([]string{m.Name, f(m.Value), m.Unit})
		}
	case r.Query != nil:
		cw.Write([]string{"query", "via", "rows", "runs", "median_ms", "p99_ms", "min_ms", "error"})
		for _, q := range r.Query.Queries {
			cw.Write([]string{q.Name, q.Via, strconv.Itoa(q.Rows), strconv.Itoa(q.Runs), f(q.MedianMs), f(q.P99Ms), f(q.MinMs), q.Error})
		}
	case r.Sweep != nil:
		head := []string{"setting", "block_rows", "page_bytes", "zstd_level", "compact_zstd_level", "segment_rows", "segment_rows_used", "sort_key",
			"events_per_s", "mb_per_s", "bytes_per_event", "segments", "settle_s", "query_score_ms", "best", "error"}
		var qnames []string
		for _, res := range r.Sweep.Results {
			if len(res.Queries) > 0 {
				for _, q := range res.Queries {
					qnames = append(qnames, q.Name)
				}
				break
			}
		}
		for _, q := range qnames {
			head = append(head, q+" median_ms")
		}
		cw.Write(head)
		for i, res := range r.Sweep.Results {
			s := res.Setting
			row := []string{res.Name, strconv.Itoa(s.BlockRows), strconv.Itoa(s.PageBytes), strconv.Itoa(s.ZstdLevel),
				strconv.Itoa(s.CompactZstdLevel), strconv.Itoa(s.SegmentRows), strconv.Itoa(res.SegmentRowsUsed), s.SortKey, f(res.EventsPerS), f(res.MBPerS),
				f(res.BytesPerEvent), strconv.Itoa(res.Disk.Segments), f(res.Disk.SettleSeconds), f(res.QueryScoreMs),
				strconv.FormatBool(i == r.Sweep.Best), res.Error}
			med := map[string]float64{}
			for _, q := range res.Queries {
				med[q.Name] = q.MedianMs
			}
			for _, q := range qnames {
				row = append(row, f(med[q]))
			}
			cw.Write(row)
		}
	}
	cw.Flush()
	return cw.Error()
}

// Write writes the report in format table, json or csv.
func (r *Report) Write(w io.Writer, format string) error {
	switch format {
	case "", "table":
		return r.WriteTable(w)
	case "json":
		return r.WriteJSON(w)
	case "csv":
		return r.WriteCSV(w)
	}
	return fmt.Errorf("unknown format %q (table, json or csv)", format)
}

// thousands formats x rounded, with thin separators: 1,234,567.
func thousands(x float64) string {
	s := strconv.FormatInt(int64(math.Round(x)), 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// iec formats a byte count: 1.5 GiB.
func iec(n int64) string {
	const unit = 1024
	if n < unit {
		return strconv.FormatInt(n, 10) + " B"
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit && exp < 4; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTP"[exp])
}

// msCell formats milliseconds with precision suited to their size.
func msCell(x float64) string {
	switch {
	case x >= 100:
		return strconv.FormatFloat(x, 'f', 0, 64)
	case x >= 10:
		return strconv.FormatFloat(x, 'f', 1, 64)
	}
	return strconv.FormatFloat(x, 'f', 2, 64)
}
