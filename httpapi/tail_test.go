package httpapi

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	json "github.com/goccy/go-json"
)

// Live tail tests: real SSE clients on loopback, events ingested through
// /api/logs while they listen.

// sseFrame is one Server-Sent Events frame: an event with data, or a
// comment.
type sseFrame struct {
	event, data, comment string
}

// sseClient reads a tail's frames on a goroutine.
type sseClient struct {
	t      testing.TB
	res    *http.Response
	cancel context.CancelFunc
	frames chan sseFrame
}

// openTail opens a tail and checks it answers 200 with an event stream.
func (ts *testServer) openTail(source, key, lql string) *sseClient {
	ts.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, "GET", ts.base+"/api/sources/"+source+"/tail?lql="+url.QueryEscape(lql), nil)
	if err != nil {
		ts.t.Fatal(err)
	}
	req.Header.Set("x-api-key", key)
	client := &http.Client{Transport: &http.Transport{DisableCompression: true}}
	res, err := client.Do(req)
	if err != nil {
		cancel()
		ts.t.Fatal(err)
	}
	if res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		cancel()
		ts.t.Fatalf("tail: %d %s %s", res.StatusCode, res.Header.Get("Content-Type"), b)
	}
	c := &sseClient{t: ts.t, res: res, cancel: cancel, frames: make(chan sseFrame, 1024)}
	go c.read()
	ts.t.Cleanup(c.close)
	return c
}

func (c *sseClient) read() {
	defer close(c.frames)
	r := bufio.NewReader(c.res.Body)
	var f sseFrame
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return
		}
		line = strings.TrimSuffix(line, "\n")
		switch {
		case line == "":
			c.frames <- f
			f = sseFrame{}
		case strings.HasPrefix(line, ":"):
			f.comment = strings.TrimSpace(line[1:])
		case strings.HasPrefix(line, "event: "):
			f.event = line[len("event: "):]
		case strings.HasPrefix(line, "data: "):
			f.data = line[len("data: "):]
		}
	}
}

func (c *sseClient) close() {
	c.cancel()
	c.res.Body.Close()
}

// next returns the next frame, skipping keep-alives unless keepAlives.
func (c *sseClient) next(keepAlives bool) sseFrame {
	c.t.Helper()
	for {
		select {
		case f, ok := <-c.frames:
			if !ok {
				c.t.Fatal("tail ended")
			}
			if f.comment == "keep-alive" && !keepAlives {
				continue
			}
			return f
		case <-time.After(10 * time.Second):
			c.t.Fatal("no frame from the tail")
		}
	}
}

// ended waits for the stream to end.
func (c *sseClient) ended() bool {
	deadline := time.After(10 * time.Second)
	for {
		select {
		case _, ok := <-c.frames:
			if !ok {
				return true
			}
		case <-deadline:
			return false
		}
	}
}

// logEvent decodes a log frame's event.
func logEvent(t testing.TB, f sseFrame) map[string]any {
	t.Helper()
	if f.event != "log" {
		t.Fatalf("frame %+v, want a log event", f)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(f.data), &m); err != nil {
		t.Fatalf("data %q: %v", f.data, err)
	}
	return m
}

// waitTails waits until n tails are open on the server.
func (ts *testServer) waitTails(n int) {
	ts.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for ts.srv.tails.open() != n {
		if time.Now().After(deadline) {
			ts.t.Fatalf("%d tails open, want %d", ts.srv.tails.open(), n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func tailServer(t *testing.T, opts Options) *testServer {
	opts.Now = func() time.Time { return studioNow }
	return startServer(t, serverConfig{opts: opts})
}

// TestTailDeliversMatchingEvents: a client receives the events ingested
// after it connected that match its filter, and only those, in order.
func TestTailDeliversMatchingEvents(t *testing.T) {
	ts := tailServer(t, Options{})
	// Before the tail: not delivered.
	ts.ingestEdge(edgeBatch(7, searchStart, "before"))
	src := ts.source("cloudflare.logs.prod")
	for _, ref := range []string{"cloudflare.logs.prod", src.Token} {
		t.Run(ref, func(t *testing.T) {
			c := ts.openTail(ref, queryKey, "m.response.status_code:500 -project:skipped s:project c:count(*)")
			if f := c.next(false); f.comment != `tail of "cloudflare.logs.prod"` {
				t.Fatalf("first frame %+v", f)
			}
			ts.ingestEdge(edgeBatch(14, searchStart, "first")) // 500s at 3 and 10
			ts.ingestEdge(edgeBatch(14, searchStart, "skipped"))
			ts.ingestEdge(edgeBatch(4, searchStart.Add(time.Hour/2), "last")) // 500 at 3
			for _, want := range []struct {
				project string
				minute  int
			}{{"first", 3}, {"first", 10}, {"last", 33}} {
				ev := logEvent(t, c.next(false))
				ts := float64(searchStart.Add(time.Duration(want.minute) * time.Minute).UnixMicro())
				if ev["project"] != want.project || ev["timestamp"] != ts || at(ev, "metadata.response.status_code") != float64(500) ||
					!strings.Contains(ev["event_message"].(string), `" 500 44`) || ev["id"] == "" {
					t.Fatalf("event %v, want project %s at minute %d", ev, want.project, want.minute)
				}
			}
		})
	}
}

// TestTailKeepAliveAndDisconnect: an idle tail sends keep-alive comments,
// and a client that goes away frees its tail.
func TestTailKeepAliveAndDisconnect(t *testing.T) {
	ts := tailServer(t, Options{TailKeepAlive: 20 * time.Millisecond})
	c := ts.openTail("cloudflare.logs.prod", privKey, "")
	c.next(false)
	if f := c.next(true); f.comment != "keep-alive" {
		t.Fatalf("frame %+v, want a keep-alive", f)
	}
	ts.waitTails(1)
	c.close()
	ts.waitTails(0)
	// Ingest still works, and a new tail sees the new events.
	c = ts.openTail("cloudflare.logs.prod", privKey, "")
	c.next(false)
	ts.ingestEdge(edgeBatch(1, searchStart, "x"))
	if ev := logEvent(t, c.next(false)); ev["project"] != "x" {
		t.Fatalf("event %v", ev)
	}
}

// stalledTail opens a tail on a raw connection that does not read until
// the test does: once the socket buffers between it and the server are
// full, the server's writes block. (A small SO_RCVBUF would fill them
// sooner, but on loopback it makes the server wait on TCP's zero-window
// probes, seconds apart, once the client reads again.)
func (ts *testServer) stalledTail() net.Conn {
	ts.t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(ts.base, "http://"))
	if err != nil {
		ts.t.Fatal(err)
	}
	ts.t.Cleanup(func() { conn.Close() })
	fmt.Fprintf(conn, "GET /api/sources/cloudflare.logs.prod/tail HTTP/1.1\r\nHost: test\r\nX-API-KEY: %s\r\n\r\n", privKey)
	return conn
}

// bigBatch is n events whose messages are size bytes long.
func bigBatch(n, size int, project string) []byte {
	var b bytes.Buffer
	b.WriteString("[")
	msg := strings.Repeat("x", size)
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `{"event_message":"%d %s","project":%q,"timestamp":%q}`, i, msg, project, searchStart.Format(time.RFC3339))
	}
	b.WriteString("]")
	return b.Bytes()
}

// TestTailStalledClient: a client that stops reading does not hold up
// ingestion; its tail drops what it cannot buffer, and once the client
// reads again it is told how many events it lost.
func TestTailStalledClient(t *testing.T) {
	ts := tailServer(t, Options{TailBuffer: 1, TailKeepAlive: 50 * time.Millisecond})
	conn := ts.stalledTail()
	ts.waitTails(1)
	// 24 MB of events, far more than the socket buffers between the
	// server and the stalled client hold. Every request is answered: the
	// tail never blocks the ingest path.
	for i := 0; i < 48; i++ {
		ts.ingestEdge(bigBatch(16, 32<<10, "big"))
	}
	conn.SetReadDeadline(time.Now().Add(20 * time.Second))
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("tail response: %v %v", res, err)
	}
	// (Closing res.Body would read the endless stream to its end.)
	defer conn.Close()
	r := bufio.NewReaderSize(res.Body, 64<<10)
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("no dropped notice before %v", err)
		}
		if line == "event: dropped\n" {
			data, _ := r.ReadString('\n')
			var d struct{ Count int64 }
			if err := json.Unmarshal([]byte(strings.TrimPrefix(data, "data: ")), &d); err != nil || d.Count <= 0 {
				t.Fatalf("dropped data %q", data)
			}
			return
		}
	}
}

// TestTailShutdown: shutdown ends open tails promptly, a stalled one
// included (ts.stop fails the test if Shutdown runs into its deadline).
func TestTailShutdown(t *testing.T) {
	ts := tailServer(t, Options{TailBuffer: 1})
	c := ts.openTail("cloudflare.logs.prod", privKey, "")
	c.next(false)
	conn := ts.stalledTail()
	ts.waitTails(2)
	for i := 0; i < 24; i++ {
		ts.ingestEdge(bigBatch(16, 32<<10, "big"))
	}
	ts.stop()
	if !c.ended() {
		t.Fatal("the tail did not end on shutdown")
	}
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.Copy(io.Discard, conn); err != nil && !strings.Contains(err.Error(), "reset") {
		t.Fatalf("stalled connection: %v", err)
	}
	if n := ts.srv.tails.open(); n != 0 {
		t.Fatalf("%d tails still open", n)
	}
}

// TestTailLimit: past MaxTails, 429; a closed tail makes room.
func TestTailLimit(t *testing.T) {
	ts := tailServer(t, Options{MaxTails: 2, TailKeepAlive: 20 * time.Millisecond})
	a := ts.openTail("cloudflare.logs.prod", privKey, "")
	ts.openTail("cloudflare.logs.prod", privKey, "")
	r := ts.do("GET", "/api/sources/cloudflare.logs.prod/tail", nil, "x-api-key", privKey)
	if r.status != 429 || !strings.Contains(r.body, "Too many live tails") || r.header.Get("Retry-After") == "" {
		t.Fatalf("third tail: %d %s", r.status, r.body)
	}
	a.next(false)
	a.close()
	ts.waitTails(1)
	ts.openTail("cloudflare.logs.prod", privKey, "").next(false)
}

// TestTailErrors: auth failures and unknown sources are 401, bad LQL 400.
func TestTailErrors(t *testing.T) {
	ts := tailServer(t, Options{})
	for _, key := range []string{"", pubKey, ingestKey2} {
		ts.do("GET", "/api/sources/cloudflare.logs.prod/tail", nil, "x-api-key", key).expect(t, 401, `{"error":"Unauthorized"}`)
	}
	ts.do("GET", "/api/sources/nope/tail", nil, "x-api-key", privKey).expect(t, 401, `{"error":"Unauthorized"}`)
	ts.do("GET", "/api/sources/cloudflare.logs.prod/tail?lql=%22open", nil, "x-api-key", privKey).
		expect(t, 400, "{\"error\":\"Error while parsing quoted string: missing closing `\\\"` in \\\"open\"}")
	ts.do("POST", "/api/sources/cloudflare.logs.prod/tail", nil, "x-api-key", privKey).expect(t, 404, `{"error":"Not Found"}`)
	if n := ts.srv.tails.open(); n != 0 {
		t.Fatalf("%d tails open after refusals", n)
	}
}
