package bench

import (
	"os"
	"runtime"
	"strconv"
	"strings"
)

// Machine describes where a benchmark ran.
type Machine struct {
	CPU      string `json:"cpu"`
	CPUs     int    `json:"cpus"`
	MemBytes int64  `json:"mem_bytes"`
	OS       string `json:"os"`
	Kernel   string `json:"kernel,omitempty"`
	Go       string `json:"go"`
	// LoadAvg is /proc/loadavg's 1, 5 and 15 minute load when the run
	// started: a load above the CPU count means the figures were shared
	// with other work.
	LoadAvg string `json:"load_avg,omitempty"`
}

// ThisMachine describes the machine running the benchmark (CPU model,
// memory and kernel from /proc on Linux; left empty elsewhere).
func ThisMachine() Machine {
	m := Machine{CPUs: runtime.NumCPU(), OS: runtime.GOOS + "/" + runtime.GOARCH, Go: runtime.Version()}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPU = strings.Join(strings.Fields(v), " ")
				break
			}
		}
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "MemTotal:"); ok {
				kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
				m.MemBytes = kb << 10
				break
			}
		}
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = strings.TrimSpace(string(b))
	}
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		if f := strings.Fields(string(b)); len(f) >= 3 {
			m.LoadAvg = strings.Join(f[:3], " ")
		}
	}
	return m
}

// String is a one-line description.
func (m Machine) String() string {
	var parts []string
	if m.CPU != "" {
		parts = append(parts, m.CPU)
	}
	parts = append(parts, strconv.Itoa(m.CPUs)+" CPUs")
	if m.MemBytes > 0 {
		parts = append(parts, iec(m.MemBytes)+" RAM")
	}
	os := m.OS
	if m.Kernel != "" {
		os += " " + m.Kernel
	}
	parts = append(parts, os, m.Go)
	if m.LoadAvg != "" {
		parts = append(parts, "load "+m.LoadAvg)
	}
	return strings.Join(parts, ", ")
}
