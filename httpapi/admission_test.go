package httpapi

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	json "github.com/goccy/go-json"

	"github.com/sediment/sediment/query/endpoints"
)

// The endpoints service answers cached results without a query slot.
var _ CachedRunner = (*endpoints.Service)(nil)

// send is ts.do for any goroutine: it returns the error instead of failing
// the test.
func (ts *testServer) send(method, path string, body []byte, headers ...string) (response, error) {
	var rd io.Reader
	if body != nil {
		rd = strings.NewReader(string(body))
	}
	req, err := http.NewRequest(method, ts.base+path, rd)
	if err != nil {
		return response{}, err
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := ts.client.Do(req)
	if err != nil {
		return response{}, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	return response{status: res.StatusCode, header: res.Header, body: string(b)}, err
}

// waitFor polls cond until it holds, failing the test after 10 s. It
// waits for the server to reach a state; it asserts nothing about time.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// expect429 checks a query route's refusal: 429, a Retry-After of whole
// seconds, and Logflare's error body shape {"error": "..."}.
func expect429(t *testing.T, r response, retryAfter string) {
	t.Helper()
	var body struct {
		Error string `json:"error"`
	}
	if r.status != 429 || r.header.Get("Retry-After") != retryAfter || json.Unmarshal([]byte(r.body), &body) != nil ||
		!strings.Contains(body.Error, "Too many queries") {
		t.Fatalf("got %d retry-after %q %s, want 429 retry-after %s {\"error\":\"Too many queries...\"}",
			r.status, r.header.Get("Retry-After"), r.body, retryAfter)
	}
}

// TestQueryAdmission: with every query slot taken and the queue full,
// query routes (endpoint, ad-hoc SQL, LQL search) answer 429 with
// Retry-After at once, while /health, /ready, ingest and a cached endpoint
// answer normally; the queued queries run once slots free.
//
// The queries block in the runner until released, so the test does not
// depend on how fast anything runs: what it shows is structural. Requests
// that do not run queries never touch the gate, and at most 2 + 2
// connections are held by queries however many arrive.
func TestQueryAdmission(t *testing.T) {
	ts := startServer(t, serverConfig{opts: Options{MaxConcurrentQueries: 2, MaxQueuedQueries: 2, QueryQueueWait: time.Minute}})
	ts.runner.block = make(chan struct{})
	ts.runner.started = make(chan struct{}, 8)
	ts.runner.cached = map[string][]byte{"usage.api-counts": []byte(`{"result":[{"cached":true}]}`)}
	auth := withKey(privKey)

	// Two queries run, two wait.
	answers := make(chan response, 4)
	errs := make(chan error, 4)
	for i := range 4 {
		path := "/api/endpoints/query/logs.all?n=" + fmt.Sprint(i)
		if i%2 == 1 {
			path = "/api/query?sql=select+" + fmt.Sprint(i)
		}
		go func() {
			r, err := ts.send("GET", path, nil, auth...)
			if err != nil {
				errs <- err
				return
			}
			answers <- r
		}()
	}
	<-ts.runner.started
	<-ts.runner.started
	waitFor(t, "two queued queries", func() bool { return ts.srv.queries.queued.Load() == 2 })

	// Every further query is refused at once, whatever its route.
	expect429(t, ts.do("GET", "/api/endpoints/query/logs.all?more=1", nil, auth...), "30")
	expect429(t, ts.do("GET", "/api/query?sql=select+42", nil, auth...), "30")
	expect429(t, ts.do("GET", "/api/sources/postgres.logs/search?lql=error", nil, auth...), "30")
	expect429(t, ts.do("POST", "/api/endpoints/query/logs.all", []byte(`{"x":"1"}`), withKey(privKey, jsonCT...)...), "30")

	// What runs no query is answered as usual.
	ts.do("GET", "/health", nil).expect(t, 200, `{"status":"ok"}`)
	ts.do("GET", "/ready", nil).expect(t, 200, `{"status":"ok"}`)
	ts.do("POST", "/api/logs?source_name=postgres.logs", []byte(`{"message":"during a query flood"}`), withKey(pubKey, jsonCT...)...).expect(t, 200, logged)
	ts.do("GET", "/api/endpoints/query/usage.api-counts", nil, auth...).expect(t, 200, `{"result":[{"cached":true}]}`)
	ts.do("GET", "/api/sources", nil, auth...).expect(t, 200, "")
	if ts.srv.queries.running() != 2 || ts.srv.queries.queued.Load() != 2 {
		t.Fatalf("%d running, %d queued", ts.srv.queries.running(), ts.srv.queries.queued.Load())
	}

	// Released, the running and the queued queries all answer.
	close(ts.runner.block)
	for range 4 {
		select {
		case r := <-answers:
			r.expect(t, 200, "")
		case err := <-errs:
			t.Fatal(err)
		}
	}
	if n := ts.runner.count(); n != 4 {
		t.Fatalf("runner ran %d queries, want the 4 admitted", n)
	}
	if ts.srv.queries.running() != 0 || ts.srv.queries.queued.Load() != 0 {
		t.Fatal("slots not released")
	}
}

// TestQueryAdmissionLookups: the web explorer's event lookup and a
// full=true search run queries, so they take query slots like every other
// query route: with the only slot taken and no queue they answer 429 with
// Retry-After (before reading anything), and once it frees they answer.
func TestQueryAdmissionLookups(t *testing.T) {
	ts := startServer(t, serverConfig{opts: Options{MaxConcurrentQueries: 1, MaxQueuedQueries: -1, QueryQueueWait: time.Minute}})
	ts.do("POST", "/api/logs?source_name=postgres.logs", []byte(`{"message":"looked up"}`), withKey(pubKey, jsonCT...)...).expect(t, 200, logged)
	stored := ts.events("postgres.logs")[0]
	lookup := fmt.Sprintf("/api/sources/postgres.logs/event?id=%s&timestamp=%d", stored["id"], int64(stored["timestamp"].(float64)))
	ts.runner.block = make(chan struct{})
	ts.runner.started = make(chan struct{}, 1)
	held := make(chan response, 1)
	go func() {
		r, _ := ts.send("GET", "/api/query?sql=select+1", nil, withKey(privKey)...)
		held <- r
	}()
	<-ts.runner.started

	full := "/api/sources/postgres.logs/search?full=true&lql=looked"
	expect429(t, ts.do("GET", lookup, nil, withKey(privKey)...), "30")
	expect429(t, ts.do("GET", full, nil, withKey(privKey)...), "30")
	expect429(t, ts.do("POST", "/api/sources/postgres.logs/search", []byte(`{"full":"true"}`), withKey(privKey, jsonCT...)...), "30")

	close(ts.runner.block)
	(<-held).expect(t, 200, "")
	waitFor(t, "the slot to be released", func() bool { return ts.srv.queries.running() == 0 })
	for _, path := range []string{lookup, full} {
		if r := ts.do("GET", path, nil, withKey(privKey)...); r.status != 200 || !strings.Contains(r.body, `"looked up"`) {
			t.Fatalf("%s: %d %s", path, r.status, r.body)
		}
	}
	if ts.srv.queries.running() != 0 {
		t.Fatal("slot not released")
	}
}

// TestQueryQueueWait: a query that waits longer than QueryQueueWait for
// a slot gets 429, and never runs.
func TestQueryQueueWait(t *testing.T) {
	ts := startServer(t, serverConfig{opts: Options{MaxConcurrentQueries: 1, QueryQueueWait: 300 * time.Millisecond}})
	ts.runner.block = make(chan struct{})
	ts.runner.started = make(chan struct{}, 2)
	done := make(chan response, 1)
	go func() {
		r, _ := ts.send("GET", "/api/query?sql=select+1", nil, withKey(privKey)...)
		done <- r
	}()
	<-ts.runner.started
	expect429(t, ts.do("GET", "/api/query?sql=select+2", nil, withKey(privKey)...), "1")
	close(ts.runner.block)
	(<-done).expect(t, 200, "")
	if n := ts.runner.count(); n != 1 {
		t.Fatalf("%d queries ran", n)
	}
}

// rawGet sends a GET on a new TCP connection and returns the connection,
// without reading the answer.
func rawGet(t *testing.T, ts *testServer, path, key string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", strings.TrimPrefix(ts.base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: x\r\nX-API-KEY: %s\r\n\r\n", path, key)
	return c
}

// TestQueryCancelledWhenClientGoes: a client that closes its connection
// while its query runs has the query's context cancelled (not left to run
// to the 65 s timeout), and its slot is freed; a client that leaves while
// queued leaves the queue.
func TestQueryCancelledWhenClientGoes(t *testing.T) {
	ts := startServer(t, serverConfig{opts: Options{MaxConcurrentQueries: 1, QueryQueueWait: time.Minute}})
	ts.runner.block = make(chan struct{})
	ts.runner.started = make(chan struct{}, 2)
	ts.runner.ended = make(chan error, 2)

	running := rawGet(t, ts, "/api/query?sql=select+1", privKey)
	<-ts.runner.started
	queued := rawGet(t, ts, "/api/endpoints/query/logs.all", privKey)
	waitFor(t, "a queued query", func() bool { return ts.srv.queries.queued.Load() == 1 })

	queued.Close()
	waitFor(t, "the queue to empty", func() bool { return ts.srv.queries.queued.Load() == 0 })
	running.Close()
	select {
	case err := <-ts.runner.ended:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("query context ended with %v, want context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the query of a client that went away was not cancelled")
	}
	waitFor(t, "the slot to be released", func() bool { return ts.srv.queries.running() == 0 })
	if n := ts.runner.count(); n != 1 {
		t.Fatalf("%d queries ran; the queued one must not have", n)
	}

	// A client that stays gets its answer (the watch does not misfire).
	close(ts.runner.block)
	c := rawGet(t, ts, "/api/query?sql=select+2", privKey)
	defer c.Close()
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	res, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("%v %v", res, err)
	}
}

// TestRealQueriesUnderAdmission: real GROUP BY queries through the SQL
// engine, many more at once than there are slots and queue places, while
// /health is polled: every query answers 200 with a result or 429 with
// Retry-After, and every /health answers 200.
func TestRealQueriesUnderAdmission(t *testing.T) {
	ts := startServer(t, serverConfig{service: &endpoints.Options{}, opts: Options{MaxConcurrentQueries: 2, MaxQueuedQueries: 2, QueryQueueWait: 2 * time.Second}})
	var batch strings.Builder
	batch.WriteString("[")
	for i := range 3000 {
		if i > 0 {
			batch.WriteString(",")
		}
		fmt.Fprintf(&batch, `{"message":"m%d","metadata":{"level":"l%d","n":%d}}`, i, i%7, i)
	}
	batch.WriteString("]")
	ts.do("POST", "/api/logs?source_name=postgres.logs", []byte(batch.String()), withKey(pubKey, jsonCT...)...).expect(t, 200, logged)

	sql := "/api/query?sql=" + strings.ReplaceAll("select m.level, count(*) as c, max(m.n) as hi from `postgres.logs` t cross join unnest(t.metadata) m group by m.level order by c desc", " ", "+")
	const n = 24
	var wg sync.WaitGroup
	results := make(chan response, n)
	failures := make(chan error, n+64)
	stop := make(chan struct{})
	healthDone := make(chan int)
	go func() {
		polls := 0
		for {
			select {
			case <-stop:
				healthDone <- polls
				return
			default:
			}
			r, err := ts.send("GET", "/health", nil)
			if err != nil || r.status != 200 {
				failures <- fmt.Errorf("/health: %d %v", r.status, err)
			}
			polls++
		}
	}()
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := ts.send("GET", sql, nil, withKey(privKey)...)
			if err != nil {
				failures <- err
				return
			}
			results <- r
		}()
	}
	wg.Wait()
	close(stop)
	if polls := <-healthDone; polls == 0 {
		t.Fatal("/health was never polled")
	}
	close(results)
	close(failures)
	for err := range failures {
		t.Error(err)
	}
	for r := range results {
		switch {
		case r.status == 200 && strings.HasPrefix(r.body, `{"result":[{"level":"l`):
		case r.status == 429 && r.header.Get("Retry-After") == "1":
		default:
			t.Errorf("query: %d %s", r.status, r.body)
		}
	}
}

// TestCachedEndpointSkipsAdmission: through the real endpoints service, a
// cached result answers while no query slot is free; a miss gets 429.
func TestCachedEndpointSkipsAdmission(t *testing.T) {
	ts := startServer(t, serverConfig{service: &endpoints.Options{DisableBackground: true}, opts: Options{MaxConcurrentQueries: 1, MaxQueuedQueries: -1}})
	r := ts.do("POST", "/api/endpoints", []byte(`{"name":"cached-one","cache_duration_seconds":600,"query":"select 1 as one"}`), withKey(privKey, jsonCT...)...)
	r.expect(t, 201, "")
	ts.do("GET", "/api/endpoints/query/cached-one", nil, withKey(privKey)...).expect(t, 200, `{"result":[{"one":1}]}`)

	release, err := ts.srv.queries.acquire(context.Background()) // the only slot
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	ts.do("GET", "/api/endpoints/query/cached-one", nil, withKey(privKey)...).expect(t, 200, `{"result":[{"one":1}]}`)
	expect429(t, ts.do("GET", "/api/endpoints/query/cached-one?other=param", nil, withKey(privKey)...), "5")
	if n := ts.service.Executions(); n != 1 {
		t.Fatalf("%d executions, want the first call's only", n)
	}
}
