package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
)

// TestServeRetentionAndDiskCapFlags: --retention-days and --max-disk-bytes
// (and their SEDIMENT_* variables, which the flags win over) are parsed
// and checked.
func TestServeRetentionAndDiskCapFlags(t *testing.T) {
	noEnv := func(string) string { return "" }
	cfg, err := parseServeConfig([]string{"--retention-days", "30", "--max-disk-bytes", "2TiB"}, noEnv, io.Discard)
	if err != nil || cfg.RetentionDays != 30 || cfg.MaxDiskBytes != 2<<40 {
		t.Fatalf("flags: %d days, %d bytes, %v", cfg.RetentionDays, cfg.MaxDiskBytes, err)
	}
	env := map[string]string{"SEDIMENT_RETENTION_DAYS": "14", "SEDIMENT_MAX_DISK_BYTES": "500GB"}
	cfg, err = parseServeConfig(nil, func(k string) string { return env[k] }, io.Discard)
	if err != nil || cfg.RetentionDays != 14 || cfg.MaxDiskBytes != 500e9 {
		t.Fatalf("environment: %d days, %d bytes, %v", cfg.RetentionDays, cfg.MaxDiskBytes, err)
	}
	cfg, err = parseServeConfig([]string{"--retention-days", "7"}, func(k string) string { return env[k] }, io.Discard)
	if err != nil || cfg.RetentionDays != 7 || cfg.MaxDiskBytes != 500e9 {
		t.Fatalf("the flag must win: %d days, %v", cfg.RetentionDays, err)
	}
	cfg, err = parseServeConfig(nil, noEnv, io.Discard)
	if err != nil || cfg.RetentionDays != 0 || cfg.MaxDiskBytes != 0 {
		t.Fatalf("defaults: %d days, %d bytes, %v", cfg.RetentionDays, cfg.MaxDiskBytes, err)
	}
	for _, args := range [][]string{
		{"--retention-days", "-1"}, {"--retention-days", "a week"},
		{"--max-disk-bytes", "lots"}, {"--max-disk-bytes", "-5GiB"}, {"--max-disk-bytes", "99999999999TiB"},
	} {
		if _, err := parseServeConfig(args, noEnv, io.Discard); err == nil || !strings.Contains(err.Error(), strings.TrimPrefix(args[0], "--")) {
			t.Errorf("%v: %v", args, err)
		}
	}
	if _, err := parseServeConfig(nil, func(k string) string {
		return map[string]string{"SEDIMENT_MAX_DISK_BYTES": "big"}[k]
	}, io.Discard); err == nil || !strings.Contains(err.Error(), "SEDIMENT_MAX_DISK_BYTES") && !strings.Contains(err.Error(), "max-disk-bytes") {
		t.Errorf("a bad SEDIMENT_MAX_DISK_BYTES: %v", err)
	}
}

// TestServeAppliesRetentionAndDiskCap: a server started with
// --retention-days gives it to a source without its own, and with
// --max-disk-bytes deletes the oldest segments once over it.
func TestServeAppliesRetentionAndDiskCap(t *testing.T) {
	r := start(t, serveConfig{DataDir: t.TempDir(), PublicToken: "pub", PrivateToken: "priv", RetentionDays: 3650, MaxDiskBytes: 1})
	var src struct {
		Token string `json:"token"`
	}
	json.Unmarshal([]byte(r.mustDo("POST", "/api/sources", "priv", `{"name":"app"}`, 201)), &src)
	var detail map[string]any
	json.Unmarshal([]byte(r.mustDo("GET", "/api/sources/"+src.Token, "priv", "", 200)), &detail)
	if detail["effective_retention_days"] != float64(3650) || detail["retention_days"] != nil {
		t.Fatalf("a source without its own retention: %v", detail)
	}
	sh, err := r.a.eng.Shard(src.Token)
	if err != nil {
		t.Fatal(err)
	}
	for _, day := range []int{20, 21} {
		r.mustDo("POST", "/api/logs?source_name=app", "pub", fmt.Sprintf(`[{"message":"day %d","timestamp":"2025-07-%dT10:00:00Z"}]`, day, day), 200)
		if err := sh.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := r.a.eng.ApplyRetention(); err != nil {
		t.Fatal(err)
	}
	// Over a cap of one byte, the older segment goes; the newest stays.
	json.Unmarshal([]byte(r.mustDo("GET", "/api/sources/"+src.Token, "priv", "", 200)), &detail)
	if ev, _ := detail["deleted_events"].(map[string]any); len(ev) != 1 || ev["global_size_cap"] != float64(1) {
		t.Fatalf("after the retention pass: %v", detail)
	}
	if in := sh.Info(); in.Segments != 1 || in.SegmentRows != 1 {
		t.Fatalf("%d segments, %d events left", in.Segments, in.SegmentRows)
	}
}
