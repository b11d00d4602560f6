package httpapi

import (
	"bufio"
	"bytes"
	"runtime"
	"strings"
	"testing"
	"time"

	json "github.com/goccy/go-json"
	"github.com/valyala/fasthttp"
)

// FuzzMergeJSONParams: any body either fails cleanly (leaving the map as
// it was) or yields string parameters; never a panic.
func FuzzMergeJSONParams(f *testing.F) {
	for _, s := range []string{
		`{"sql":"select 1","n":1.50,"t":true,"nil":null,"obj":{"k":[1,"a"]}}`,
		`{}`, `[]`, `null`, `{"a":1} x`, `{"a":`, `"str"`, `{"a":{"b":{"c":{"d":[[[[1]]]]}}}}`,
		`{"big":123456789012345678901234567890,"e":1e400}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		dst := map[string]string{"keep": "v"}
		err := mergeJSONParams(dst, body)
		if err != nil {
			if len(dst) != 1 || dst["keep"] != "v" {
				t.Fatalf("failed merge changed the map: %v", dst)
			}
			return
		}
		// A body accepted must be a JSON object.
		var m map[string]json.RawMessage
		if json.Unmarshal(body, &m) != nil {
			t.Fatalf("accepted a body that is not one JSON object: %q", body)
		}
	})
}

// FuzzHandler drives the router with arbitrary methods, paths, headers and
// bodies (authenticated, so bodies are decoded): no input may panic or
// produce a 500.
func FuzzHandler(f *testing.F) {
	f.Add("POST", "/api/logs?source_name=postgres.logs", "application/json", "", []byte(`[{"message":"a"}]`))
	f.Add("POST", "/logs/logplex?source_name=postgres.logs", "application/logplex-1", "", []byte("83 <40>1 2020-08-09T13:30:37+00:00 host app web.1 - up\n"))
	f.Add("POST", "/logs/cloudflare?source_name=postgres.logs", "text/plain", "", []byte("{\"a\":1}\nnope\n"))
	f.Add("POST", "/api/logs/github?source_name=postgres.logs", "application/json", "", []byte(`{"repository":{"full_name":"a/b","x_url":"u"}}`))
	f.Add("POST", "/api/logs?source_name=postgres.logs", "application/json", "gzip", []byte{0x1f, 0x8b, 8, 0})
	f.Add("GET", "/api/endpoints/query/logs.all?sql=select+1", "application/json", "", []byte(`{"sql":"x"}`))
	f.Add("POST", "/api/endpoints/query/logs.all", "application/json", "", []byte(`{"p":[1,{"a":null}]}`))
	f.Add("POST", "/api/sources", "application/json", "", []byte(`{"name":"fz","drop_lql_string":"m.a:>1"}`))
	f.Add("PUT", "/api/endpoints/00000000-0000-4000-8000-000000000000", "application/json", "", []byte(`{"max_limit":"x"}`))
	f.Add("GET", "/api/sources/x/schema?variant=dot", "", "", []byte(nil))
	f.Add("OPTIONS", "/analytics/v1/api/logs", "", "", []byte(nil))
	f.Add("GET", "/metrics", "", "", []byte(nil))
	ts := startServer(f, serverConfig{})
	f.Fuzz(func(t *testing.T, method, uri, contentType, encoding string, body []byte) {
		if !strings.HasPrefix(uri, "/") || len(uri) > 4096 {
			return
		}
		var ctx fasthttp.RequestCtx
		var req fasthttp.Request
		req.Header.SetMethod(method)
		req.SetRequestURI(uri)
		req.Header.Set("X-API-KEY", privKey)
		if contentType != "" {
			req.Header.SetContentType(contentType)
		}
		if encoding != "" {
			req.Header.Set("Content-Encoding", encoding)
		}
		req.SetBody(body)
		ctx.Init(&req, nil, nil)
		done := make(chan struct{})
		go func() {
			defer close(done)
			ts.srv.route(&ctx) // no recover: a panic fails the fuzz run
		}()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			buf := make([]byte, 1<<20)
			t.Fatalf("%s %s: no answer after 20s\n%s", method, uri, buf[:runtime.Stack(buf, true)])
		}
		if ctx.Response.StatusCode() >= 500 && ctx.Response.StatusCode() != 503 {
			t.Fatalf("%s %s: %d %s", method, uri, ctx.Response.StatusCode(), ctx.Response.Body())
		}
	})
}

// FuzzConflictingFraming: any request head either fails to parse or is
// judged without a panic, and a request judged to carry both framings is
// chunked and has a Content-Length line.
func FuzzConflictingFraming(f *testing.F) {
	for _, s := range []string{
		"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n",
		"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\ncontent-length: 5\r\n\r\n",
		"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Length : 5\r\n\r\n",
		"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n",
		"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n",
		"GET / HTTP/1.1\r\nX-Content-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n",
		"POST / HTTP/1.1\nTransfer-Encoding: chunked\nContent-Length:\n\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		var h fasthttp.RequestHeader
		if h.Read(bufio.NewReader(bytes.NewReader(raw))) != nil {
			return
		}
		if conflictingFraming(&h) {
			if h.ContentLength() != -1 || !bytes.Contains(bytes.ToLower(raw), []byte("content-length")) {
				t.Fatalf("judged conflicting: %q", raw)
			}
		}
	})
}
