package bench

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sediment/sediment/bench/gen"
	"github.com/sediment/sediment/catalog"
	"github.com/sediment/sediment/engine"
	"github.com/sediment/sediment/event"
	"github.com/sediment/sediment/httpapi/ingest"
	"github.com/sediment/sediment/query/endpoints"
)

// Setting is one point of a sweep: the storage settings of engine.Options
// it varies. Zero means the engine's default.
type Setting struct {
	BlockRows        int `json:"block_rows"`
	PageBytes        int `json:"page_bytes"`
	ZstdLevel        int `json:"zstd_level"`
	CompactZstdLevel int `json:"compact_zstd_level"`
	SegmentRows      int `json:"segment_rows,omitempty"`
}

// String names the setting compactly, e.g. "block=64Ki page=256KiB zstd=1/3".
func (s Setting) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "block=%s page=%sB zstd=%s/%s", count(s.BlockRows), count(s.PageBytes), level(s.ZstdLevel), level(s.CompactZstdLevel))
	if s.SegmentRows > 0 {
		fmt.Fprintf(&b, " seg=%s", count(s.SegmentRows))
	}
	return b.String()
}

// options returns the engine options of the setting.
func (s Setting) options() engine.Options {
	return engine.Options{BlockRows: s.BlockRows, PageBytes: s.PageBytes, ZstdLevel: s.ZstdLevel,
		CompactZstdLevel: s.CompactZstdLevel, SegmentMaxRows: s.SegmentRows}
}

// count writes n with a binary suffix when it is a whole number of Ki/Mi.
func count(n int) string {
	switch {
	case n == 0:
		return "default"
	case n%(1<<20) == 0:
		return strconv.Itoa(n>>20) + "Mi"
	case n%(1<<10) == 0:
		return strconv.Itoa(n>>10) + "Ki"
	}
	return strconv.Itoa(n)
}

func level(n int) string {
	if n == 0 {
		return "d"
	}
	return strconv.Itoa(n)
}

// Grid returns every combination of the given values, block rows varying
// slowest. zstd holds (flush level, compaction level) pairs. An empty list
// stands for the engine's default.
func Grid(blockRows, pageBytes []int, zstd [][2]int, segmentRows []int) []Setting {
	orDefault := func(xs []int) []int {
		if len(xs) == 0 {
			return []int{0}
		}
		return xs
	}
	if len(zstd) == 0 {
		zstd = [][2]int{{0, 0}}
	}
	var out []Setting
	for _, br := range orDefault(blockRows) {
		for _, pb := range orDefault(pageBytes) {
			for _, z := range zstd {
				for _, sr := range orDefault(segmentRows) {
					out = append(out, Setting{BlockRows: br, PageBytes: pb, ZstdLevel: z[0], CompactZstdLevel: z[1], SegmentRows: sr})
				}
			}
		}
	}
	return out
}

// Goal is what a sweep optimises for.
type Goal string

// Goals.
const (
	GoalSize     Goal = "size"     // fewest bytes per event on disk
	GoalIngest   Goal = "ingest"   // most events per second
	GoalQuery    Goal = "query"    // fastest queries (geometric mean of the medians)
	GoalBalanced Goal = "balanced" // best geometric mean of the three, each relative to the best setting
)

// Goals lists the goals.
func Goals() []Goal { return []Goal{GoalSize, GoalIngest, GoalQuery, GoalBalanced} }

// ParseGoal parses a --goal value.
func ParseGoal(s string) (Goal, error) {
	for _, g := range Goals() {
		if string(g) == s {
			return g, nil
		}
	}
	return "", fmt.Errorf("unknown goal %q (size, ingest, query or balanced)", s)
}

// SweepOptions configure RunSweep.
type SweepOptions struct {
	Dataset   Dataset
	Settings  []Setting
	BatchSize int // events per batch (default 500)
	Workers   int // ingest goroutines (default GOMAXPROCS)
	Runs      int // runs per query (default 5)
	// Dir is where the per-setting data directories are made (default the
	// system's temporary directory); each is removed after its setting.
	Dir      string
	AckMode  engine.AckMode
	Goal     Goal // default GoalBalanced
	Progress *Progress
}

// SweepResult is what one setting measured.
type SweepResult struct {
	Setting       Setting      `json:"setting"`
	Name          string       `json:"name"`
	Events        int64        `json:"events"`
	IngestSeconds float64      `json:"ingest_seconds"`
	EventsPerS    float64      `json:"events_per_s"`
	MBPerS        float64      `json:"mb_per_s"`
	Backpressure  int64        `json:"backpressure"` // appends refused and retried
	Disk          DiskUsage    `json:"disk"`
	BytesPerEvent float64      `json:"bytes_per_event"`
	Queries       []QueryStats `json:"queries"`
	// QueryScoreMs is the geometric mean of the medians of the queries
	// that succeeded; QueryFailures counts those that did not.
	QueryScoreMs  float64 `json:"query_score_ms"`
	QueryFailures int     `json:"query_failures,omitempty"`
	Error         string  `json:"error,omitempty"`
}

// SweepReport is a sweep's results and the settings it recommends.
type SweepReport struct {
	Results []SweepResult `json:"results"`
	Goal    Goal          `json:"goal"`
	// Best is the index of the best result for Goal (-1: none succeeded);
	// BestFor holds the best index for every goal.
	Best    int          `json:"best"`
	BestFor map[Goal]int `json:"best_for"`
}

// RunSweep generates the dataset once, then for each setting ingests it into
// a fresh in-process engine through the server's decoder and normaliser
// (no HTTP), settles it (flush, full compaction), measures it and runs the
// Studio suite in process with the clock pinned at the dataset's end. A
// setting that fails is reported with its error; the others go on.
func RunSweep(ctx context.Context, o SweepOptions) (*SweepReport, error) {
	o.Dataset = o.Dataset.WithDefaults()
	if o.Dataset.Events <= 0 {
		return nil, errNoEvents
	}
	if len(o.Settings) == 0 {
		o.Settings = []Setting{{}}
	}
	if o.BatchSize <= 0 {
		o.BatchSize = 500
	}
	if o.Workers <= 0 {
		o.Workers = runtime.GOMAXPROCS(0)
	}
	if o.Goal == "" {
		o.Goal = GoalBalanced
	}
	o.Progress.Start("generate", int64(o.Dataset.Events), "events")
	batches := generate(o.Dataset, o.BatchSize, o.Progress)
	o.Progress.Finish()

	rep := &SweepReport{Goal: o.Goal}
	for i, s := range o.Settings {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		label := fmt.Sprintf("[%d/%d] %s", i+1, len(o.Settings), s)
		r, err := sweepOne(ctx, o, s, batches, label)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			r.Error = err.Error()
		}
		rep.Results = append(rep.Results, r)
	}
	rep.BestFor = map[Goal]int{}
	for _, g := range Goals() {
		rep.BestFor[g] = Best(rep.Results, g)
	}
	rep.Best = rep.BestFor[o.Goal]
	return rep, nil
}

// generate produces every batch of ds up front, so that generation is not
// timed and every setting ingests the same bytes.
func generate(ds Dataset, batchSize int, p *Progress) []Batch {
	prod := ds.NewProducer(batchSize)
	var out []Batch
	for {
		b, ok := prod.Next(nil)
		if !ok {
			return out
		}
		out = append(out, b)
		p.Add(int64(b.Events))
	}
}

// sweepOne measures one setting in its own data directory.
func sweepOne(ctx context.Context, o SweepOptions, s Setting, batches []Batch, label string) (res SweepResult, err error) {
	res = SweepResult{Setting: s, Name: s.String()}
	dir, err := os.MkdirTemp(o.Dir, "sediment-sweep-*")
	if err != nil {
		return res, err
	}
	defer os.RemoveAll(dir)

	cat, err := catalog.Open(dir, nil)
	if err != nil {
		return res, err
	}
	if _, err := cat.SeedSupabase(); err != nil {
		return res, err
	}
	opts := s.options()
	opts.AckMode = o.AckMode
	eng, err := engine.Open(dir, &opts)
	if err != nil {
		return res, err
	}
	o.Progress.Start(label+" ingest", int64(o.Dataset.Events), "events")
	stats, err := ingestInProcess(ctx, eng, cat, batches, o.Workers, o.Progress)
	o.Progress.Finish()
	// Closing flushes every head, as a server does on shutdown.
	if err = errors.Join(err, eng.Close()); err != nil {
		return res, err
	}
	res.Events, res.Backpressure = stats.events, stats.backpressure
	res.IngestSeconds = stats.elapsed.Seconds()
	res.EventsPerS = float64(stats.events) / res.IngestSeconds
	res.MBPerS = float64(stats.bytes) / 1e6 / res.IngestSeconds

	// Settle on a reopened engine without background work, then query it.
	o.Progress.Start(label+" flush+compact", 0, "")
	t0 := time.Now()
	if eng, err = engine.Open(dir, settleOptions(opts)); err != nil {
		return res, err
	}
	defer func() { err = errors.Join(err, eng.Close()) }()
	err = Settle(eng)
	settle := time.Since(t0)
	o.Progress.Finish()
	if err != nil {
		return res, err
	}
	if res.Disk, err = Measure(eng, dir); err != nil {
		return res, err
	}
	res.Disk.SettleSeconds = settle.Seconds()
	res.BytesPerEvent = res.Disk.BytesPerEvent()
	if res.Disk.Rows != res.Events {
		return res, fmt.Errorf("stored %d events of %d ingested", res.Disk.Rows, res.Events)
	}

	now := o.Dataset.End.Add(time.Second)
	svc := endpoints.New(eng, cat, &endpoints.Options{Now: func() time.Time { return now }, DisableBackground: true})
	defer svc.Close()
	suite := StudioSuite(SuiteOptions{Project: o.Dataset.Project(), Now: now, Sources: sourcesOf(o.Dataset), NoCached: true})
	o.Progress.Start(label+" queries", 0, "")
	res.Queries, err = RunQueries(ctx, &ServiceTarget{Service: svc, Catalog: cat}, suite, o.Runs, nil)
	o.Progress.Finish()
	if errors.Is(err, ErrQueriesFailed) {
		// Reported per query; the setting's other measures stand.
		err = nil
	}
	var medians []float64
	for _, q := range res.Queries {
		if q.Error != "" {
			res.QueryFailures++
			continue
		}
		medians = append(medians, q.MedianMs)
	}
	res.QueryScoreMs = GeoMean(medians)
	return res, err
}

func sourcesOf(ds Dataset) []gen.Source {
	out := make([]gen.Source, len(ds.Sources))
	for i, s := range ds.Sources {
		out[i] = s.Source
	}
	return out
}

type ingestStats struct {
	events, bytes, backpressure int64
	elapsed                     time.Duration
}

// ingestInProcess does what the server's ingest route does with each batch,
// minus HTTP: decode the JSON array, normalise every event, append to the
// source's shard (retrying while the shard pushes back).
func ingestInProcess(ctx context.Context, eng *engine.Engine, cat *catalog.Catalog, batches []Batch, workers int, p *Progress) (ingestStats, error) {
	shards := map[gen.Source]*engine.Shard{}
	for _, b := range batches {
		if shards[b.Source] != nil {
			continue
		}
		src := cat.SourceByName(b.Source.Name())
		if src == nil {
			return ingestStats{}, fmt.Errorf("no source %s", b.Source.Name())
		}
		sh, err := eng.Shard(src.Token)
		if err != nil {
			return ingestStats{}, err
		}
		shards[b.Source] = sh
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var next, events, bytes, backpressure atomic.Int64
	start := time.Now()
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			dec := ingest.NewDecoder()
			var norm event.Normalizer
			var evs []event.Event
			for ctx.Err() == nil {
				i := int(next.Add(1)) - 1
				if i >= len(batches) {
					return
				}
				b := batches[i]
				r, err := dec.Decode(ingest.Request{Route: ingest.RouteCreate, ContentType: "application/json", Body: b.Body})
				if err != nil {
					cancel(err)
					return
				}
				now := time.Now()
				norm.Reset()
				evs = evs[:0]
				for _, raw := range r.Events {
					if e, out := norm.Normalize(raw, now, event.NormalizeOptions{}); out == event.OutcomeKept {
						evs = append(evs, e)
					}
				}
				for {
					err = shards[b.Source].Append(ctx, evs)
					if !errors.Is(err, engine.ErrBackpressure) {
						break
					}
					backpressure.Add(1)
					time.Sleep(5 * time.Millisecond)
				}
				if err != nil {
					cancel(err)
					return
				}
				events.Add(int64(len(evs)))
				bytes.Add(int64(len(b.Body)))
				p.Add(int64(b.Events))
			}
		}()
	}
	wg.Wait()
	st := ingestStats{events: events.Load(), bytes: bytes.Load(), backpressure: backpressure.Load(), elapsed: time.Since(start)}
	return st, context.Cause(ctx)
}

// Best returns the index of the best successful result for goal, or -1.
func Best(rs []SweepResult, goal Goal) int {
	ok := func(r SweepResult) bool { return r.Error == "" && r.Events > 0 }
	minBPE, maxRate, minQ := math.Inf(1), 0.0, math.Inf(1)
	for _, r := range rs {
		if ok(r) {
			minBPE = math.Min(minBPE, r.BytesPerEvent)
			maxRate = math.Max(maxRate, r.EventsPerS)
			minQ = math.Min(minQ, r.QueryScoreMs)
		}
	}
	best, bestScore := -1, math.Inf(1)
	for i, r := range rs {
		if !ok(r) {
			continue
		}
		var score float64 // lower is better
		switch goal {
		case GoalSize:
			score = r.BytesPerEvent
		case GoalIngest:
			score = -r.EventsPerS
		case GoalQuery:
			score = r.QueryScoreMs
		default:
			score = GeoMean([]float64{ratio(r.BytesPerEvent, minBPE), ratio(maxRate, r.EventsPerS), ratio(r.QueryScoreMs, minQ)})
		}
		if score < bestScore {
			best, bestScore = i, score
		}
	}
	return best
}

// ratio is a/b, or 1 when either is not a positive number (a measure that
// is missing counts as a tie).
func ratio(a, b float64) float64 {
	if !(a > 0) || !(b > 0) || math.IsInf(a, 0) || math.IsInf(b, 0) {
		return 1
	}
	return a / b
}
