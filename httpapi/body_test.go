package httpapi

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// dialServer opens a TCP connection to the test server.
func dialServer(t testing.TB, ts *testServer) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", strings.TrimPrefix(ts.base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// readResponse reads one HTTP response from c, waiting at most 10 s.
func readResponse(t testing.TB, c net.Conn, br *bufio.Reader) (*http.Response, string) {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	res, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("no response: %v", err)
	}
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res, string(b)
}

// expectClosed fails unless the server closes c (after what was read).
func expectClosed(t testing.TB, c net.Conn, br *bufio.Reader) {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	if n, err := io.Copy(io.Discard, br); err != nil || n != 0 {
		t.Fatalf("connection not closed cleanly after the answer: %d more bytes, %v", n, err)
	}
}

const bigBody = 12_000_000

// TestUnauthenticatedBodyNotRead: a request without a valid key is
// answered 401 from its headers, before its body is sent, and the
// connection is closed; many such requests with 12 MB bodies leave the
// server's allocations far below the bytes sent.
func TestUnauthenticatedBodyNotRead(t *testing.T) {
	ts := startServer(t, serverConfig{})
	head := func(key string, expect bool) string {
		h := "POST /api/logs?source_name=postgres.logs HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n" +
			fmt.Sprintf("Content-Length: %d\r\n", bigBody)
		if key != "" {
			h += "X-API-KEY: " + key + "\r\n"
		}
		if expect {
			h += "Expect: 100-continue\r\n"
		}
		return h + "\r\n"
	}
	body := bytes.Repeat([]byte("x"), bigBody)

	t.Run("expect 100-continue", func(t *testing.T) {
		for _, key := range []string{"", "wrong-key", queryKey} {
			c := dialServer(t, ts)
			br := bufio.NewReader(c)
			io.WriteString(c, head(key, true))
			res, got := readResponse(t, c, br)
			if res.StatusCode != 401 || got != unauthorized || !res.Close {
				t.Fatalf("key %q: %d close=%v %s", key, res.StatusCode, res.Close, got)
			}
			expectClosed(t, c, br)
		}
		// A good key gets 100 Continue, then its answer.
		c := dialServer(t, ts)
		br := bufio.NewReader(c)
		small := `{"message":"after continue"}`
		fmt.Fprintf(c, "POST /api/logs?source_name=postgres.logs HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\nX-API-KEY: %s\r\nExpect: 100-continue\r\n\r\n", len(small), pubKey)
		_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
		line, err := br.ReadString('\n')
		if err != nil || !strings.HasPrefix(line, "HTTP/1.1 100") {
			t.Fatalf("no 100 Continue: %q %v", line, err)
		}
		br.ReadString('\n') // the blank line after it
		io.WriteString(c, small)
		if res, got := readResponse(t, c, br); res.StatusCode != 200 || got != logged {
			t.Fatalf("%d %s", res.StatusCode, got)
		}
	})

	t.Run("many 12 MB bodies", func(t *testing.T) {
		const conns = 16
		runtime.GC()
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		var wg sync.WaitGroup
		errs := make(chan error, conns)
		for range conns {
			c := dialServer(t, ts)
			wg.Add(1)
			go func() {
				defer wg.Done()
				br := bufio.NewReader(c)
				// The headers and the first 16 KiB: the answer must come
				// now, while the client still holds the rest of the body.
				io.WriteString(c, head("", false))
				c.Write(body[:16<<10])
				_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
				res, err := http.ReadResponse(br, nil)
				if err != nil {
					errs <- fmt.Errorf("no answer before the body was sent: %v", err)
					return
				}
				got, _ := io.ReadAll(res.Body)
				if res.StatusCode != 401 || string(got) != unauthorized || !res.Close {
					errs <- fmt.Errorf("%d close=%v %s", res.StatusCode, res.Close, got)
				}
				// The client sends the rest anyway; the server discards it
				// (or resets the connection) without holding it.
				c.Write(body[16<<10:])
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		var after runtime.MemStats
		runtime.ReadMemStats(&after)
		sent := uint64(conns * bigBody)
		t.Logf("allocated %d KB", (after.TotalAlloc-before.TotalAlloc)>>10)
		if grew := after.TotalAlloc - before.TotalAlloc; grew > sent/16 {
			t.Fatalf("allocated %d MB while %d MB of unauthenticated bodies were sent", grew>>20, sent>>20)
		}
	})

	t.Run("client sending the whole body at once", func(t *testing.T) {
		// A client that writes its whole body before reading (most do)
		// still reads its 401, not a connection reset: the server
		// discards what it sends for a while before closing.
		var wg sync.WaitGroup
		errs := make(chan error, 4)
		for range 4 {
			c := dialServer(t, ts)
			wg.Add(1)
			go func() {
				defer wg.Done()
				go func() {
					io.WriteString(c, head("wrong-key", false))
					c.Write(body)
				}()
				_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
				res, err := http.ReadResponse(bufio.NewReader(c), nil)
				if err != nil {
					errs <- err
					return
				}
				got, _ := io.ReadAll(res.Body)
				if res.StatusCode != 401 || string(got) != unauthorized {
					errs <- fmt.Errorf("%d %s", res.StatusCode, got)
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
	})

	// The source named in the URL is checked from the headers too.
	c := dialServer(t, ts)
	br := bufio.NewReader(c)
	fmt.Fprintf(c, "POST /api/logs?source_name=no.such.source HTTP/1.1\r\nHost: x\r\nX-API-KEY: %s\r\nContent-Length: %d\r\n\r\n{", pubKey, bigBody)
	if res, got := readResponse(t, c, br); res.StatusCode != 401 || got != unauthorized {
		t.Fatalf("unknown source: %d %s", res.StatusCode, got)
	}
	expectClosed(t, c, br)
	if n := len(ts.events("postgres.logs")); n != 1 {
		t.Fatalf("%d events stored, want the one sent after 100 Continue", n)
	}
}

// TestInflightBodyBudget: request bodies being read count against
// MaxInflightBodyBytes; a request that would pass it gets 429 with
// Retry-After before its body is read, one that fits is served, and the
// bytes are given back when requests end.
func TestInflightBodyBudget(t *testing.T) {
	const budget = 1 << 20
	ts := startServer(t, serverConfig{opts: Options{MaxInflightBodyBytes: budget}})
	path := "/api/logs?source_name=postgres.logs"
	batch := func(n int) []byte { // a JSON batch of about n bytes
		msg := strings.Repeat("a", n-40)
		return []byte(`[{"message":"` + msg + `"}]`)
	}

	// A slow client: 800 KB declared, 100 KB sent, the rest held back.
	slow := batch(800_000)
	c := dialServer(t, ts)
	fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: x\r\nX-API-KEY: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", path, pubKey, len(slow))
	c.Write(slow[:100_000])
	waitFor(t, "the slow body to be reserved", func() bool { return ts.srv.bodies.used.Load() == int64(len(slow)) })

	r := ts.do("POST", path, batch(400_000), withKey(pubKey, jsonCT...)...)
	r.expect(t, 429, `{"error":"Buffer Full: Too Many Requests"}`)
	if r.header.Get("Retry-After") != "1" {
		t.Fatalf("retry-after %q", r.header.Get("Retry-After"))
	}
	// Counted for the source the URL names, with its reason.
	if n := ts.srv.Stats().Sources[ts.source("postgres.logs").Token].Rejected[RejectRequestBodies]; n != 1 {
		t.Fatalf("%d requests counted as rejected for request_bodies, want 1", n)
	}
	ts.do("POST", path, batch(100_000), withKey(pubKey, jsonCT...)...).expect(t, 200, logged)

	c.Write(slow[100_000:])
	br := bufio.NewReader(c)
	if res, got := readResponse(t, c, br); res.StatusCode != 200 || got != logged {
		t.Fatalf("slow request: %d %s", res.StatusCode, got)
	}
	waitFor(t, "the budget to be given back", func() bool { return ts.srv.bodies.used.Load() == 0 })
	if n := len(ts.events("postgres.logs")); n != 2 {
		t.Fatalf("%d events, want 2", n)
	}

	// A body larger than the whole budget is served when it is alone.
	ts.do("POST", path, batch(budget+100_000), withKey(pubKey, jsonCT...)...).expect(t, 200, logged)
}

// TestChunkedBodyLimits: a chunked body (no Content-Length) is cut at
// MaxBodyBytes with 413, and is read normally under it.
func TestChunkedBodyLimits(t *testing.T) {
	ts := startServer(t, serverConfig{opts: Options{MaxBodyBytes: 64 << 10}})
	send := func(body string) (*http.Response, string) {
		c := dialServer(t, ts)
		br := bufio.NewReader(c)
		fmt.Fprintf(c, "POST /api/logs?source_name=postgres.logs HTTP/1.1\r\nHost: x\r\nX-API-KEY: %s\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n", pubKey)
		for len(body) > 0 {
			n := min(len(body), 10_000)
			fmt.Fprintf(c, "%x\r\n%s\r\n", n, body[:n])
			body = body[n:]
		}
		io.WriteString(c, "0\r\n\r\n")
		return readResponse(t, c, br)
	}
	if res, got := send(`[{"message":"` + strings.Repeat("b", 70<<10) + `"}]`); res.StatusCode != 413 || !strings.Contains(got, "65536") {
		t.Fatalf("over the limit: %d %s", res.StatusCode, got)
	}
	if res, got := send(`[{"message":"chunked"}]`); res.StatusCode != 200 || got != logged {
		t.Fatalf("under the limit: %d %s", res.StatusCode, got)
	}
	if ts.srv.bodies.used.Load() != 0 {
		t.Fatal("budget not given back")
	}
}

// TestBodyRoutesStillRead: every route that takes a body still gets it:
// management (create a source), endpoint POST parameters, search POST.
func TestBodyRoutesStillRead(t *testing.T) {
	ts := startServer(t, serverConfig{})
	ts.do("POST", "/api/sources", []byte(`{"name":"from.body"}`), withKey(privKey, jsonCT...)...).expect(t, 201, "")
	if ts.cat.SourceByName("from.body") == nil {
		t.Fatal("source not created from the body")
	}
	ts.do("POST", "/api/endpoints/query/logs.all", []byte(`{"sql":"select 1"}`), withKey(privKey, jsonCT...)...).expect(t, 200, "")
	if p := ts.runner.last(t).params; p["sql"] != "select 1" {
		t.Fatalf("params %v", p)
	}
	ts.do("POST", "/api/sources/postgres.logs/search", []byte(`{"lql":"","limit":5}`), withKey(privKey, jsonCT...)...).expect(t, 200, `{"result":[]}`)
	// Management checks the key first: a body with a bad key is not read.
	ts.do("POST", "/api/sources", []byte(`{"name":"nope"}`), withKey(pubKey, jsonCT...)...).expect(t, 401, unauthorized)
}
