package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/sediment/sediment/catalog"
	"github.com/sediment/sediment/engine"
	"github.com/sediment/sediment/httpapi"
)

func init() {
	commands["snapshot"] = command{summary: "write a consistent copy of a data directory for backups, from a running server or not", run: runSnapshot}
}

// runSnapshot is `sediment snapshot`.
func runSnapshot(args []string, stdout, stderr io.Writer) int {
	return snapshotCommand(args, os.Getenv, stdout, stderr)
}

func snapshotCommand(args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("snapshot", flag.ContinueOnError)
	fl.SetOutput(stderr)
	dataDir := fl.String("data-dir", "", "the data directory to snapshot")
	out := fl.String("out", "", "directory to write the snapshot to (must not exist)")
	serverURL := fl.String("url", "", "a running server's base URL (default: the local server, as `sediment health` finds it)")
	apiKey := fl.String("api-key", "", "private key for a running server (default $LOGFLARE_PRIVATE_ACCESS_TOKEN, else <data-dir>/generated-keys.json)")
	name := fl.String("name", "", "name of the snapshot in the server's --snapshot-dir, with --url alone (default snapshot-<time>)")
	timeout := fl.Duration("timeout", 10*time.Minute, "how long to wait for a running server's snapshot")
	fetchEvicted := fl.Bool("fetch-evicted", false, "an ingest node's segments evicted to object storage are read back into the snapshot (by the running server), so that it needs no store")
	fl.Usage = func() {
		fmt.Fprintln(stderr, "usage: sediment snapshot --data-dir DIR --out DIR")
		fmt.Fprintln(stderr, "       sediment snapshot --url URL [--api-key KEY] [--name NAME]")
		fmt.Fprintln(stderr)
		fmt.Fprintln(stderr, "With --data-dir, a data directory no server holds is snapshotted in this process;")
		fmt.Fprintln(stderr, "one a server holds is snapshotted by that server (POST /api/admin/snapshot) and the")
		fmt.Fprintln(stderr, "result moved to --out. With --url alone, the server keeps the snapshot in its")
		fmt.Fprintln(stderr, "--snapshot-dir and its path is printed. Restore: stop the server, put a copy of the")
		fmt.Fprintln(stderr, "snapshot in place of the data directory, start the server.")
		fmt.Fprintln(stderr)
		printFlags(stderr, fl, false)
	}
	if err := fl.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	fail := func(err error) int {
		fmt.Fprintln(stderr, "sediment snapshot:", err)
		return 1
	}
	switch {
	case fl.NArg() > 0, *dataDir == "" && *serverURL == "", *dataDir != "" && *out == "", *dataDir == "" && *out != "":
		fl.Usage()
		return 2
	}
	if *dataDir == "" {
		info, err := requestSnapshot(*serverURL, snapshotKey(*apiKey, "", getenv), *name, *fetchEvicted, *timeout)
		if err != nil {
			return fail(err)
		}
		fmt.Fprintln(stdout, info.Path)
		return 0
	}
	if _, err := os.Lstat(*out); err == nil {
		return fail(fmt.Errorf("%s exists already", *out))
	}
	if _, err := os.Stat(*dataDir); err != nil {
		return fail(err)
	}
	lock, err := lockDataDir(*dataDir)
	if err == nil {
		defer lock.Close()
		info, err := snapshotOffline(*dataDir, *out, *fetchEvicted)
		if err != nil {
			return fail(err)
		}
		fmt.Fprintf(stdout, "%s (%d sources, %d segments, %d log files)\n", info.Path, info.Sources, info.Segments, info.WALFiles)
		return 0
	}
	// A server holds the directory: ask it.
	base := *serverURL
	if base == "" {
		base = "http://" + localServerAddr(getenv)
	}
	snapName := fmt.Sprintf("cli-%s-%d", time.Now().UTC().Format("20060102T150405Z"), os.Getpid())
	info, err := requestSnapshot(base, snapshotKey(*apiKey, *dataDir, getenv), snapName, *fetchEvicted, *timeout)
	if err != nil {
		return fail(fmt.Errorf("%s is in use by a server; asking it at %s: %w", *dataDir, base, err))
	}
	local := info.Path
	if _, err := os.Stat(local); err != nil {
		// The server sees another file system (a container): its default
		// snapshot directory is under the data directory.
		local = filepath.Join(*dataDir, "snapshots", filepath.Base(info.Path))
	}
	if err := moveDir(local, *out); err != nil {
		return fail(fmt.Errorf("the server wrote the snapshot to %s; moving it to %s: %w", info.Path, *out, err))
	}
	fmt.Fprintf(stdout, "%s (%d sources, %d segments, %d log files; written by the running server)\n", *out, info.Sources, info.Segments, info.WALFiles)
	return 0
}

// snapshotOffline snapshots a data directory no server holds (the caller
// holds its lock).
func snapshotOffline(dataDir, out string, fetchEvicted bool) (httpapi.SnapshotInfo, error) {
	eng, err := engine.Open(dataDir, &engine.Options{DisableBackground: true})
	if err != nil {
		return httpapi.SnapshotInfo{}, fmt.Errorf("open engine: %w", err)
	}
	defer eng.Close()
	cat, err := catalog.Open(dataDir, nil)
	if err != nil {
		return httpapi.SnapshotInfo{}, fmt.Errorf("open catalog: %w", err)
	}
	b := buildInfo()
	return httpapi.WriteSnapshot(eng, cat, out, httpapi.SnapshotOptions{
		Files: []string{filepath.Join(dataDir, generatedKeysFile)}, Version: b.Version, Commit: b.Commit, FetchEvicted: fetchEvicted})
}

// snapshotKey finds the private key to ask a server with: the flag, the
// environment, or the generated keys file of the data directory.
func snapshotKey(flagKey, dataDir string, getenv func(string) string) string {
	if flagKey != "" {
		return flagKey
	}
	if k := strings.TrimSpace(getenv("LOGFLARE_PRIVATE_ACCESS_TOKEN")); k != "" {
		return k
	}
	if dataDir != "" {
		var k generatedKeys
		if data, err := os.ReadFile(filepath.Join(dataDir, generatedKeysFile)); err == nil && json.Unmarshal(data, &k) == nil {
			return k.Private
		}
	}
	return ""
}

// requestSnapshot asks a running server for a snapshot.
func requestSnapshot(base, key, name string, fetchEvicted bool, timeout time.Duration) (httpapi.SnapshotInfo, error) {
	var info httpapi.SnapshotInfo
	if key == "" {
		return info, errors.New("no private key: pass --api-key or set LOGFLARE_PRIVATE_ACCESS_TOKEN")
	}
	q := url.Values{}
	if name != "" {
		q.Set("name", name)
	}
	if fetchEvicted {
		q.Set("fetch_evicted", "true")
	}
	u := strings.TrimSuffix(base, "/") + "/api/admin/snapshot"
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, nil)
	if err != nil {
		return info, err
	}
	req.Header.Set("Authorization", "Bearer "+key)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return info, err
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	if res.StatusCode != http.StatusCreated {
		return info, fmt.Errorf("%s: %d %s", u, res.StatusCode, strings.TrimSpace(string(body)))
	}
	if err := json.Unmarshal(body, &info); err != nil {
		return info, fmt.Errorf("%s: %w", u, err)
	}
	return info, nil
}

// moveDir moves the directory src to dst: a rename, or on another file
// system a copy (files synced) followed by the removal of src.
func moveDir(src, dst string) error {
	err := os.Rename(src, dst)
	if err == nil {
		return nil
	}
	if !errors.Is(err, syscall.EXDEV) {
		return err
	}
	err = filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		return copyFileSynced(p, target, info.Mode().Perm())
	})
	if err != nil {
		return err
	}
	return os.RemoveAll(src)
}

func copyFileSynced(src, dst string, mode os.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	if err := out.Sync(); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
