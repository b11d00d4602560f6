package bench

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/sediment/sediment/bench/gen"
)

// SourceWeight is one source of a Dataset and its share of the events.
type SourceWeight struct {
	Source gen.Source
	Weight int
}

// EdgeOnly is the mix of a platform edge: every event is an edge request log.
func EdgeOnly() []SourceWeight { return []SourceWeight{{gen.EdgeLogs, 1}} }

// SupabaseMix is the mix of a busy Supabase project, all nine sources: the
// API gateway's request logs dominate, then the database's, the services'
// own logs share the rest.
func SupabaseMix() []SourceWeight {
	return []SourceWeight{
		{gen.EdgeLogs, 40},
		{gen.PostgresLogs, 20},
		{gen.FunctionEdgeLogs, 5},
		{gen.FunctionLogs, 5},
		{gen.AuthLogs, 8},
		{gen.RealtimeLogs, 6},
		{gen.StorageLogs, 8},
		{gen.PostgRESTLogs, 6},
		{gen.PgBouncerLogs, 2},
	}
}

// ParseSources reads a --sources value: "edge" (EdgeOnly), "all"
// (SupabaseMix), or a comma-separated list of source names or Studio table
// names, each optionally with "=weight" (default 1).
func ParseSources(s string) ([]SourceWeight, error) {
	switch strings.TrimSpace(s) {
	case "", "edge":
		return EdgeOnly(), nil
	case "all":
		return SupabaseMix(), nil
	}
	var out []SourceWeight
	seen := map[gen.Source]bool{}
	for _, part := range strings.Split(s, ",") {
		name, weight, hasWeight := strings.Cut(strings.TrimSpace(part), "=")
		src, ok := gen.SourceByName(name)
		if !ok {
			return nil, fmt.Errorf("unknown source %q (a source name such as cloudflare.logs.prod or a table such as edge_logs)", name)
		}
		if seen[src] {
			return nil, fmt.Errorf("source %q listed twice", name)
		}
		seen[src] = true
		w := 1
		if hasWeight {
			if _, err := fmt.Sscanf(weight, "%d", &w); err != nil || w <= 0 {
				return nil, fmt.Errorf("bad weight %q for %s", weight, name)
			}
		}
		out = append(out, SourceWeight{src, w})
	}
	return out, nil
}

// Dataset describes generated events: which sources, in which shape, how
// many, and where they lie in log time. The same Dataset (with the same
// End) always yields the same bytes.
type Dataset struct {
	Shape    gen.Shape
	Seed     int64
	Sources  []SourceWeight // default EdgeOnly
	Projects int            // platform projects (default gen.DefaultProjects)
	Events   int
	// End is the log time of the newest event (default now, truncated to
	// the second); Span is the log time the events cover (default 24h).
	End  time.Time
	Span time.Duration
	// RareEvery and StorageObjects are gen.Options' (0: off): a rare
	// token (gen.DefaultRareToken) in about one edge message in
	// RareEvery, and storage paths from a fixed set of objects.
	RareEvery      int
	StorageObjects int
}

// WithDefaults returns d with its zero fields set; End becomes now.
func (d Dataset) WithDefaults() Dataset {
	if len(d.Sources) == 0 {
		d.Sources = EdgeOnly()
	}
	if d.Projects <= 0 {
		d.Projects = gen.DefaultProjects
	}
	if d.Span <= 0 {
		d.Span = 24 * time.Hour
	}
	if d.End.IsZero() {
		d.End = time.Now().UTC().Truncate(time.Second)
	}
	return d
}

// Start is the log time of the oldest event.
func (d Dataset) Start() time.Time { return d.End.Add(-d.Span) }

// Project is the project the query suite filters on: "default" for the
// self-hosted shape, else the busiest platform project.
func (d Dataset) Project() string { return d.ProjectAt(0) }

// ProjectAt returns the project of the given rank (0 is the busiest; rank
// k has a share of the events proportional to 1/(k+1)); "default" for the
// self-hosted shape. A rank past the last project is the last one.
func (d Dataset) ProjectAt(rank int) string {
	if d.Shape != gen.Platform {
		return gen.SelfHostedProject
	}
	refs := gen.ProjectRefs(d.Seed, max(d.Projects, 1))
	return refs[min(max(rank, 0), len(refs)-1)]
}

// genOptions are the generator options of source src.
func (d Dataset) genOptions(src gen.Source, quota int) gen.Options {
	rate := 1.0
	if quota > 0 {
		rate = float64(quota) / d.Span.Seconds()
	}
	return gen.Options{
		Seed:           d.Seed,
		Start:          d.Start(),
		Rate:           rate,
		Projects:       d.Projects,
		Shape:          d.Shape,
		RareEvery:      d.RareEvery,
		StorageObjects: d.StorageObjects,
	}
}

// Has reports whether the dataset holds events of src.
func (d Dataset) Has(src gen.Source) bool {
	for _, s := range d.Sources {
		if s.Source == src {
			return true
		}
	}
	return false
}

// quotas splits Events over the sources by weight; the remainder goes to
// the first sources.
func (d Dataset) quotas() []int {
	total := 0
	for _, s := range d.Sources {
		total += s.Weight
	}
	q := make([]int, len(d.Sources))
	given := 0
	for i, s := range d.Sources {
		q[i] = d.Events * s.Weight / total
		given += q[i]
	}
	for i := 0; given < d.Events; i = (i + 1) % len(q) {
		q[i]++
		given++
	}
	return q
}

// Batch is one request's worth of events of one source.
type Batch struct {
	Source gen.Source
	Events int
	// Body is a JSON array, Vector's body, or with NDJSON one event per
	// line (VictoriaLogs' /insert/jsonline).
	Body []byte
}

// Producer deals a Dataset out as batches, interleaving the sources in
// proportion to their quotas so that every source advances through log
// time together. Not safe for concurrent use.
type Producer struct {
	size    int
	gens    []*gen.Generator
	srcs    []gen.Source
	quota   []int
	emitted []int
	left    int
	// NDJSON writes bodies as one event per line instead of a JSON array;
	// the events are the same.
	NDJSON bool
	// OnEvent, when set, is called after every event with its generator
	// (whose Facts describe it), in the order the events are produced.
	OnEvent func(g *gen.Generator)
}

// NewProducer returns a producer of batches of batchSize events (the last
// batch of a source may be smaller).
func (d Dataset) NewProducer(batchSize int) *Producer {
	d = d.WithDefaults()
	p := &Producer{size: max(batchSize, 1), quota: d.quotas(), left: d.Events}
	p.emitted = make([]int, len(d.Sources))
	for i, s := range d.Sources {
		p.gens = append(p.gens, gen.New(s.Source, d.genOptions(s.Source, p.quota[i])))
		p.srcs = append(p.srcs, s.Source)
	}
	return p
}

// Remaining returns the events not yet produced.
func (p *Producer) Remaining() int { return p.left }

// Next appends the next batch's body to dst[:0] and returns the batch; ok
// is false when every event has been produced.
func (p *Producer) Next(dst []byte) (b Batch, ok bool) {
	pick := -1
	for i := range p.quota {
		if p.emitted[i] >= p.quota[i] {
			continue
		}
		// The source furthest behind its share goes next: emitted/quota
		// smallest, compared without division.
		if pick < 0 || p.emitted[i]*p.quota[pick] < p.emitted[pick]*p.quota[i] {
			pick = i
		}
	}
	if pick < 0 {
		return Batch{}, false
	}
	n := min(p.size, p.quota[pick]-p.emitted[pick])
	p.emitted[pick] += n
	p.left -= n
	g := p.gens[pick]
	body := dst[:0]
	if !p.NDJSON {
		body = append(body, '[')
	}
	for i := range n {
		if i > 0 && !p.NDJSON {
			body = append(body, ',')
		}
		body = g.AppendEvent(body)
		if p.NDJSON {
			body = append(body, '\n')
		}
		if p.OnEvent != nil {
			p.OnEvent(g)
		}
	}
	if !p.NDJSON {
		body = append(body, ']')
	}
	return Batch{Source: p.srcs[pick], Events: n, Body: body}, true
}

// manifestFile is where a bench run records the dataset it loaded into a
// data directory, for a later `sediment bench query --data-dir`.
const manifestFile = "bench-dataset.json"

// manifest is the JSON form of a Dataset.
type manifest struct {
	Shape    string         `json:"shape"`
	Seed     int64          `json:"seed"`
	Sources  map[string]int `json:"sources"`
	Projects int            `json:"projects"`
	Events   int            `json:"events"`
	Start    time.Time      `json:"start"`
	End      time.Time      `json:"end"`
	// Absent from manifests written before these options existed.
	RareEvery      int `json:"rare_every,omitempty"`
	StorageObjects int `json:"storage_objects,omitempty"`
}

// DatasetInfo is a Dataset as reports show it.
type DatasetInfo struct {
	Shape          string         `json:"shape"`
	Seed           int64          `json:"seed"`
	Sources        map[string]int `json:"sources"`
	Projects       int            `json:"projects,omitempty"`
	Events         int            `json:"events"`
	Start          time.Time      `json:"start"`
	End            time.Time      `json:"end"`
	RareEvery      int            `json:"rare_every,omitempty"`
	StorageObjects int            `json:"storage_objects,omitempty"`
}

// Info describes d for a report.
func (d Dataset) Info() DatasetInfo {
	d = d.WithDefaults()
	m := DatasetInfo{Shape: d.Shape.String(), Seed: d.Seed, Sources: map[string]int{}, Events: d.Events, Start: d.Start(), End: d.End,
		RareEvery: d.RareEvery, StorageObjects: d.StorageObjects}
	if d.Shape == gen.Platform {
		m.Projects = d.Projects
	}
	for _, s := range d.Sources {
		m.Sources[s.Source.Name()] = s.Weight
	}
	return m
}

// SaveManifest records d in dataDir.
func SaveManifest(dataDir string, d Dataset) error {
	d = d.WithDefaults()
	m := manifest{Shape: d.Shape.String(), Seed: d.Seed, Sources: map[string]int{}, Projects: d.Projects, Events: d.Events, Start: d.Start(), End: d.End,
		RareEvery: d.RareEvery, StorageObjects: d.StorageObjects}
	for _, s := range d.Sources {
		m.Sources[s.Source.Name()] = s.Weight
	}
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dataDir, manifestFile), append(b, '\n'), 0o644)
}

// LoadManifest reads the dataset a bench run loaded into dataDir; ok is
// false when there is none.
func LoadManifest(dataDir string) (d Dataset, ok bool, err error) {
	b, err := os.ReadFile(filepath.Join(dataDir, manifestFile))
	if errors.Is(err, os.ErrNotExist) {
		return d, false, nil
	}
	if err != nil {
		return d, false, err
	}
	var m manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return d, false, fmt.Errorf("%s: %w", manifestFile, err)
	}
	shape, ok := gen.ParseShape(m.Shape)
	if !ok {
		return d, false, fmt.Errorf("%s: unknown shape %q", manifestFile, m.Shape)
	}
	d = Dataset{Shape: shape, Seed: m.Seed, Projects: m.Projects, Events: m.Events, End: m.End, Span: m.End.Sub(m.Start),
		RareEvery: m.RareEvery, StorageObjects: m.StorageObjects}
	for _, src := range gen.AllSources() {
		if w := m.Sources[src.Name()]; w > 0 {
			d.Sources = append(d.Sources, SourceWeight{src, w})
		}
	}
	if len(d.Sources) == 0 || d.Span <= 0 {
		return d, false, fmt.Errorf("%s: no sources or an empty time span", manifestFile)
	}
	return d, true, nil
}
