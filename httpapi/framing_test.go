package httpapi

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestContentLengthWithChunkedRejected: a request with both
// Content-Length and Transfer-Encoding: chunked (RFC 9112 §6.1, request
// smuggling) is answered 400 without being processed, the connection is
// closed, and the request pipelined behind it never runs. Sent as raw
// bytes, in both header orders.
func TestContentLengthWithChunkedRejected(t *testing.T) {
	ts := startServer(t, serverConfig{})
	smuggled := `{"message":"smuggled"}`
	second := fmt.Sprintf("POST /api/logs?source_name=postgres.logs HTTP/1.1\r\nHost: x\r\nX-API-KEY: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s",
		pubKey, len(smuggled), smuggled)
	first := `{"message":"first"}`
	chunked := fmt.Sprintf("%x\r\n%s\r\n0\r\n\r\n", len(first), first)
	for i, framing := range []string{
		"Content-Length: 5\r\nTransfer-Encoding: chunked\r\n",
		"Transfer-Encoding: chunked\r\ncontent-length: 5\r\n",
		"Transfer-Encoding: chunked\r\nContent-Length : 5\r\n", // fasthttp refuses the space itself
	} {
		c := dialServer(t, ts)
		fmt.Fprintf(c, "POST /api/logs?source_name=postgres.logs HTTP/1.1\r\nHost: x\r\nX-API-KEY: %s\r\nContent-Type: application/json\r\n%s\r\n%s%s",
			pubKey, framing, chunked, second)
		_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
		all, err := io.ReadAll(c)
		if err != nil {
			t.Fatalf("%q: %v", framing, err)
		}
		if n := strings.Count(string(all), "HTTP/1.1 "); n != 1 {
			t.Fatalf("%q: %d answers, want 1:\n%s", framing, n, all)
		}
		res, err := http.ReadResponse(bufio.NewReader(strings.NewReader(string(all))), nil)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		if res.StatusCode != 400 || !res.Close || !strings.Contains(string(body), `"errors":{"detail":`) {
			t.Fatalf("%q: %d close=%v %s", framing, res.StatusCode, res.Close, body)
		}
		if i < 2 && !strings.Contains(string(body), "both Content-Length and Transfer-Encoding") {
			t.Fatalf("%q: %s", framing, body)
		}
	}
	if evs := ts.events("postgres.logs"); len(evs) != 0 {
		t.Fatalf("stored %v", evs)
	}
	// A chunked request alone is served as before.
	c := dialServer(t, ts)
	br := bufio.NewReader(c)
	fmt.Fprintf(c, "POST /api/logs?source_name=postgres.logs HTTP/1.1\r\nHost: x\r\nX-API-KEY: %s\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n%s", pubKey, chunked)
	if res, got := readResponse(t, c, br); res.StatusCode != 200 || got != logged {
		t.Fatalf("chunked: %d %s", res.StatusCode, got)
	}
}
