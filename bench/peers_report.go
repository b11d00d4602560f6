package bench

import (
	"fmt"
	"io"
	"strconv"
)

// writePeersTable writes a peers run: one row per figure, a column per
// server and the ratio of the first server's figure to the second's.
func writePeersTable(w io.Writer, p *PeersReport) {
	t := p.Truth
	fmt.Fprintf(w, "truth:\t%s events; Q2/Q3 project %s; windows end %s; %s with status 500, %d rare, %s distinct paths\n",
		thousands(float64(t.Events)), t.Project, t.Now.Format("2006-01-02 15:04:05 MST"), thousands(float64(t.Status500)), t.Rare, thousands(float64(t.Paths)))
	fmt.Fprintf(w, "load:\t%d senders × %s events per request; %d timed runs per query after a warm-up run\n\n", p.Senders, thousands(float64(p.BatchSize)), p.Runs)

	head := "figure"
	for _, s := range p.Servers {
		head += "\t" + s.Name
	}
	if len(p.Servers) == 2 {
		head += "\tratio " + p.Servers[0].Name + "/" + p.Servers[1].Name
	}
	fmt.Fprintln(w, head+"\t")
	// row writes a figure of every server; ratio is added for two servers
	// when both figures are positive.
	row := func(name string, cell func(*PeerResult) string, value func(*PeerResult) float64) {
		line := name
		vals := make([]float64, 0, 2)
		for i := range p.Servers {
			s := &p.Servers[i]
			if s.Error != "" && s.Ingest == nil {
				line += "\tFAILED"
				continue
			}
			line += "\t" + cell(s)
			if value != nil {
				vals = append(vals, value(s))
			}
		}
		if len(p.Servers) == 2 {
			line += "\t"
			if len(vals) == 2 && vals[0] > 0 && vals[1] > 0 {
				line += fmt.Sprintf("%.2f", vals[0]/vals[1])
			}
		}
		fmt.Fprintln(w, line+"\t")
	}
	if len(p.Servers) > 0 {
		for qi, q := range p.Servers[0].Queries {
			find := func(s *PeerResult) *QueryStats {
				if qi < len(s.Queries) && s.Queries[qi].Name == q.Name {
					return &s.Queries[qi]
				}
				return nil
			}
			row(q.Name+", median / p99 ms", func(s *PeerResult) string {
				switch qs := find(s); {
				case qs == nil:
					return "-"
				case qs.Error != "":
					return "FAILED"
				default:
					return msCell(qs.MedianMs) + " / " + msCell(qs.P99Ms)
				}
			}, func(s *PeerResult) float64 {
				if qs := find(s); qs != nil && qs.Error == "" {
					return qs.MedianMs
				}
				return 0
			})
		}
	}
	ingest := func(f func(*IngestResult) float64) func(*PeerResult) float64 {
		return func(s *PeerResult) float64 {
			if s.Ingest == nil {
				return 0
			}
			return f(s.Ingest)
		}
	}
	rate := ingest(func(in *IngestResult) float64 { return in.EventsPerS })
	row(fmt.Sprintf("ingest, %d senders, events/s", p.Senders), func(s *PeerResult) string { return thousands(rate(s)) }, rate)
	cpu := func(s *PeerResult) float64 { return s.CPUPerMillion(false) }
	row("server CPU-s per 1M events, ingest", func(s *PeerResult) string { return fmt.Sprintf("%.1f", cpu(s)) }, cpu)
	cpuAll := func(s *PeerResult) float64 { return s.CPUPerMillion(true) }
	row("  with flush and merge", func(s *PeerResult) string { return fmt.Sprintf("%.1f", cpuAll(s)) }, cpuAll)
	bpe := func(s *PeerResult) float64 { return s.BytesPerEvent }
	row("bytes per event on disk", func(s *PeerResult) string { return fmt.Sprintf("%.1f", bpe(s)) }, bpe)
	rssI := func(s *PeerResult) float64 { return float64(s.PeakRSSIngest) }
	row("peak RSS, ingesting", func(s *PeerResult) string { return iec(s.PeakRSSIngest) }, rssI)
	rssQ := func(s *PeerResult) float64 { return float64(s.PeakRSSQuery) }
	row("peak RSS, querying", func(s *PeerResult) string { return iec(s.PeakRSSQuery) }, rssQ)
	qcpu := func(s *PeerResult) float64 { return s.QueryCPUSeconds }
	row("server CPU-s over the query runs", func(s *PeerResult) string { return fmt.Sprintf("%.1f", qcpu(s)) }, qcpu)
	gc := func(u *GCUse) string {
		if u == nil {
			return "-"
		}
		return fmt.Sprintf("%.0f%% (%d GCs)", 100*u.Share, u.Cycles)
	}
	row("GC share of CPU, ingest", func(s *PeerResult) string { return gc(s.GCIngest) }, nil)
	row("GC share of CPU, queries", func(s *PeerResult) string { return gc(s.GCQuery) }, nil)
	retries := ingest(func(in *IngestResult) float64 { return float64(in.Retries) })
	row("requests retried (429/503)", func(s *PeerResult) string { return thousands(retries(s)) }, nil)
	row("events stored / sent", func(s *PeerResult) string {
		if s.Ingest == nil {
			return "-"
		}
		return thousands(float64(s.StoredEvents)) + " / " + thousands(float64(s.Ingest.Events))
	}, nil)
	row("answers checked against the truth", func(s *PeerResult) string {
		ok := 0
		for _, q := range s.Queries {
			if q.Checked {
				ok++
			}
		}
		return strconv.Itoa(ok) + " of " + strconv.Itoa(len(s.Queries)) + " right"
	}, nil)
	fmt.Fprintln(w)
	for _, s := range p.Servers {
		if s.Error != "" {
			fmt.Fprintf(w, "%s failed:\t%s\n", s.Name, s.Error)
		}
		for _, n := range s.Notes {
			fmt.Fprintf(w, "%s:\t%s\n", s.Name, n)
		}
		if s.DataDir != "" {
			fmt.Fprintf(w, "%s data:\t%s\n", s.Name, s.DataDir)
		}
	}
}
