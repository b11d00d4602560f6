//go:build soak && linux

package soak

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sediment/sediment/bench/gen"
)

// Flags of the soak test (after the package on the go test command line).
var (
	flagDuration  = flag.Duration("soak.duration", 20*time.Minute, "how long ingest, queries and faults run (the final check comes after)")
	flagSeed      = flag.Int64("soak.seed", 0, "seed of events, choices and fault timing (0: from the clock; the summary prints it)")
	flagSenders   = flag.Int("soak.senders", 6, "concurrent ingest clients")
	flagStudio    = flag.Int("soak.studio-clients", 3, "concurrent clients running Studio's queries (besides one running heavy queries)")
	flagRate      = flag.Int("soak.rate", 2500, "events per second all senders together aim at")
	flagBatch     = flag.Int("soak.batch", 300, "events per request: 20 plus up to this many")
	flagKillEvery = flag.Duration("soak.kill-every", 2*time.Minute, "mean time between kill -9 cycles (each at 0.5-1.5 times it)")
	flagDiskEvery = flag.Duration("soak.enospc-every", 4*time.Minute, "mean time between full-disk episodes")
	flagTmpfs     = flag.String("soak.tmpfs", "1GiB", "size of the tmpfs holding the data directory")
	flagJSON      = flag.String("soak.json", "", "write the summary as JSON to this file")
	flagBin       = flag.String("soak.bin", "", "sediment binary to run (default: go build ./cmd/sediment of this module)")
	flagArgs      = flag.String("soak.serve-args", "", "extra flags for sediment serve, space-separated")
	flagBudget    = flag.String("soak.query-budget", "512MiB", "query memory budget for the memory bound when the server does not log its --query-memory-total (a server without one has only a per-query cap, 512MiB by the README)")
	flagLogs      = flag.String("soak.logs", "", "directory for the server's log (default: a new directory under the system's temporary directory, kept)")
	flagCeiling   = flag.String("soak.rss-ceiling", "", "RSS past which the server is killed and restarted (a failure: over the bound), so that a runaway query cannot take a shared machine down (default: twice the bound, at least 1.5GiB)")
)

// Storage settings: small segments and blocks so that flush, compaction
// and retention run often. The block size changes from one start to the
// next (segments of different block sizes must merge); the final start
// takes the defaults.
const segmentRows = 300000

var blockRowsVariants = []string{"2048", "8192", ""}

// harness is one soak run.
type harness struct {
	t   *testing.T
	cfg struct {
		seed  int64
		batch int
	}
	start time.Time
	run   uint32
	mnt   string
	data  string
	flags serveFlags
	srv   *serverProc
	fails *failures
	rss   *rssPeak
	log   *serverLog
	load  loadSampler
	phase atomic.Pointer[string]

	publicKey, privateKey string
	ingestClient          *http.Client
	queryClient           *http.Client
	limiter               *limiter
	streams               []*stream
	retentionSrc          gen.Source

	ingest    ingestStats
	queries   queryStats
	metrics   metricsScraper
	sum       summary
	rng       *rand.Rand
	diskFull  atomic.Bool
	extraArgs []string

	segMu        sync.Mutex
	segsSeen     map[string]bool
	segsWritten  int64
	segsRemoved  int64
	maxDataBytes int64
}

func (h *harness) setPhase(p string) { h.phase.Store(&p) }

func (h *harness) currentPhase() string {
	if p := h.phase.Load(); p != nil {
		return *p
	}
	return ""
}

// TestSoak is the soak test; see the package documentation.
func TestSoak(t *testing.T) {
	if dl, ok := t.Deadline(); ok && time.Until(dl) < *flagDuration+15*time.Minute {
		t.Fatalf("soak: -timeout leaves %s for a %s run; give it at least the duration plus 15 minutes (the final check reads every event back)",
			time.Until(dl).Round(time.Second), *flagDuration)
	}
	tmpfsSize, err := parseSize(*flagTmpfs)
	if err != nil {
		t.Fatal(err)
	}
	mnt := mountTmpfs(t, tmpfsSize)

	seed := *flagSeed
	if seed == 0 {
		seed = time.Now().UnixNano() % 1e9
	}
	h := &harness{t: t, start: time.Now(), mnt: mnt, data: filepath.Join(mnt, "data"), fails: newFailures(time.Now()),
		publicKey: "soak-public-key", privateKey: "soak-private-key", retentionSrc: gen.PgBouncerLogs,
		rng: rand.New(rand.NewPCG(uint64(seed), 7)), segsSeen: map[string]bool{}}
	h.cfg.seed, h.cfg.batch = seed, max(*flagBatch, 1)
	h.run = uint32(rand.New(rand.NewPCG(uint64(seed), uint64(time.Now().UnixNano()))).Uint32())
	h.rss = &rssPeak{start: h.start, phase: h.currentPhase, over: make(chan int, 1)}
	h.setPhase("starting")
	h.sum.Seed = seed
	h.sum.Date = time.Now().UTC().Format("2006-01-02")
	h.sum.Machine = describeMachine()
	h.sum.Command = "go test -tags soak ./soak -run Soak " + strings.Join(os.Args[1:], " ")
	h.sum.Server.Tmpfs = tmpfsSize
	t.Logf("soak: seed %d, duration %s, data directory on a %s tmpfs at %s", seed, *flagDuration, mib(tmpfsSize), h.data)

	logDir := *flagLogs
	if logDir == "" {
		if logDir, err = os.MkdirTemp("", "sediment-soak-logs-"); err != nil {
			t.Fatal(err)
		}
	}
	if h.log, err = newServerLog(filepath.Join(logDir, fmt.Sprintf("server-%d.log", seed))); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.log.close)
	h.sum.Faults.ServerLog = h.log.path
	t.Logf("soak: server log at %s", h.log.path)

	bin := *flagBin
	if bin == "" {
		if bin, err = buildSediment(t.TempDir()); err != nil {
			t.Fatal(err)
		}
	}
	if h.flags, err = readServeFlags(bin); err != nil {
		t.Fatal(err)
	}
	h.extraArgs = strings.Fields(*flagArgs)
	env := []string{"LOGFLARE_PUBLIC_ACCESS_TOKEN=" + h.publicKey, "LOGFLARE_PRIVATE_ACCESS_TOKEN=" + h.privateKey}
	h.srv = newServerProc(bin, h.data, env, h.fails, h.rss, h.log)
	t.Cleanup(func() { h.srv.kill() })

	transport := func() *http.Transport {
		return &http.Transport{MaxIdleConnsPerHost: 64, IdleConnTimeout: 30 * time.Second, DisableCompression: true}
	}
	h.ingestClient = &http.Client{Transport: transport(), Timeout: 2 * time.Minute}
	h.queryClient = &http.Client{Transport: transport(), Timeout: 3 * time.Minute}
	h.limiter = newLimiter(*flagRate)
	for i := range max(*flagSenders, 1) {
		h.streams = append(h.streams, &stream{id: uint16(i + 1)})
	}

	if _, err := h.srv.start(h.storageArgs(blockRowsVariants[0])); err != nil {
		t.Fatalf("soak: first start: %v (log: %s)", err, h.log.path)
	}
	h.figureBudgets()
	if err := h.setRetention(); err != nil {
		t.Fatalf("soak: setting retention: %v", err)
	}

	// The run.
	h.setPhase("ingest and queries")
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for i := range h.streams {
		s := h.newSender(i)
		wg.Go(func() { s.run(ctx) })
	}
	for i := range max(*flagStudio, 0) {
		wg.Go(func() { h.studioClient(ctx, uint64(i)) })
	}
	wg.Go(func() { h.heavyClient(ctx) })
	wg.Go(func() { h.healthProber(ctx) })
	wg.Go(func() { h.watchStorage(ctx) })
	wg.Go(func() { h.metrics.loop(ctx, h) })
	runStart := time.Now() // after the build and the first start
	deadline := runStart.Add(*flagDuration)
	h.chaos(ctx, deadline)
	sleepCtx(context.Background(), time.Until(deadline))
	cancel()
	wg.Wait()
	runFor := time.Since(runStart)
	t.Logf("soak: load stopped after %s; stopping the server cleanly", runFor.Round(time.Second))

	// The end: a clean stop, a restart with default settings, every id.
	h.setPhase("final check")
	h.cleanStop()
	if _, err := h.srv.start(h.storageArgs("")); err != nil {
		t.Fatalf("soak: restart for the final check: %v (log: %s)", err, h.log.path)
	}
	base, _, _ := h.srv.waitUp(context.Background())
	h.sum.Verify = h.verifyAll(context.Background(), base)
	h.cleanStop()
	h.fsck(bin)
	h.sum.Faults.Quarantined = quarantined(h.data)
	for _, q := range h.sum.Faults.Quarantined {
		h.fails.add("quarantined segment", "%s: the server found a damaged segment", q)
	}

	h.summarize(runFor)
	var out bytes.Buffer
	h.sum.print(&out)
	t.Log("\n" + out.String())
	fmt.Fprint(os.Stderr, out.String())
	if *flagJSON != "" {
		if err := h.sum.writeJSON(*flagJSON); err != nil {
			t.Errorf("soak: writing %s: %v", *flagJSON, err)
		}
	}
	for _, f := range h.sum.Failures {
		t.Errorf("soak: %s: %d time(s), first: %s", f.Kind, f.Count, f.Examples[0])
	}
}

// storageArgs are the serve flags of one start.
func (h *harness) storageArgs(blockRows string) []string {
	var args []string
	if blockRows != "" && h.flags.has("block-rows") {
		args = append(args, "--block-rows", blockRows)
	}
	if h.flags.has("segment-rows") {
		args = append(args, "--segment-rows", strconv.Itoa(segmentRows))
	}
	return append(args, h.extraArgs...)
}

// figureBudgets reads the memory limit and the query budget the server
// runs with: the limit from --help's default (or -soak.serve-args), the
// budget of all queries together from the server's "listening" line
// (query_memory_total), else from -soak.query-budget.
func (h *harness) figureBudgets() {
	s := &h.sum.Server
	limit := h.flags.defaultOf("memory-limit")
	floor := h.flags.defaultOf("min-free-disk")
	for i, a := range h.extraArgs {
		if next := ""; i+1 < len(h.extraArgs) {
			next = h.extraArgs[i+1]
			switch strings.TrimLeft(a, "-") {
			case "memory-limit":
				limit = next
			case "min-free-disk":
				floor = next
			}
		}
	}
	var err error
	if s.MemoryLimit, err = parseSize(limit); err != nil {
		h.t.Fatalf("soak: the server's --memory-limit %q: %v", limit, err)
	}
	if floor != "" {
		s.MinFreeDisk, _ = parseSize(floor)
	}
	s.QueryBudgetFrom = "-soak.query-budget (the server logs no query_memory_total)"
	budget := *flagBudget
	if kv := h.srv.listenInfo.Load(); kv != nil && (*kv)["query_memory_total"] != "" {
		budget, s.QueryBudgetFrom = (*kv)["query_memory_total"], "the server's query_memory_total"
	}
	if s.QueryBudget, err = parseSize(budget); err != nil {
		h.t.Fatalf("soak: query budget %q: %v", budget, err)
	}
	s.MemoryBound = s.MemoryLimit + s.QueryBudget
	h.rss.ceiling = max(2*s.MemoryBound, 3<<29)
	if *flagCeiling != "" {
		if h.rss.ceiling, err = parseSize(*flagCeiling); err != nil {
			h.t.Fatalf("soak: -soak.rss-ceiling: %v", err)
		}
	}
	s.RSSCeiling = h.rss.ceiling
	s.Args = append([]string{"sediment"}, h.srv.current().args...)
	for _, v := range blockRowsVariants {
		if v == "" {
			v = "default"
		}
		s.BlockRowsVariety = append(s.BlockRowsVariety, v)
	}
	h.t.Logf("soak: memory bound %s = --memory-limit %s + query budget %s (%s)", mib(s.MemoryBound), mib(s.MemoryLimit), mib(s.QueryBudget), s.QueryBudgetFrom)
}

// setRetention gives the retention source a retention of one day through
// the management API.
func (h *harness) setRetention() error {
	base, _, _ := h.srv.waitUp(context.Background())
	req, _ := http.NewRequest(http.MethodGet, base+"/api/sources", nil)
	req.Header.Set("X-API-KEY", h.privateKey)
	res, err := h.queryClient.Do(req)
	if err != nil {
		return err
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	var sources []struct {
		Token string `json:"token"`
		Name  string `json:"name"`
	}
	if err := json.Unmarshal(body, &sources); err != nil {
		return fmt.Errorf("GET /api/sources: %v: %s", err, snippet(body))
	}
	for _, s := range sources {
		if s.Name != h.retentionSrc.Name() {
			continue
		}
		req, _ := http.NewRequest(http.MethodPatch, base+"/api/sources/"+s.Token, strings.NewReader(`{"retention_days":1}`))
		req.Header.Set("X-API-KEY", h.privateKey)
		req.Header.Set("Content-Type", "application/json")
		res, err := h.queryClient.Do(req)
		if err != nil {
			return err
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode/100 != 2 {
			return fmt.Errorf("PATCH /api/sources/%s: HTTP %d: %s", s.Token, res.StatusCode, snippet(b))
		}
		h.sum.Ingest.RetentionSource = s.Name + " (retention_days 1)"
		return nil
	}
	return fmt.Errorf("no source %s among %d", h.retentionSrc.Name(), len(sources))
}

// chaos kills the server and fills its disk at random times until the
// deadline (nothing starts in the last 30 s), and restarts a server that
// exits by itself.
func (h *harness) chaos(ctx context.Context, deadline time.Time) {
	jitter := func(d time.Duration) time.Duration { return d/2 + time.Duration(h.rng.Int64N(int64(d)+1)) }
	nextKill := time.Now().Add(jitter(*flagKillEvery))
	nextDisk := time.Now().Add(jitter(*flagDiskEvery))
	episode := 0
	for {
		next := nextKill
		if nextDisk.Before(next) {
			next = nextDisk
		}
		if next.After(deadline.Add(-30 * time.Second)) {
			next = deadline
		}
		timer := time.NewTimer(time.Until(next))
		select {
		case g := <-h.srv.crashed:
			timer.Stop()
			if cur := h.srv.current(); cur == g { // not restarted since by another action
				h.t.Logf("soak: generation %d exited by itself; restarting", g.n)
				h.restart(ctx, "after an unexpected exit")
			}
			continue
		case pid := <-h.rss.over:
			timer.Stop()
			if g := h.srv.current(); g != nil && g.cmd.Process.Pid == pid && !isClosed(g.exited) {
				h.sum.Faults.CeilingKills++
				h.fails.add("memory over the ceiling", "generation %d reached the harness's RSS ceiling of %s (%s): killed and restarted",
					g.n, mib(h.rss.ceiling), h.currentPhase())
				h.t.Logf("soak: generation %d over the RSS ceiling; kill -9 and restart", g.n)
				h.srv.kill()
				h.restart(ctx, "after the RSS ceiling")
			}
			continue
		case <-timer.C:
		case <-ctx.Done():
			timer.Stop()
			return
		}
		if !time.Now().Before(deadline.Add(-30 * time.Second)) {
			return
		}
		if !nextKill.After(nextDisk) {
			h.killCycle(ctx)
			nextKill = time.Now().Add(jitter(*flagKillEvery))
		} else {
			h.diskFullEpisode(ctx, episode)
			episode++
			nextDisk = time.Now().Add(jitter(*flagDiskEvery))
			if nextKill.Before(time.Now().Add(20 * time.Second)) {
				nextKill = time.Now().Add(20 * time.Second)
			}
		}
	}
}

// killCycle kills the server with SIGKILL, at a random moment or while a
// segment file is being written (a flush or a compaction), restarts it and
// reads back the newest acknowledged events.
func (h *harness) killCycle(ctx context.Context) {
	h.sum.Faults.Kills++
	n := h.sum.Faults.Kills
	mode := "at a random moment"
	if h.rng.IntN(2) == 0 {
		mode = h.awaitSegmentWrite(ctx)
	}
	if g := h.srv.current(); g != nil && g.cmd.Process != nil {
		if rss, hwm, err := readProcMemory(g.cmd.Process.Pid); err == nil {
			h.rss.record(rss, hwm)
		}
	}
	h.metrics.scrape(ctx, h)
	h.setPhase("kill -9 " + strconv.Itoa(n))
	label := fmt.Sprintf("kill %d %s", n, mode)
	h.t.Logf("soak: %s", label)
	h.sum.Faults.KillLog = append(h.sum.Faults.KillLog, fmt.Sprintf("%s: %s", time.Since(h.start).Round(time.Second), label))
	h.srv.kill()
	h.restart(ctx, label)
}

// awaitSegmentWrite waits for a segment file being written, preferring
// (for a minute) one in a source holding at least compactionMinInputs
// segments, where a compaction may be what writes it, and returns how the
// kill is timed.
func (h *harness) awaitSegmentWrite(ctx context.Context) string {
	const compactionMinInputs = 4 // the engine's default
	h.setPhase("waiting for a segment write to kill")
	g := h.srv.current()
	start := time.Now()
	for time.Since(start) < 90*time.Second && ctx.Err() == nil && !isClosed(g.exited) {
		if _, writing, err := segmentFiles(h.data); err == nil {
			for src, segs := range writing {
				if segs >= compactionMinInputs {
					h.sum.Faults.KillsInSegWrite++
					return fmt.Sprintf("during a segment write in a source of %d segments (a flush or a compaction; %s)", segs, src[:8])
				}
				if time.Since(start) > time.Minute {
					h.sum.Faults.KillsInSegWrite++
					return fmt.Sprintf("during a segment write in a source of %d segments (a flush; %s)", segs, src[:8])
				}
			}
		}
		time.Sleep(2 * time.Millisecond)
	}
	return "at a random moment (no segment write seen in 90 s)"
}

// restart starts a new generation with the next block size; it gives up
// (failing the run) after three failed starts.
func (h *harness) restart(ctx context.Context, label string) {
	h.setPhase("restarting " + label)
	for attempt := 1; ; attempt++ {
		took, err := h.srv.start(h.storageArgs(blockRowsVariants[h.rng.IntN(len(blockRowsVariants))]))
		if err == nil {
			h.sum.Faults.Restarts++
			h.sum.Faults.RestartMaxSeconds = max(h.sum.Faults.RestartMaxSeconds, took.Seconds())
			break
		}
		h.fails.add("restart failed", "%s, attempt %d: %v", label, attempt, err)
		h.srv.kill()
		if attempt == 3 {
			h.t.Fatalf("soak: the server does not start any more (%s): %v; log: %s", label, err, h.log.path)
		}
	}
	h.setPhase("ingest and queries")
	checked, missing := h.spotCheck(ctx, label)
	h.sum.Faults.SpotChecked += checked
	h.sum.Faults.SpotMissing += missing
}

// diskFullEpisode fills the tmpfs with a ballast file: to the last byte
// (ENOSPC in the server's writes) or to below the free-space floor. Ingest
// must answer 507, /ready must say disk_full, queries must still be
// answered; one episode in three also kills the server and starts it on
// the full disk. Then the ballast goes and ingest must resume without a
// restart.
func (h *harness) diskFullEpisode(ctx context.Context, n int) {
	modes := []string{"full", "floor", "full, kill -9 and restart while full"}
	mode := modes[n%len(modes)]
	floor := h.sum.Server.MinFreeDisk
	if mode == "floor" && floor <= 0 {
		mode = "full"
	}
	ep := diskEpisode{Mode: mode}
	h.setPhase("disk full: " + mode)
	h.t.Logf("soak: full disk #%d (%s)", n+1, mode)
	ballast := filepath.Join(h.mnt, "ballast")
	leave := int64(0)
	if mode == "floor" {
		leave = floor / 2
	}
	h.diskFull.Store(true) // before the ballast grows: watchStorage must not take it for data
	defer h.diskFull.Store(false)
	t0 := time.Now()
	written, err := fillBallast(ballast, leave)
	ep.BallastBytes = written
	if err != nil {
		h.fails.add("harness: ballast", "%v", err)
	}

	saw507 := waitFor(ctx, 90*time.Second, func() bool { return h.ingest.last507Nano.Load() > t0.UnixNano() })
	if saw507 {
		ep.SecondsTo507 = time.Since(t0).Seconds()
	} else if ctx.Err() == nil {
		h.fails.add("disk full: no 507", "%s: ingest did not answer 507 within 90 s of filling the disk (ballast %s)", mode, mib(written))
	}
	ep.ReadyDiskFull = h.readyShowsDiskFull(ctx, true, 15*time.Second)
	if !ep.ReadyDiskFull && ctx.Err() == nil {
		h.fails.add("disk full: /ready", "%s: /ready does not show disk_full with the disk full", mode)
	}
	h.queriesWhileFull(ctx, &ep)

	if strings.Contains(mode, "kill") {
		h.sum.Faults.Kills++
		h.t.Logf("soak: kill -9 #%d on the full disk, and a start on it", h.sum.Faults.Kills)
		h.metrics.scrape(ctx, h)
		h.srv.kill()
		h.setPhase("restarting on a full disk")
		took, err := h.srv.start(h.storageArgs(blockRowsVariants[0]))
		if err != nil {
			h.fails.add("disk full: start on a full disk failed", "%v (log: %s)", err, h.log.path)
			h.srv.kill()
		} else {
			ep.RestartedFull = true
			h.sum.Faults.Restarts++
			h.sum.Faults.RestartMaxSeconds = max(h.sum.Faults.RestartMaxSeconds, took.Seconds())
			h.sum.Faults.KillLog = append(h.sum.Faults.KillLog, fmt.Sprintf("%s: kill %d on a full disk, restarted on it",
				time.Since(h.start).Round(time.Second), h.sum.Faults.Kills))
			checked, missing := h.spotCheck(ctx, fmt.Sprintf("kill %d on a full disk", h.sum.Faults.Kills))
			h.sum.Faults.SpotChecked += checked
			h.sum.Faults.SpotMissing += missing
			if !h.readyShowsDiskFull(ctx, true, 30*time.Second) && ctx.Err() == nil {
				h.fails.add("disk full: /ready", "after a start on a full disk, /ready does not show disk_full")
			}
			h.queriesWhileFull(ctx, &ep)
		}
	}

	if err := os.Remove(ballast); err != nil {
		h.fails.add("harness: ballast", "%v", err)
	}
	tFree := time.Now()
	h.setPhase("disk freed")
	if !ep.RestartedFull && strings.Contains(mode, "kill") {
		// The start on the full disk failed: start again now that there is room.
		h.restart(ctx, "after a failed start on a full disk")
	}
	if waitFor(ctx, 120*time.Second, func() bool { return h.ingest.lastAckNano.Load() > tFree.UnixNano() }) {
		ep.SecondsToAck = time.Since(tFree).Seconds()
	} else if ctx.Err() == nil {
		h.fails.add("disk full: ingest did not resume", "%s: no event acknowledged within 120 s of freeing the disk, without a restart", mode)
	}
	if h.readyShowsDiskFull(ctx, false, 120*time.Second) {
		ep.SecondsToReady = time.Since(tFree).Seconds()
	} else if ctx.Err() == nil {
		h.fails.add("disk full: /ready", "%s: /ready still shows disk_full 120 s after the disk was freed", mode)
	}
	h.sum.Faults.DiskFull = append(h.sum.Faults.DiskFull, ep)
	h.setPhase("ingest and queries")
}

// queriesWhileFull runs Studio's queries on the full disk: each must be
// answered (a result, or an error that is not about the disk).
func (h *harness) queriesWhileFull(ctx context.Context, ep *diskEpisode) {
	qs := studioQueries()
	for i := range 4 {
		q := qs[(i*5)%len(qs)]
		ep.QueriesTried++
		switch kind, msg := h.runQuery(ctx, q); kind {
		case answerResult, answerAdmission:
			ep.QueriesOK++
			h.queries.duringDiskFull.Add(1)
		case answerInterrupted:
		default:
			h.fails.add("disk full: query not answered", "%s on the full disk: %v %s", q.name, kind, msg)
		}
	}
}

// readyShowsDiskFull waits up to d for /ready to show (want) or not show
// (!want) a disk_full condition.
func (h *harness) readyShowsDiskFull(ctx context.Context, want bool, d time.Duration) bool {
	c := &http.Client{Timeout: 10 * time.Second}
	return waitFor(ctx, d, func() bool {
		base, _, ok := h.srv.waitUp(ctx)
		if !ok {
			return false
		}
		res, err := c.Get(base + "/ready")
		if err != nil {
			return false
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		return res.StatusCode == http.StatusOK && bytes.Contains(body, []byte("disk_full")) == want
	})
}

// waitFor polls cond every 200 ms for up to d.
func waitFor(ctx context.Context, d time.Duration, cond func() bool) bool {
	for end := time.Now().Add(d); ; {
		if cond() {
			return true
		}
		if time.Now().After(end) || !sleepCtx(ctx, 200*time.Millisecond) {
			return false
		}
	}
}

// watchStorage follows the segment files (written: flushes and
// compactions; removed: compactions and retention), the size of the data
// directory, and the machine's load.
func (h *harness) watchStorage(ctx context.Context) {
	for i := 0; sleepCtx(ctx, time.Second); i++ {
		if segs, _, err := segmentFiles(h.data); err == nil {
			h.segMu.Lock()
			for name := range segs {
				if !h.segsSeen[name] {
					h.segsSeen[name] = true
					h.segsWritten++
				}
			}
			for name := range h.segsSeen {
				if !segs[name] {
					delete(h.segsSeen, name)
					h.segsRemoved++
				}
			}
			h.segMu.Unlock()
		}
		if i%5 == 0 {
			h.maxDataBytes = max(h.maxDataBytes, dirBytes(h.data))
			h.load.sample()
			if free, _, err := diskSpace(h.mnt); err == nil && !h.diskFull.Load() && h.sum.Server.MinFreeDisk > 0 && free < h.sum.Server.MinFreeDisk {
				h.fails.add("harness: tmpfs too small", "the data alone left %s free, below the server's floor: give -soak.tmpfs more room or -soak.rate less", mib(free))
			}
		}
	}
}

// cleanStop stops the server with SIGTERM: it must exit 0.
func (h *harness) cleanStop() {
	h.metrics.scrape(context.Background(), h)
	code, err := h.srv.stop(60 * time.Second)
	h.sum.Faults.CleanStopCodes = append(h.sum.Faults.CleanStopCodes, code)
	if err != nil {
		h.fails.add("clean stop", "%v", err)
	} else if code != 0 {
		h.fails.add("clean stop", "SIGTERM: exit status %d, want 0", code)
	}
}

var fsckSource = regexp.MustCompile(`(?m)^(\S+) \S+: \d+ segments, (\d+) rows, [\d.]+ MiB on disk, (\d+) rows in the write-ahead log`)

// fsck runs `sediment fsck` on the stopped server's data directory: it
// must find nothing wrong. It also reads the retention source's rows.
func (h *harness) fsck(bin string) {
	cmd := exec.Command(bin, "fsck", "--data-dir", h.data)
	out, err := cmd.CombinedOutput()
	h.log.note("=== sediment fsck --data-dir %s: %v\n%s", h.data, err, out)
	if err != nil {
		h.sum.Faults.Fsck = fmt.Sprintf("failed (%v)", err)
		h.fails.add("fsck", "sediment fsck: %v:\n%s", err, shorten(string(out), 2000))
		return
	}
	h.sum.Faults.Fsck = "ok"
	for _, m := range fsckSource.FindAllStringSubmatch(string(out), -1) {
		if m[1] == h.retentionSrc.Name() {
			rows, _ := strconv.ParseInt(m[2], 10, 64)
			wal, _ := strconv.ParseInt(m[3], 10, 64)
			h.sum.Ingest.RetentionOnDisk = rows + wal
		}
	}
}

// summarize fills the summary from the counters.
func (h *harness) summarize(runFor time.Duration) {
	s := &h.sum
	s.Duration = runFor.Round(time.Second).String()
	in := &s.Ingest
	in.Requests, in.Sent, in.Acked, in.AckedOld = h.ingest.requests.Load(), h.ingest.sent.Load(), h.ingest.acked.Load(), h.ingest.ackedOld.Load()
	in.PerSecond = float64(in.Acked) / runFor.Seconds()
	in.Refused429, in.Refused503, in.Refused507 = h.ingest.refused429.Load(), h.ingest.refused503.Load(), h.ingest.r507.Load()
	in.InDoubt, in.Rejected = h.ingest.inDoubt.Load(), h.ingest.rejected.Load()
	if n := h.ingest.ackedRequests.Load(); n > 0 {
		in.MeanAckMs = float64(h.ingest.sumAckNanos.Load()) / 1e6 / float64(n)
	}
	in.MaxAckMs = float64(h.ingest.maxAckLatencyNano.Load()) / 1e6
	in.DroppedByServer, in.RefusalsNoRetry = h.ingest.droppedByServer.Load(), h.ingest.noRetryAfter.Load()
	in.Gzip, in.NDJSON = h.ingest.gzipRequests.Load(), h.ingest.ndjsonRequests.Load()
	in.AckedBySource = map[string]int64{}
	for _, src := range gen.AllSources() {
		in.AckedBySource[src.Name()] = h.ingest.ackedBySource[src].Load()
	}
	h.segMu.Lock()
	in.SegmentsWritten, in.SegmentsRemoved, in.MaxDataBytes = h.segsWritten, h.segsRemoved, h.maxDataBytes
	h.segMu.Unlock()
	// Rows on disk include unanswered events that were stored, so this
	// is a lower bound of what retention removed.
	in.RetentionDropped = max(h.ingest.ackedBySource[h.retentionSrc].Load()-in.RetentionOnDisk, 0)

	q := &s.Queries
	q.Run, q.Results, q.Errors = h.queries.run.Load(), h.queries.results.Load(), h.queries.errors.Load()
	q.RefusedMemory, q.RefusedTime = h.queries.refusedMemory.Load(), h.queries.refusedTime.Load()
	q.Admission429, q.Unavailable, q.Interrupted = h.queries.admission429.Load(), h.queries.unavail.Load(), h.queries.interrupted.Load()
	q.HeavyRun, q.HeavyResults, q.HeavyMemory, q.HeavyTime = h.queries.heavyRun.Load(), h.queries.heavyResults.Load(), h.queries.heavyMemory.Load(), h.queries.heavyTime.Load()
	q.CrossJoinRefused, q.DuringDiskFull = h.queries.crossJoinRefused.Load(), h.queries.duringDiskFull.Load()
	q.MaxLatencyMs = float64(h.queries.maxLatencyNano.Load()) / 1e6
	q.HealthChecks, q.HealthMaxMs = h.queries.healthChecks.Load(), float64(h.queries.healthMaxNs.Load())/1e6
	q.ErrorTexts = h.queries.errorTexts.top(15)

	f := &s.Faults
	f.LogLevels = h.log.levels.top(10)
	f.LogMessages = h.log.messages.top(25)
	f.Panics = h.log.panics.Load()
	f.PanicExamples = h.log.panicExamples()
	if f.Panics > 0 {
		h.fails.add("panic in the server log", "%d lines with a panic or a stack trace; first: %s", f.Panics, f.PanicExamples[0])
	}
	if m, ok := h.metrics.totals(); ok {
		st := &s.Storage
		st.FromMetrics = true
		st.Flushes, st.Compactions = int64(m["sediment_flushes_total"]), int64(m["sediment_compactions_total"])
		st.RetentionExpired, st.RetentionDeleted = int64(m["sediment_retention_expired_events_total"]), int64(m["sediment_retention_deleted_segments_total"])
		st.BackgroundFailures, st.BackgroundPanics = int64(m["sediment_background_failures_total"]), int64(m["sediment_background_panics_total"])
		st.QueryMemoryPeak = int64(m["sediment_query_memory_peak_bytes"])
		if st.BackgroundPanics > 0 {
			h.fails.add("background panic", "/metrics counted %d panics of background work (flush, compaction, retention)", st.BackgroundPanics)
		}
	}
	s.Memory = h.rss.figures()
	s.Load = h.load.figures()
	if s.Memory.PeakHWM > s.Server.MemoryBound {
		h.fails.add("memory over the bound", "peak RSS %s (at %s, %s) is over --memory-limit %s + query budget %s = %s",
			mib(s.Memory.PeakHWM), s.Memory.PeakAt, s.Memory.PeakPhase, mib(s.Server.MemoryLimit), mib(s.Server.QueryBudget), mib(s.Server.MemoryBound))
	}
	f.Crashes = h.fails.count("server exited unexpectedly")
	if s.Faults.Kills == 0 && runFor > *flagKillEvery*2 {
		h.fails.add("harness: no kills", "the run had no kill -9 cycle")
	}
	s.Failures = h.fails.report()
	s.Passed = len(s.Failures) == 0
}
