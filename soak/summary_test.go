//go:build soak && linux

package soak

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// summary is what a run measured and found; it is printed at the end and
// written as JSON with -soak.json.
type summary struct {
	Date     string  `json:"date"`
	Machine  machine `json:"machine"`
	Seed     int64   `json:"seed"`
	Command  string  `json:"command"`
	Duration string  `json:"duration"`
	Passed   bool    `json:"passed"`

	Server struct {
		MemoryLimit      int64    `json:"memory_limit_bytes"`
		QueryBudget      int64    `json:"query_budget_bytes"`
		QueryBudgetFrom  string   `json:"query_budget_from"`
		MemoryBound      int64    `json:"memory_bound_bytes"`
		RSSCeiling       int64    `json:"rss_ceiling_bytes"`
		MinFreeDisk      int64    `json:"min_free_disk_bytes"`
		Tmpfs            int64    `json:"tmpfs_bytes"`
		Args             []string `json:"args"`
		BlockRowsVariety []string `json:"block_rows_variants"`
	} `json:"server"`

	Ingest struct {
		Requests         int64            `json:"requests"`
		Sent             int64            `json:"events_sent"`
		Acked            int64            `json:"events_acknowledged"`
		AckedOld         int64            `json:"old_events_acknowledged"`
		PerSecond        float64          `json:"acknowledged_per_second"`
		Refused429       int64            `json:"refused_429"`
		Refused503       int64            `json:"refused_503"`
		Refused507       int64            `json:"refused_507"`
		InDoubt          int64            `json:"in_doubt"`
		Rejected         int64            `json:"rejected"`
		MeanAckMs        float64          `json:"mean_ack_ms"`
		MaxAckMs         float64          `json:"max_ack_ms"`
		Gzip             int64            `json:"gzip_requests"`
		NDJSON           int64            `json:"ndjson_requests"`
		DroppedByServer  int64            `json:"dropped_connections"`
		RefusalsNoRetry  int64            `json:"refusals_without_retry_after"`
		AckedBySource    map[string]int64 `json:"acknowledged_by_source"`
		SegmentsWritten  int64            `json:"segment_files_written"`
		SegmentsRemoved  int64            `json:"segment_files_removed"`
		MaxDataBytes     int64            `json:"max_data_dir_bytes"`
		RetentionOnDisk  int64            `json:"retention_source_rows_on_disk"`
		RetentionSource  string           `json:"retention_source"`
		RetentionDropped int64            `json:"retention_source_rows_removed"`
	} `json:"ingest"`

	Queries struct {
		Run              int64         `json:"run"`
		Results          int64         `json:"results"`
		Errors           int64         `json:"errors"`
		RefusedMemory    int64         `json:"refused_by_memory_limit"`
		RefusedTime      int64         `json:"refused_by_time_limit"`
		Admission429     int64         `json:"refused_by_admission_429"`
		Unavailable      int64         `json:"unavailable_503_507"`
		Interrupted      int64         `json:"interrupted_by_kills"`
		HeavyRun         int64         `json:"heavy_run"`
		HeavyResults     int64         `json:"heavy_results"`
		HeavyMemory      int64         `json:"heavy_refused_by_memory"`
		HeavyTime        int64         `json:"heavy_refused_by_time"`
		CrossJoinRefused int64         `json:"distinct_cross_join_refused_by_memory"`
		DuringDiskFull   int64         `json:"answered_during_disk_full"`
		MaxLatencyMs     float64       `json:"max_latency_ms"`
		HealthChecks     int64         `json:"health_checks"`
		HealthMaxMs      float64       `json:"health_max_ms"`
		ErrorTexts       []countedText `json:"error_texts"`
	} `json:"queries"`

	Faults struct {
		Kills             int           `json:"kills"`
		KillLog           []string      `json:"kill_log"`
		KillsInSegWrite   int           `json:"kills_during_segment_write"`
		Restarts          int           `json:"restarts"`
		RestartMaxSeconds float64       `json:"restart_max_seconds"`
		SpotChecked       int           `json:"spot_checked_after_restarts"`
		SpotMissing       int           `json:"spot_missing"`
		DiskFull          []diskEpisode `json:"enospc_episodes"`
		Crashes           int           `json:"unexpected_exits"`
		CeilingKills      int           `json:"kills_at_rss_ceiling"`
		CleanStopCodes    []int         `json:"clean_stop_exit_codes"`
		Fsck              string        `json:"fsck"`
		Quarantined       []string      `json:"quarantined"`
		LogLevels         []countedText `json:"log_levels"`
		LogMessages       []countedText `json:"log_warnings_and_errors"`
		Panics            int64         `json:"panic_lines"`
		PanicExamples     []string      `json:"panic_examples"`
		ServerLog         string        `json:"server_log"`
	} `json:"faults"`

	// Storage is what /metrics counted, summed over the server's
	// processes (when the binary serves /metrics).
	Storage struct {
		FromMetrics        bool  `json:"from_metrics"`
		Flushes            int64 `json:"flushes"`
		Compactions        int64 `json:"compactions"`
		RetentionExpired   int64 `json:"retention_expired_events"`
		RetentionDeleted   int64 `json:"retention_deleted_segments"`
		BackgroundFailures int64 `json:"background_failures"`
		BackgroundPanics   int64 `json:"background_panics"`
		QueryMemoryPeak    int64 `json:"query_memory_peak_bytes"`
	} `json:"storage"`

	Memory rssFigures   `json:"memory"`
	Verify verifyCounts `json:"verify"`
	Load   loadFigures  `json:"load"`

	Failures []failureReport `json:"failures"`
}

// diskEpisode is one injected full disk.
type diskEpisode struct {
	Mode           string  `json:"mode"`
	BallastBytes   int64   `json:"ballast_bytes"`
	SecondsTo507   float64 `json:"seconds_to_507"`
	ReadyDiskFull  bool    `json:"ready_showed_disk_full"`
	QueriesOK      int     `json:"queries_answered"`
	QueriesTried   int     `json:"queries_tried"`
	RestartedFull  bool    `json:"restarted_while_full,omitempty"`
	SecondsToAck   float64 `json:"seconds_to_resume"`
	SecondsToReady float64 `json:"seconds_to_ready_ok"`
}

// machine describes where the run ran.
type machine struct {
	CPU    string `json:"cpu"`
	Cores  int    `json:"cores"`
	Memory string `json:"memory"`
	Kernel string `json:"kernel"`
	Go     string `json:"go"`
}

func describeMachine() machine {
	m := machine{Cores: runtime.NumCPU(), Go: runtime.Version()}
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPU = strings.TrimSpace(v)
				break
			}
		}
		f.Close()
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		for line := range strings.SplitSeq(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "MemTotal:"); ok {
				if f := strings.Fields(v); len(f) > 0 {
					kb, _ := strconv.ParseInt(f[0], 10, 64)
					m.Memory = fmt.Sprintf("%.1f GiB", float64(kb)/(1<<20))
				}
			}
		}
	}
	var u syscall.Utsname
	if syscall.Uname(&u) == nil {
		b := make([]byte, 0, len(u.Release))
		for _, c := range u.Release {
			if c == 0 {
				break
			}
			b = append(b, byte(c))
		}
		m.Kernel = "Linux " + string(b)
	}
	return m
}

// loadFigures is the machine's load average during the run (other work
// shares the machine: the figures say how much).
type loadFigures struct {
	Mean1m float64 `json:"mean_loadavg_1m"`
	Max1m  float64 `json:"max_loadavg_1m"`
}

// loadSampler reads /proc/loadavg.
type loadSampler struct {
	mu       sync.Mutex
	sum, max float64
	n        int
}

func (l *loadSampler) sample() {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return
	}
	v, err := strconv.ParseFloat(f[0], 64)
	if err != nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.sum += v
	l.n++
	l.max = max(l.max, v)
}

func (l *loadSampler) figures() loadFigures {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.n == 0 {
		return loadFigures{}
	}
	return loadFigures{Mean1m: l.sum / float64(l.n), Max1m: l.max}
}

// print writes the summary for a person.
func (s *summary) print(w io.Writer) {
	p := func(format string, args ...any) { fmt.Fprintf(w, format+"\n", args...) }
	verdict := "PASS"
	if !s.Passed {
		verdict = "FAIL"
	}
	p("=== soak summary: %s", verdict)
	p("date %s, seed %d, duration %s", s.Date, s.Seed, s.Duration)
	p("machine: %s, %d cores, %s, %s, %s; load average (1 min) mean %.1f, max %.1f",
		s.Machine.CPU, s.Machine.Cores, s.Machine.Memory, s.Machine.Kernel, s.Machine.Go, s.Load.Mean1m, s.Load.Max1m)
	p("server: %s", strings.Join(s.Server.Args, " "))
	p("ingest: %d requests, %d events sent, %d acknowledged (%.0f/s; %d stamped past retention), refused 429 %d / 503 %d / 507 %d, in doubt (killed) %d, rejected %d; ack mean %.1f ms, max %.0f ms",
		s.Ingest.Requests, s.Ingest.Sent, s.Ingest.Acked, s.Ingest.PerSecond, s.Ingest.AckedOld,
		s.Ingest.Refused429, s.Ingest.Refused503, s.Ingest.Refused507, s.Ingest.InDoubt, s.Ingest.Rejected, s.Ingest.MeanAckMs, s.Ingest.MaxAckMs)
	p("storage: %d segment files written, %d removed (compaction, retention); data dir at most %s; retention source %s: %d events acknowledged (%d past retention), %d rows on disk at the end: at least %d removed",
		s.Ingest.SegmentsWritten, s.Ingest.SegmentsRemoved, mib(s.Ingest.MaxDataBytes), s.Ingest.RetentionSource,
		s.Ingest.AckedBySource[strings.Fields(s.Ingest.RetentionSource + " ")[0]], s.Verify.AckedOld, s.Ingest.RetentionOnDisk, s.Ingest.RetentionDropped)
	if st := s.Storage; st.FromMetrics {
		p("storage (/metrics, summed over processes): %d flushes, %d compactions, retention removed %d events (%d segments deleted whole), %d background failures (%d panics); query memory pool peak %s",
			st.Flushes, st.Compactions, st.RetentionExpired, st.RetentionDeleted, st.BackgroundFailures, st.BackgroundPanics, mib(st.QueryMemoryPeak))
	}
	p("queries: %d run: %d results, %d errors (%d memory limit, %d time limit), %d refused 429, %d 503/507, %d interrupted by kills; max latency %.1f s",
		s.Queries.Run, s.Queries.Results, s.Queries.Errors, s.Queries.RefusedMemory, s.Queries.RefusedTime, s.Queries.Admission429, s.Queries.Unavailable, s.Queries.Interrupted, s.Queries.MaxLatencyMs/1000)
	p("heavy queries: %d run, %d results, %d refused by memory, %d by time; distinct cross join refused by memory %d times",
		s.Queries.HeavyRun, s.Queries.HeavyResults, s.Queries.HeavyMemory, s.Queries.HeavyTime, s.Queries.CrossJoinRefused)
	p("/health: %d checks, slowest %.1f ms", s.Queries.HealthChecks, s.Queries.HealthMaxMs)
	p("faults: %d kill -9 (%d during a segment write), %d restarts (slowest %.1f s), spot checks after restarts %d ids, %d missing; %d unexpected exits; %d kills at the RSS ceiling (%s); clean stops exit %v",
		s.Faults.Kills, s.Faults.KillsInSegWrite, s.Faults.Restarts, s.Faults.RestartMaxSeconds, s.Faults.SpotChecked, s.Faults.SpotMissing, s.Faults.Crashes,
		s.Faults.CeilingKills, mib(s.Server.RSSCeiling), s.Faults.CleanStopCodes)
	for _, k := range s.Faults.KillLog {
		p("  %s", k)
	}
	for i, e := range s.Faults.DiskFull {
		p("  ENOSPC %d (%s): ballast %s, 507 after %.1f s, /ready disk_full %v, queries %d/%d answered, restarted while full %v, ingest resumed %.1f s after space was freed (no restart), /ready ok after %.1f s",
			i+1, e.Mode, mib(e.BallastBytes), e.SecondsTo507, e.ReadyDiskFull, e.QueriesOK, e.QueriesTried, e.RestartedFull, e.SecondsToAck, e.SecondsToReady)
	}
	p("memory: peak RSS %s (VmHWM; sampled VmRSS peak %s, mean %s) at %s (%s); bound %s = --memory-limit %s + query budget %s (%s)",
		mib(s.Memory.PeakHWM), mib(s.Memory.PeakSampled), mib(s.Memory.MeanSampled), s.Memory.PeakAt, s.Memory.PeakPhase,
		mib(s.Server.MemoryBound), mib(s.Server.MemoryLimit), mib(s.Server.QueryBudget), s.Server.QueryBudgetFrom)
	p("verify (after a clean stop and restart): %d ids read in %d queries (%d s); acknowledged inside retention %d, found %d, LOST %d, DUPLICATED %d; old events visible %d; refused but stored %d; in doubt %d, of them stored %d; unknown ids %d, in wrong source %d",
		s.Verify.Read, s.Verify.Queries, s.Verify.SecondsToRead, s.Verify.Acked, s.Verify.Found, s.Verify.Lost, s.Verify.Duplicated,
		s.Verify.RetentionLeaks, s.Verify.RefusedStored, s.Verify.InDoubt, s.Verify.InDoubtStored, s.Verify.Foreign, s.Verify.WrongSource)
	p("fsck: %s; quarantined files: %d", s.Faults.Fsck, len(s.Faults.Quarantined))
	p("panics: %d lines", s.Faults.Panics)
	for _, e := range s.Faults.PanicExamples {
		p("  %s", e)
	}
	p("server log: %s", s.Faults.ServerLog)
	for _, m := range s.Faults.LogMessages {
		p("  log %5d× %s", m.Count, m.Text)
	}
	for _, e := range s.Queries.ErrorTexts {
		p("  query error %5d× %s", e.Count, e.Text)
	}
	for _, f := range s.Failures {
		p("FAILURE %s: %d", f.Kind, f.Count)
		for _, e := range f.Examples {
			p("    %s", e)
		}
	}
}

// writeJSON writes the summary to path.
func (s *summary) writeJSON(path string) error {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}
