package bench

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"runtime"
	"slices"
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
	// SegmentRows is the size compaction merges segments up to, as meant
	// for SweepOptions.SegmentRowsAt events (a smaller sweep scales it;
	// SweepResult.SegmentRowsUsed is what the engine got).
	SegmentRows int `json:"segment_rows,omitempty"`
	// SortKey is the field rows are ordered by within a segment before
	// time ("": the engine's default). It needs an engine with a sort key
	// (SortKeySetter); until then a sweep leaves such settings out.
	SortKey string `json:"sort_key,omitempty"`
}

// String names the setting compactly, e.g. "block=64Ki page=256KiB zstd=1/3".
func (s Setting) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "block=%s page=%sB zstd=%s/%s", count(s.BlockRows), count(s.PageBytes), level(s.ZstdLevel), level(s.CompactZstdLevel))
	if s.SegmentRows > 0 {
		fmt.Fprintf(&b, " seg=%s", count(s.SegmentRows))
	}
	if s.SortKey != "" {
		fmt.Fprintf(&b, " sort=%s", s.SortKey)
	}
	return b.String()
}

// ServeFlags are the `sediment serve` flags of the setting (those it sets).
func (s Setting) ServeFlags() string {
	var f []string
	if s.BlockRows > 0 {
		f = append(f, "--block-rows "+strconv.Itoa(s.BlockRows))
	}
	if s.PageBytes > 0 {
		f = append(f, "--page-bytes "+strconv.Itoa(s.PageBytes))
	}
	if s.SegmentRows > 0 {
		f = append(f, "--segment-rows "+strconv.Itoa(s.SegmentRows))
	}
	if s.ZstdLevel > 0 || s.CompactZstdLevel > 0 {
		f = append(f, "--zstd "+strconv.Itoa(max(s.ZstdLevel, 1))+"/"+strconv.Itoa(max(s.CompactZstdLevel, 1)))
	}
	if s.SortKey != "" {
		f = append(f, "(sort key "+s.SortKey+")")
	}
	if len(f) == 0 {
		return "(the defaults)"
	}
	return strings.Join(f, " ")
}

// options returns the engine options of the setting, with segmentRows as
// the size compaction merges up to.
func (s Setting) options(segmentRows int) engine.Options {
	return engine.Options{BlockRows: s.BlockRows, PageBytes: s.PageBytes, ZstdLevel: s.ZstdLevel,
		CompactZstdLevel: s.CompactZstdLevel, SegmentMaxRows: segmentRows}
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
func Grid(blockRows, pageBytes []int, zstd [][2]int, segmentRows []int, sortKeys ...string) []Setting {
	orDefault := func(xs []int) []int {
		if len(xs) == 0 {
			return []int{0}
		}
		return xs
	}
	if len(zstd) == 0 {
		zstd = [][2]int{{0, 0}}
	}
	if len(sortKeys) == 0 {
		sortKeys = []string{""}
	}
	var out []Setting
	for _, br := range orDefault(blockRows) {
		for _, pb := range orDefault(pageBytes) {
			for _, z := range zstd {
				for _, sr := range orDefault(segmentRows) {
					for _, sk := range sortKeys {
						out = append(out, Setting{BlockRows: br, PageBytes: pb, ZstdLevel: z[0], CompactZstdLevel: z[1], SegmentRows: sr, SortKey: sk})
					}
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
	Dir     string
	AckMode engine.AckMode
	Goal    Goal // default GoalBalanced
	// Suite is the queries run per setting: SuiteStudio (default) or
	// SuitePeers (issue 14's six, every answer checked; the dataset must
	// be PeersDataset-shaped).
	Suite string
	// SegmentRowsAt is the number of events the settings' SegmentRows are
	// meant for (0: as given). A sweep of fewer events scales them down in
	// proportion, so that segments differ as they would at full size, and
	// says so in its notes.
	SegmentRowsAt int
	// MemoryBudget bounds the generated batches kept in memory so that
	// every setting ingests them without generating (default 2 GiB); past
	// it, each setting generates its events while ingesting them (the same
	// bytes; the generator then shares the CPU with the engine).
	MemoryBudget int64
	Progress     *Progress
}

// Query suites.
const (
	SuiteStudio = "studio"
	SuitePeers  = "peers"
)

// SortKeySetter gives a sweep setting's sort key to the engine: it is
// called with the engine options and the catalog of the setting's fresh
// data directory. It is setCatalogSortKeys (sortkey.go); when nil,
// settings with a sort key are left out of a sweep with a note.
var SortKeySetter func(o *engine.Options, cat *catalog.Catalog, key string) error

// SweepResult is what one setting measured.
type SweepResult struct {
	Setting Setting `json:"setting"`
	Name    string  `json:"name"`
	// SegmentRowsUsed is the segment size the sweep gave the engine
	// (Setting's, scaled to the sweep's events; 0: the engine's default).
	// The engine raises a segment size below one block to one block.
	SegmentRowsUsed int          `json:"segment_rows_used,omitempty"`
	Events          int64        `json:"events"`
	IngestSeconds   float64      `json:"ingest_seconds"`
	EventsPerS      float64      `json:"events_per_s"`
	MBPerS          float64      `json:"mb_per_s"`
	Backpressure    int64        `json:"backpressure"` // appends refused and retried
	Disk            DiskUsage    `json:"disk"`
	BytesPerEvent   float64      `json:"bytes_per_event"`
	Queries         []QueryStats `json:"queries"`
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
	// Suite names the queries; Truth describes the answers they were
	// checked against (the peers suite).
	Suite string        `json:"suite,omitempty"`
	Truth *TruthSummary `json:"truth,omitempty"`
	Notes []string      `json:"notes,omitempty"`
}

// RunSweep generates the dataset once, then for each setting ingests it into
// a fresh in-process engine through the server's decoder and normaliser
// (no HTTP), settles it (flush, full compaction), measures it and runs the
// query suite in process with the clock pinned at the dataset's end. A
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
	if o.Suite == "" {
		o.Suite = SuiteStudio
	}
	if o.MemoryBudget <= 0 {
		o.MemoryBudget = 2 << 30
	}
	rep := &SweepReport{Goal: o.Goal, Suite: o.Suite}
	o.Settings = sortKeysSupported(o.Settings, rep)
	if len(o.Settings) == 0 {
		return nil, errors.New("bench: no setting left to sweep")
	}
	scale := segmentScale(o, rep)

	now := o.Dataset.End.Add(time.Second)
	var suite []Query
	switch o.Suite {
	case SuiteStudio:
		suite = StudioSuite(SuiteOptions{Project: o.Dataset.Project(), Now: now, Sources: sourcesOf(o.Dataset), NoCached: true})
	case SuitePeers:
		spec := DefaultPeersSpec(o.Dataset)
		tr, err := ComputeTruth(ctx, o.Dataset, spec, o.Progress)
		if err != nil {
			return nil, err
		}
		sum := tr.Summary()
		rep.Truth = &sum
		suite = PeersSuite(tr)
		now = spec.Now
	default:
		return nil, fmt.Errorf("bench: unknown suite %q (studio or peers)", o.Suite)
	}

	o.Progress.Start("generate", int64(o.Dataset.Events), "events")
	batches, fits := generate(o.Dataset, o.BatchSize, o.MemoryBudget, o.Progress)
	o.Progress.Finish()
	if !fits {
		rep.Notes = append(rep.Notes, fmt.Sprintf("the generated events exceed the memory budget (%s): each setting generates them while ingesting, so ingest rates include the generator's CPU", iec(o.MemoryBudget)))
	}

	for i, s := range o.Settings {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		label := fmt.Sprintf("[%d/%d] %s", i+1, len(o.Settings), s)
		r, err := sweepOne(ctx, o, s, scale, batches, suite, now, label)
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
	segmentsDiffered(rep)
	return rep, nil
}

// sortKeysSupported leaves out the settings with a sort key when the
// engine has none (SortKeySetter is nil), with a note.
func sortKeysSupported(settings []Setting, rep *SweepReport) []Setting {
	if SortKeySetter != nil {
		return settings
	}
	var keep []Setting
	var keys []string
	for _, s := range settings {
		if s.SortKey == "" {
			keep = append(keep, s)
		} else if !slices.Contains(keys, s.SortKey) {
			keys = append(keys, s.SortKey)
		}
	}
	if len(keys) > 0 {
		rep.Notes = append(rep.Notes, fmt.Sprintf("sort key axis skipped (%s): this engine has no sort key option yet, so only the engine's own row order (by time) was measured",
			strings.Join(keys, ", ")))
	}
	return keep
}

// segmentScale returns the factor that scales the settings' segment sizes
// to the sweep's events, and notes it.
func segmentScale(o SweepOptions, rep *SweepReport) float64 {
	if o.SegmentRowsAt <= 0 || o.Dataset.Events >= o.SegmentRowsAt {
		return 1
	}
	scale := float64(o.Dataset.Events) / float64(o.SegmentRowsAt)
	var sizes []string
	for _, s := range o.Settings {
		if s.SegmentRows > 0 {
			sizes = append(sizes, fmt.Sprintf("seg=%s → %s rows", count(s.SegmentRows), thousands(float64(scaledRows(s.SegmentRows, scale)))))
		}
	}
	if len(sizes) > 0 {
		slices.Sort(sizes)
		rep.Notes = append(rep.Notes, fmt.Sprintf("segment sizes are meant for %s events; this sweep of %s scaled them by %.3g: %s",
			thousands(float64(o.SegmentRowsAt)), thousands(float64(o.Dataset.Events)), scale, strings.Join(slices.Compact(sizes), ", ")))
	}
	return scale
}

func scaledRows(rows int, scale float64) int {
	if rows <= 0 {
		return 0
	}
	return max(int(float64(rows)*scale), 1)
}

// segmentsDiffered notes when settings that differ only in segment size
// ended with the same number of segments: then the sweep did not measure
// segment size at all.
func segmentsDiffered(rep *SweepReport) {
	groups := map[Setting][]int{}
	for _, r := range rep.Results {
		if r.Error != "" {
			continue
		}
		k := r.Setting
		k.SegmentRows = 0
		groups[k] = append(groups[k], r.Disk.Segments)
	}
	for k, segs := range groups {
		if len(segs) > 1 && slices.Min(segs) == slices.Max(segs) {
			rep.Notes = append(rep.Notes, fmt.Sprintf("%s: every segment size gave %d segments (about %s rows each, as heads were flushed), so segment size made no difference here: "+
				"compaction merges only segments below a quarter of the segment size; sweep more events, or larger --segment-rows",
				k, segs[0], thousands(float64(events(rep, k))/float64(max(segs[0], 1)))))
		}
	}
}

// events returns the events a result with setting k (segment size aside)
// stored.
func events(rep *SweepReport, k Setting) int64 {
	for _, r := range rep.Results {
		s := r.Setting
		s.SegmentRows = 0
		if s == k && r.Error == "" {
			return r.Disk.Rows
		}
	}
	return 0
}

// generate produces every batch of ds up front, so that generation is not
// timed and every setting ingests the same bytes; fits is false (and no
// batch is returned) when they would take more than budget bytes.
func generate(ds Dataset, batchSize int, budget int64, p *Progress) (batches []Batch, fits bool) {
	prod := ds.NewProducer(batchSize)
	var size int64
	for {
		b, ok := prod.Next(nil)
		if !ok {
			return batches, true
		}
		if size += int64(len(b.Body)); budget > 0 && size > budget {
			return nil, false
		}
		batches = append(batches, b)
		p.Add(int64(b.Events))
	}
}

// batchFeed sends batches (or, when nil, the dataset's batches as they are
// generated) on the returned channel until done, then closes it.
func batchFeed(ctx context.Context, ds Dataset, batchSize int, batches []Batch) <-chan Batch {
	ch := make(chan Batch, 8)
	go func() {
		defer close(ch)
		send := func(b Batch) bool {
			select {
			case ch <- b:
				return true
			case <-ctx.Done():
				return false
			}
		}
		if batches != nil {
			for _, b := range batches {
				if !send(b) {
					return
				}
			}
			return
		}
		prod := ds.NewProducer(batchSize)
		for {
			b, ok := prod.Next(nil)
			if !ok || !send(b) {
				return
			}
		}
	}()
	return ch
}

// sweepOne measures one setting in its own data directory.
func sweepOne(ctx context.Context, o SweepOptions, s Setting, scale float64, batches []Batch, suite []Query, now time.Time, label string) (res SweepResult, err error) {
	res = SweepResult{Setting: s, Name: s.String(), SegmentRowsUsed: scaledRows(s.SegmentRows, scale)}
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
	opts := s.options(res.SegmentRowsUsed)
	opts.AckMode = o.AckMode
	if s.SortKey != "" {
		if err := SortKeySetter(&opts, cat, s.SortKey); err != nil {
			return res, err
		}
	}
	eng, err := engine.Open(dir, &opts)
	if err != nil {
		return res, err
	}
	o.Progress.Start(label+" ingest", int64(o.Dataset.Events), "events")
	fctx, stopFeed := context.WithCancel(ctx)
	stats, err := ingestInProcess(ctx, eng, cat, sourcesOf(o.Dataset), batchFeed(fctx, o.Dataset, o.BatchSize, batches), o.Workers, o.Progress)
	stopFeed()
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

	svc := endpoints.New(eng, cat, &endpoints.Options{Now: func() time.Time { return now }, DisableBackground: true})
	defer svc.Close()
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
// source's shard (retrying while the shard pushes back). It reads batches
// of the given sources until the channel is closed.
func ingestInProcess(ctx context.Context, eng *engine.Engine, cat *catalog.Catalog, sources []gen.Source, batches <-chan Batch, workers int, p *Progress) (ingestStats, error) {
	shards := map[gen.Source]*engine.Shard{}
	for _, s := range sources {
		src := cat.SourceByName(s.Name())
		if src == nil {
			return ingestStats{}, fmt.Errorf("no source %s", s.Name())
		}
		sh, err := eng.Shard(src.Token)
		if err != nil {
			return ingestStats{}, err
		}
		// The source's sort key, as the server gives it to the shard.
		if err := sh.SetSortKey(src.SortKey); err != nil {
			return ingestStats{}, err
		}
		shards[s] = sh
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var events, bytes, backpressure atomic.Int64
	start := time.Now()
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			dec := ingest.NewDecoder()
			var norm event.Normalizer
			var evs []event.Event
			for b := range batches {
				// On an error the workers stop; the caller stops the feed.
				if ctx.Err() != nil {
					return
				}
				sh := shards[b.Source]
				if sh == nil {
					cancel(fmt.Errorf("a batch of %s, which is not among the sources", b.Source.Name()))
					return
				}
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
					err = sh.Append(ctx, evs)
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
