package bench

import (
	"context"
	"errors"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/sediment/sediment/bench/gen"
)

// PeersSpec places the peers suite in its data: the project Q2 and Q3 ask
// about, the end of every time window and the rare word Q5 looks for.
type PeersSpec struct {
	// Project is the project of Q2 and Q3 (PeersProjectRank's by default).
	Project string
	// Now ends every window ("the last hour" is (Now-1h, Now]); the
	// all-data queries (Q1, Q5, Q6) have no window.
	Now time.Time
	// Token is the rare word of Q5 (gen.DefaultRareToken).
	Token string
}

// Sizes of the peers suite's answers.
const (
	peersNewest  = 100  // Q2: newest events of one project
	peersRareMax = 1000 // Q5: newest rare events
	peersTopN    = 10   // Q6: top paths
	peersQ3Span  = 7 * 24 * time.Hour
)

// PeersProjectRank is the rank of Q2's and Q3's project: the fifth busiest,
// 4.4% of the events at 50 projects (1/5 of a Zipf share over 50 ranks).
const PeersProjectRank = 4

// peersURLRegex is Q3's URL filter: requests of a project's API host to
// the four services usage.api-counts counts. Character classes instead
// of backslashes, so that the same text is valid in BigQuery string
// literals and in LogsQL strings.
const peersURLRegex = `^https://[a-z]{20}[.]supabase[.]co/(rest|storage|auth|realtime)/`

// peersPathRegexes are usage.api-counts' four path regexes and the
// columns they count into.
var peersPathRegexes = [4][2]string{
	{"/rest", "total_rest_requests"},
	{"/storage", "total_storage_requests"},
	{"/auth", "total_auth_requests"},
	{"/realtime", "total_realtime_requests"},
}

// Truth is what the generator says the peers suite's answers are, from the
// facts of every event it generated (gen.Generator.Facts): nothing is read
// back from a server.
type Truth struct {
	Spec   PeersSpec
	Events int64
	// Newest is the data's newest event time.
	Newest time.Time
	// Status500 counts events with status 500 (Q1).
	Status500 int64
	// ProjectNewest are the times (µs) of the project's newest events in
	// the last hour, newest first, at most peersNewest (Q2).
	ProjectNewest []int64
	// Hourly maps an hour (µs) to the project's events in the last 7
	// days whose url matches peersURLRegex: the count per path regex of
	// peersPathRegexes (Q3).
	Hourly map[int64][4]int64
	// Minutely maps a minute (µs) to the events of the last hour (Q4).
	Minutely map[int64]int64
	// Rare are the times (µs) of the events with the rare token, newest
	// first (Q5).
	Rare []int64
	// Paths counts events per request path (Q6).
	Paths map[string]int64
}

// PeersDataset is the data the peers suite runs on, as issue 14 measured:
// platform edge events of 50 projects (Zipf-like sizes) over 7 days
// ending now, a rare token in about one message in 100,000 and storage
// paths from 12,000 objects (about 48,000 distinct paths over 10M
// events).
func PeersDataset(events int, seed int64) Dataset {
	return Dataset{
		Shape:          gen.Platform,
		Seed:           seed,
		Sources:        EdgeOnly(),
		Projects:       50,
		Events:         events,
		Span:           peersQ3Span,
		RareEvery:      100_000,
		StorageObjects: 12_000,
	}.WithDefaults()
}

// errPeersData is returned for data the peers suite cannot ask about.
var errPeersData = errors.New("bench: the peers suite needs platform-shaped edge events only (--shape platform --sources edge)")

// DefaultPeersSpec returns the spec for ds: PeersProjectRank's project,
// windows ending a second after ds.End, the default rare token.
func DefaultPeersSpec(ds Dataset) PeersSpec {
	ds = ds.WithDefaults()
	return PeersSpec{Project: ds.ProjectAt(PeersProjectRank), Now: ds.End.Add(time.Second), Token: gen.DefaultRareToken}
}

// ComputeTruth generates ds once (as the producers that send it do) and
// computes the peers suite's answers for spec from the generator's facts.
func ComputeTruth(ctx context.Context, ds Dataset, spec PeersSpec, p *Progress) (*Truth, error) {
	ds = ds.WithDefaults()
	if ds.Shape != gen.Platform || len(ds.Sources) != 1 || ds.Sources[0].Source != gen.EdgeLogs {
		return nil, errPeersData
	}
	urlRe := regexp.MustCompile(peersURLRegex)
	now := spec.Now.UnixMicro()
	hourAgo := spec.Now.Add(-time.Hour).UnixMicro()
	weekAgo := spec.Now.Add(-peersQ3Span).UnixMicro()
	tr := &Truth{Spec: spec, Hourly: map[int64][4]int64{}, Minutely: map[int64]int64{}, Paths: map[string]int64{}}
	var projectHour []int64
	var newest int64
	var url []byte
	prod := ds.NewProducer(1000)
	prod.OnEvent = func(g *gen.Generator) {
		f, ok := g.Facts()
		if !ok {
			return
		}
		t := f.Time / 1e3 // µs, as the servers store it
		tr.Events++
		newest = max(newest, f.Time)
		if f.Status == 500 {
			tr.Status500++
		}
		tr.Paths[string(f.Path)]++
		if f.Rare {
			tr.Rare = append(tr.Rare, t)
		}
		inHour := t > hourAgo && t <= now
		if inHour {
			tr.Minutely[floorTo(t, 60e6)]++
		}
		if f.Project != spec.Project || t <= weekAgo || t > now {
			return
		}
		if inHour {
			projectHour = append(projectHour, t)
		}
		url = f.URL(url[:0])
		if !urlRe.Match(url) {
			return
		}
		h := floorTo(t, 3600e6)
		counts := tr.Hourly[h]
		for i, re := range peersPathRegexes {
			// The path regexes are plain substrings.
			if strings.Contains(string(f.Path), re[0]) {
				counts[i]++
			}
		}
		tr.Hourly[h] = counts
	}
	p.Start("truth (generate)", int64(ds.Events), "events")
	var buf []byte
	for {
		if err := ctx.Err(); err != nil {
			p.Finish()
			return nil, err
		}
		b, ok := prod.Next(buf)
		if !ok {
			break
		}
		buf = b.Body
		p.Add(int64(b.Events))
	}
	p.Finish()
	tr.Newest = time.Unix(0, newest).UTC()
	desc := func(xs []int64) { slices.SortFunc(xs, func(a, b int64) int { return int(sign(b - a)) }) }
	desc(projectHour)
	tr.ProjectNewest = projectHour[:min(len(projectHour), peersNewest)]
	desc(tr.Rare)
	return tr, nil
}

// floorTo rounds t down to a multiple of unit (both positive in practice).
func floorTo(t, unit int64) int64 {
	q := t / unit
	if t%unit < 0 {
		q--
	}
	return q * unit
}

func sign(x int64) int64 {
	switch {
	case x < 0:
		return -1
	case x > 0:
		return 1
	}
	return 0
}

// TopPaths returns the n largest path counts, largest first, with the
// paths that have them (ties in no particular order).
func (t *Truth) TopPaths(n int) []PathCount {
	out := make([]PathCount, 0, len(t.Paths))
	for p, c := range t.Paths {
		out = append(out, PathCount{p, c})
	}
	slices.SortFunc(out, func(a, b PathCount) int {
		if a.Count != b.Count {
			return int(sign(b.Count - a.Count))
		}
		return strings.Compare(a.Path, b.Path)
	})
	return out[:min(n, len(out))]
}

// PathCount is a request path and its events.
type PathCount struct {
	Path  string
	Count int64
}

// TruthSummary is what a report says of the truth.
type TruthSummary struct {
	Events        int64     `json:"events"`
	Newest        time.Time `json:"newest"`
	Project       string    `json:"project"`
	Now           time.Time `json:"now"`
	Status500     int64     `json:"status_500"`
	ProjectInHour int       `json:"project_newest"`
	Q3Hours       int       `json:"q3_hours"`
	Q4Minutes     int       `json:"q4_minutes"`
	Rare          int       `json:"rare"`
	Paths         int       `json:"distinct_paths"`
}

// Summary describes the truth for a report.
func (t *Truth) Summary() TruthSummary {
	return TruthSummary{Events: t.Events, Newest: t.Newest, Project: t.Spec.Project, Now: t.Spec.Now, Status500: t.Status500,
		ProjectInHour: len(t.ProjectNewest), Q3Hours: len(t.Hourly), Q4Minutes: len(t.Minutely), Rare: len(t.Rare), Paths: len(t.Paths)}
}
