//go:build soak && linux

package soak

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// rssPeak follows the server's resident memory: VmRSS sampled every
// second, and VmHWM (the kernel's own high-water mark of the process,
// which catches a peak between samples) read with each sample, across
// every generation.
type rssPeak struct {
	start time.Time
	phase func() string // what the run was doing, for the peak's record
	// ceiling is the RSS past which the process is reported on over (its
	// pid), so that a runaway query does not take the shared machine down.
	ceiling int64
	over    chan int

	mu        sync.Mutex
	peakHWM   int64
	peakRSS   int64
	peakAt    time.Duration
	peakPhase string
	samples   int
	sum       int64
}

// sample reads pid's memory every second until exited is closed.
func (r *rssPeak) sample(pid int, exited chan struct{}) {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		rss, hwm, err := readProcMemory(pid)
		if err == nil {
			r.record(rss, hwm)
			if r.ceiling > 0 && rss > r.ceiling {
				select {
				case r.over <- pid:
				default:
				}
			}
		}
		select {
		case <-exited:
			return
		case <-tick.C:
		}
	}
}

func (r *rssPeak) record(rss, hwm int64) {
	phase := ""
	if r.phase != nil {
		phase = r.phase()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.samples++
	r.sum += rss
	r.peakRSS = max(r.peakRSS, rss)
	if hwm > r.peakHWM {
		r.peakHWM, r.peakAt, r.peakPhase = hwm, time.Since(r.start).Round(time.Second), phase
	}
}

// rssFigures are the memory figures of the summary.
type rssFigures struct {
	PeakHWM     int64  `json:"peak_vmhwm_bytes"`
	PeakSampled int64  `json:"peak_vmrss_sampled_bytes"`
	MeanSampled int64  `json:"mean_vmrss_bytes"`
	PeakAt      string `json:"peak_at"`
	PeakPhase   string `json:"peak_phase"`
	Samples     int    `json:"samples"`
}

func (r *rssPeak) figures() rssFigures {
	r.mu.Lock()
	defer r.mu.Unlock()
	f := rssFigures{PeakHWM: r.peakHWM, PeakSampled: r.peakRSS, PeakAt: r.peakAt.String(), PeakPhase: r.peakPhase, Samples: r.samples}
	if r.samples > 0 {
		f.MeanSampled = r.sum / int64(r.samples)
	}
	return f
}

// readProcMemory returns VmRSS and VmHWM of pid in bytes.
func readProcMemory(pid int) (rss, hwm int64, err error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		key, val, ok := strings.Cut(sc.Text(), ":")
		if !ok || (key != "VmRSS" && key != "VmHWM") {
			continue
		}
		fields := strings.Fields(val) // "123456 kB"
		if len(fields) != 2 || fields[1] != "kB" {
			return 0, 0, fmt.Errorf("/proc/%d/status: %s:%s", pid, key, val)
		}
		kb, err := strconv.ParseInt(fields[0], 10, 64)
		if err != nil {
			return 0, 0, err
		}
		if key == "VmRSS" {
			rss = kb << 10
		} else {
			hwm = kb << 10
		}
	}
	if rss == 0 {
		return 0, 0, fmt.Errorf("/proc/%d/status: no VmRSS (process gone?)", pid)
	}
	return rss, hwm, sc.Err()
}
