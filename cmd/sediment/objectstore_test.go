package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/sediment/sediment/httpapi"
	"github.com/sediment/sediment/internal/miniotest"
	"github.com/sediment/sediment/objstore"
	"github.com/sediment/sediment/remote"
)

func TestObjectStoreFlags(t *testing.T) {
	parse := func(args []string, env map[string]string) (objectStoreConfig, error) {
		cfg, err := parseServeConfig(args, func(k string) string { return env[k] }, io.Discard)
		return cfg.Store, err
	}
	// Without --object-store nothing changes.
	if c, err := parse(nil, nil); err != nil || c.enabled() || c.Role != "" {
		t.Fatalf("default: %+v %v", c, err)
	}
	c, err := parse([]string{"--object-store", "s3://logs/sediment/prod", "--object-store-endpoint", "http://127.0.0.1:9000",
		"--object-store-path-style", "--cache-size", "2GiB", "--role", "ingest", "--node-id", "ingest-1"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := objstore.S3Config{Bucket: "logs", Prefix: "sediment/prod/", Endpoint: "127.0.0.1:9000", Insecure: true, PathStyle: true}
	if c.S3 != want || c.CacheSize != 2<<30 || c.Role != roleIngest || c.NodeID != "ingest-1" || c.GCInterval != defaultGCInterval {
		t.Fatalf("flags: %+v", c)
	}
	if c.ManifestMaxAge != time.Second {
		t.Fatalf("--manifest-max-age default: %v", c.ManifestMaxAge)
	}
	if c, err := parse([]string{"--object-store", "s3://logs", "--manifest-max-age", "0"}, nil); err != nil || c.ManifestMaxAge != 0 {
		t.Fatalf("--manifest-max-age 0: %v %v", c.ManifestMaxAge, err)
	}
	if c.UnsealedMaxAge != 0 {
		t.Fatalf("--unsealed-max-age default: %v", c.UnsealedMaxAge)
	}
	if c, err := parse([]string{"--object-store", "s3://logs", "--unsealed-max-age", "2s"}, nil); err != nil || c.UnsealedMaxAge != 2*time.Second {
		t.Fatalf("--unsealed-max-age 2s: %v %v", c.UnsealedMaxAge, err)
	}
	// SEDIMENT_* and AWS_* variables; flags win over both.
	env := map[string]string{"SEDIMENT_OBJECT_STORE": "s3://logs", "AWS_ENDPOINT_URL": "https://minio.internal:9000",
		"AWS_REGION": "eu-west-1", "AWS_S3_FORCE_PATH_STYLE": "true", "SEDIMENT_ROLE": "query",
		"SEDIMENT_INGEST_NODES": "http://a:4000/, http://b:4000", "SEDIMENT_CLUSTER_KEY": "secret"}
	c, err = parse([]string{"--object-store-region", "us-east-2"}, env)
	if err != nil {
		t.Fatal(err)
	}
	want = objstore.S3Config{Bucket: "logs", Endpoint: "minio.internal:9000", Region: "us-east-2", PathStyle: true}
	if c.S3 != want || c.Role != roleQuery || c.CacheSize != defaultCacheSize || c.ClusterKey != "secret" || strings.Join(c.IngestNodes, " ") != "http://a:4000 http://b:4000" {
		t.Fatalf("env: %+v", c)
	}
	for _, bad := range [][]string{
		{"--role", "query"},               // needs a store
		{"--cache-size", "1GiB"},          // needs a store
		{"--object-store", "http://logs"}, // not s3://
		{"--object-store", "s3://Logs"},   // bad bucket
		{"--object-store", "s3://logs", "--role", "both"},
		{"--object-store", "s3://logs", "--node-id", "a/b"},
		{"--object-store", "s3://logs", "--cache-size", "1KiB"},
		{"--object-store", "s3://logs", "--ingest-nodes", "http://a:4000"}, // role all
		{"--object-store", "s3://logs", "--role", "query", "--ingest-nodes", "a:4000"},
		{"--object-store", "s3://logs", "--object-store-access-key", "k"},                     // no secret
		{"--object-store", "s3://logs", "--role", "query", "--ingest-nodes", "http://a:4000"}, // no cluster key
		{"--object-store", "s3://logs", "--role", "query", "--syslog-udp", "5514"},
		{"--object-store", "s3://logs", "--manifest-max-age", "-1s"},
		{"--object-store", "s3://logs", "--manifest-max-age", "1h"}, // past the grace period's margin
		{"--object-store", "s3://logs", "--unsealed-max-age", "-1s"},
	} {
		if _, err := parse(bad, nil); err == nil {
			t.Errorf("%q: accepted", bad)
		}
	}
}

func TestNodeIDKept(t *testing.T) {
	dir := t.TempDir()
	id, err := loadNodeID(dir, "")
	if err != nil || !objstore.ValidID(id) {
		t.Fatalf("first start: %q %v", id, err)
	}
	again, err := loadNodeID(dir, "")
	if err != nil || again != id {
		t.Fatalf("restart: %q %v, want %q", again, err, id)
	}
	if _, err := loadNodeID(dir, "other"); err == nil || !strings.Contains(err.Error(), id) {
		t.Fatalf("a different --node-id on a directory that has one: %v", err)
	}
	if id, err := loadNodeID(t.TempDir(), "chosen-1"); err != nil || id != "chosen-1" {
		t.Fatalf("--node-id on a new directory: %q %v", id, err)
	}
	os.WriteFile(filepath.Join(dir, nodeIDFile), []byte("no/good\n"), 0o644)
	if _, err := loadNodeID(dir, ""); err == nil {
		t.Fatal("a damaged node-id file was accepted")
	}
}

// minioConfig is serve's object store configuration for a MinIO server,
// its bucket created, under a prefix of the test's own.
func minioConfig(t *testing.T, srv *miniotest.Server) objectStoreConfig {
	t.Helper()
	s3, err := objstore.ParseS3URL("s3://sediment-serve/" + strings.ReplaceAll(t.Name(), "/", "-"))
	if err != nil {
		t.Fatal(err)
	}
	s3.SetEndpointURL("http://" + srv.Endpoint)
	s3.PathStyle = true
	s3.AccessKey, s3.SecretKey = miniotest.AccessKey, miniotest.SecretKey
	s3.MaxRetries = 1
	st, err := objstore.OpenS3(s3)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.CreateBucket(context.Background()); err != nil {
		t.Fatal(err)
	}
	return objectStoreConfig{S3: s3, Role: roleAll, CacheSize: 64 << 20, GCInterval: time.Hour}
}

// storeRows is what the manifest of source lists in the store.
func storeRows(t *testing.T, cfg objectStoreConfig, source string) (rows int64, segs int) {
	t.Helper()
	st, err := objstore.OpenS3(cfg.S3)
	if err != nil {
		t.Fatal(err)
	}
	m, _, err := objstore.ReadManifest(context.Background(), st, source)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range m.Segments {
		rows += e.Rows
	}
	return rows, len(m.Segments)
}

// ingestN sends n events to source name, one request each ten.
func (r *running) ingestN(name string, from, n int) {
	r.t.Helper()
	for i := from; i < from+n; i += 10 {
		var b strings.Builder
		b.WriteString("[")
		for j := i; j < min(i+10, from+n); j++ {
			if j > i {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, `{"message":"event %d"}`, j)
		}
		b.WriteString("]")
		r.mustDo("POST", "/api/logs?source_name="+name, "k", b.String(), 200)
	}
}

// flushAll writes every source's head out as a segment.
func (r *running) flushAll() {
	r.t.Helper()
	for _, sh := range r.a.eng.Shards() {
		if err := sh.Flush(); err != nil {
			r.t.Fatal(err)
		}
	}
}

// drain waits until everything flushed so far is published.
func (r *running) drain() {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := r.a.objs.rem.Drain(ctx); err != nil {
		r.t.Fatal(err)
	}
}

// TestServeObjectStoreMinIO: `sediment serve --object-store` against
// MinIO: flushed segments are published (their manifest lists every
// acknowledged event), /metrics counts it; with the store away ingest is
// still acknowledged, /ready says degraded and the failures are counted;
// a shutdown with the store away leaves the rest unpublished, and the
// next start on the same data directory publishes it, once.
func TestServeObjectStoreMinIO(t *testing.T) {
	srv := miniotest.Start(t)
	dir := t.TempDir()
	store := minioConfig(t, srv)
	r := start(t, serveConfig{DataDir: dir, PrivateToken: "k", Store: store})
	created := r.mustDo("POST", "/api/sources", "k", `{"name":"app"}`, 201)
	var src struct{ Token string }
	json.Unmarshal([]byte(created), &src)
	r.ingestN("app", 0, 100)
	r.flushAll()
	r.drain()
	if rows, segs := storeRows(t, store, src.Token); rows != 100 || segs != 1 {
		t.Fatalf("store lists %d rows in %d segments, want 100 in 1", rows, segs)
	}
	metrics := r.mustDo("GET", "/metrics", "k", "", 200)
	for _, want := range []string{"sediment_object_store_segments_uploaded_total 1", "sediment_object_store_publish_pending 0",
		"sediment_object_store_publish_failing 0", "sediment_object_store_cache_limit_bytes 3.3554432e+07", "sediment_object_store_local_segment_limit_bytes 3.3554432e+07"} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	if b := r.mustDo("GET", "/ready", "", "", 200); b != `{"status":"ok"}` {
		t.Fatalf("/ready with the store up: %s", b)
	}
	checkObjectStoreMetricsDocumented(t, metrics)
	nodeID, _ := os.ReadFile(filepath.Join(dir, nodeIDFile))

	// The store goes away: ingest is acknowledged all the same.
	srv.Stop()
	r.ingestN("app", 100, 100)
	r.flushAll()
	deadline := time.Now().Add(time.Minute)
	for {
		b := r.mustDo("GET", "/ready", "", "", 200)
		if strings.Contains(b, `"object_store_publish_failing"`) && strings.Contains(b, `"degraded"`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("/ready with the store away: %s", b)
		}
		time.Sleep(20 * time.Millisecond)
	}
	metrics = r.mustDo("GET", "/metrics", "k", "", 200)
	if !strings.Contains(metrics, "sediment_object_store_publish_failing 1") || !strings.Contains(metrics, "sediment_object_store_publish_pending 1") {
		t.Errorf("/metrics with the store away:\n%s", grepLines(metrics, "sediment_object_store_publish"))
	}
	r.ingestN("app", 200, 50) // in the head: flushed by the shutdown
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	err := r.a.shutdown(ctx)
	cancel()
	r.a = nil
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	if rows, _ := storeRows(t, store, src.Token); rows != 100 {
		t.Fatalf("before the restart the store lists %d rows, want the 100 published", rows)
	}

	// The same data directory resumes: the rest is published, once.
	r = start(t, serveConfig{DataDir: dir, PrivateToken: "k", Store: store})
	r.drain()
	if rows, segs := storeRows(t, store, src.Token); rows != 250 || segs != 3 {
		t.Fatalf("after the restart the store lists %d rows in %d segments, want 250 in 3", rows, segs)
	}
	if again, _ := os.ReadFile(filepath.Join(dir, nodeIDFile)); string(again) != string(nodeID) {
		t.Fatalf("node id changed across restarts: %q -> %q", nodeID, again)
	}
	if b := r.mustDo("GET", "/ready", "", "", 200); b != `{"status":"ok"}` {
		t.Fatalf("/ready after the store came back: %s", b)
	}
}

// grepLines returns the lines of s that contain sub.
func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// sqlCount runs `select count(*) as n from <source>` on r and returns n
// and the answer's warnings.
func (r *running) sqlCount(source string) (int, []string) {
	r.t.Helper()
	body := r.mustDo("GET", "/api/query?sql="+url.QueryEscape("select count(*) as n from `"+source+"`"), "k", "", 200)
	var res struct {
		Result []struct {
			N int `json:"n"`
		} `json:"result"`
		Warnings []string `json:"warnings"`
	}
	if err := json.Unmarshal([]byte(body), &res); err != nil || len(res.Result) != 1 {
		r.t.Fatalf("query answer %s: %v", body, err)
	}
	return res.Result[0].N, res.Warnings
}

// TestClusterMinIO: two ingest nodes take events of one source while a
// query node, with no data of its own, answers from the store and from
// what the ingest nodes have not published, every acknowledged event
// once; it refuses events; an ingest node that does not answer makes the
// answer partial, with a warning naming it; once that node has published
// everything, answers are complete again without it.
func TestClusterMinIO(t *testing.T) {
	srv := miniotest.Start(t)
	store := minioConfig(t, srv)
	store.ClusterKey = "cluster-secret"
	dirA, dirB, dirQ := t.TempDir(), t.TempDir(), t.TempDir()
	ingestCfg := store
	ingestCfg.Role = roleIngest
	a := startWith(t, serveConfig{DataDir: dirA, PrivateToken: "k", Store: ingestCfg}, productionDeps())
	a.mustDo("POST", "/api/sources", "k", `{"name":"app"}`, 201)
	// b and q find the source in the shared catalog.
	b := startWith(t, serveConfig{DataDir: dirB, PrivateToken: "k", Store: ingestCfg}, productionDeps())
	queryCfg := store
	queryCfg.Role = roleQuery
	queryCfg.IngestNodes = []string{a.base, b.base}
	q := startWith(t, serveConfig{DataDir: dirQ, PrivateToken: "k", Store: queryCfg}, productionDeps())

	a.ingestN("app", 0, 100)
	a.flushAll()
	a.drain()
	a.ingestN("app", 100, 30) // a's head
	b.ingestN("app", 0, 60)
	b.flushAll() // published in the background, or not yet: either way counted once
	b.ingestN("app", 60, 15)
	if n, w := q.sqlCount("app"); n != 205 || len(w) != 0 {
		t.Fatalf("query node: %d events, warnings %v; want 205", n, w)
	}
	// The query node takes no events: a misdirected client retries.
	if code, body := q.do("POST", "/api/logs?source_name=app", "k", `{"message":"x"}`); code != 503 || !strings.Contains(body, "query") {
		t.Fatalf("ingest on the query node: %d %s", code, body)
	}
	// Without the cluster key the internal route refuses.
	if code, _ := a.do("POST", "/internal/v1/unsealed", "k", `{"source":"x","listed":[]}`); code != 401 {
		t.Fatalf("internal route without the cluster key: %d", code)
	}

	// b stops answering with events it has not published (its HTTP
	// server stops, its engine holds them): the answer is partial.
	b.drain()
	b.ingestN("app", 75, 5) // in b's head only
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := b.a.srv.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	n, w := q.sqlCount("app")
	if n != 190 || len(w) != 1 || !strings.Contains(w[0], b.base) {
		t.Fatalf("with b away: %d events (want the 190 reachable: a's 130, b's 60 published), warnings %v", n, w)
	}
	// b shuts down, publishing its head: complete again, even without b.
	if err := b.stop(); err != nil {
		t.Fatal(err)
	}
	n, w = q.sqlCount("app")
	if n != 210 || len(w) != 1 {
		t.Fatalf("after b published: %d events (want 210), warnings %v", n, w)
	}
	metrics := q.mustDo("GET", "/metrics", "k", "", 200)
	if !strings.Contains(metrics, "sediment_object_store_query_ingest_node_failures_total 2") {
		t.Errorf("query node metrics:\n%s", grepLines(metrics, "sediment_object_store_query"))
	}
	// A change on one node reaches the others through the store.
	q.mustDo("POST", "/api/endpoints", "k", `{"name":"counts","query":"select count(*) as n from `+"`app`"+`"}`, 201)
	if err := a.a.cat.SyncShared(); err != nil {
		t.Fatal(err)
	}
	if a.a.cat.EndpointByName("counts") == nil {
		t.Fatal("an endpoint created on the query node did not reach an ingest node")
	}
	// Each ingest node's segments carry its own node id.
	st, _ := objstore.OpenS3(store.S3)
	src := a.a.cat.Sources()[0].Token
	m, _, err := objstore.ReadManifest(context.Background(), st, src)
	if err != nil {
		t.Fatal(err)
	}
	nodes := map[string]bool{}
	for _, e := range m.Segments {
		nodes[e.Node()] = true
	}
	if len(nodes) != 2 {
		t.Fatalf("manifest lists segments of %d nodes, want 2: %v", len(nodes), m.Segments)
	}
}

// checkObjectStoreMetricsDocumented: every sediment_object_store_ family
// a scrape has is in docs/metrics.md's list, and the list names no other.
func checkObjectStoreMetricsDocumented(t *testing.T, scrape string) {
	t.Helper()
	doc, err := os.ReadFile("../../docs/metrics.md")
	if err != nil {
		t.Fatal(err)
	}
	documented := map[string]bool{}
	for _, m := range regexp.MustCompile("(?m)^- `(sediment_object_store_[a-z_]+)` \\((counter|gauge)\\)").FindAllStringSubmatch(string(doc), -1) {
		documented[m[1]] = true
	}
	served := map[string]bool{}
	for _, m := range regexp.MustCompile("(?m)^# TYPE (sediment_object_store_[a-z_]+) ").FindAllStringSubmatch(scrape, -1) {
		served[m[1]] = true
		if !documented[m[1]] {
			t.Errorf("%s is not in docs/metrics.md", m[1])
		}
	}
	for name := range documented {
		if !served[name] && !strings.Contains(name, "_query_") {
			t.Errorf("docs/metrics.md lists %s, which an ingest node does not serve", name)
		}
	}
	if len(served) == 0 {
		t.Error("no sediment_object_store_ series served")
	}
}

// TestInternalRouteNames: the internal route httpapi serves is the one
// remote's query nodes call, with the same key header.
func TestInternalRouteNames(t *testing.T) {
	if httpapi.UnsealedPath != remote.UnsealedPath || httpapi.ClusterKeyHeader != remote.ClusterKeyHeader {
		t.Fatalf("httpapi serves %s (%s), remote calls %s (%s)", httpapi.UnsealedPath, httpapi.ClusterKeyHeader, remote.UnsealedPath, remote.ClusterKeyHeader)
	}
}
