package gen_test

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/sediment/sediment/bench/gen"
)

// edgeFields is the part of an edge event the distribution tests read.
type edgeFields struct {
	Metadata struct {
		Request struct {
			Method string
			Path   string
		}
		Response struct {
			StatusCode int `json:"status_code"`
			OriginTime int `json:"origin_time"`
		}
	}
}

// scanEdge reads the same fields straight from the bytes: each key occurs
// once in an edge event. Decoding 100k events with encoding/json under the
// race detector takes most of a minute, so the distribution test scans and
// cross-checks the scan against a full decode on a sample.
func scanEdge(ev []byte) (f edgeFields) {
	f.Metadata.Request.Method = scanString(ev, `"method":"`)
	f.Metadata.Request.Path = scanString(ev, `"path":"`)
	f.Metadata.Response.StatusCode = scanInt(ev, `"status_code":`)
	f.Metadata.Response.OriginTime = scanInt(ev, `"origin_time":`)
	return f
}

func scanString(ev []byte, key string) string {
	i := bytes.Index(ev, []byte(key))
	if i < 0 {
		return ""
	}
	rest := ev[i+len(key):]
	return string(rest[:bytes.IndexByte(rest, '"')])
}

func scanInt(ev []byte, key string) int {
	i := bytes.Index(ev, []byte(key))
	if i < 0 {
		return 0
	}
	n := 0
	for _, c := range ev[i+len(key):] {
		if c < '0' || c > '9' {
			break
		}
		n = n*10 + int(c-'0')
	}
	return n
}

// TestEdgeDistributions checks the shares of status classes, methods, APIs
// and origin times over 100k edge events of each shape.
func TestEdgeDistributions(t *testing.T) {
	const n = 100000
	for _, shape := range shapes {
		t.Run(shape.String(), func(t *testing.T) {
			g := gen.New(gen.EdgeLogs, gen.Options{Seed: 31, Shape: shape})
			classes := map[string]int{}
			codes := map[int]int{}
			methods := map[string]int{}
			apis := map[string]int{}
			var origin []int
			var buf []byte
			for i := range n {
				buf = g.AppendEvent(buf[:0])
				ev := scanEdge(buf)
				if i%100 == 0 {
					var full edgeFields
					if err := json.Unmarshal(buf, &full); err != nil {
						t.Fatal(err)
					}
					if full != ev {
						t.Fatalf("scan %+v, decode %+v", ev, full)
					}
				}
				st := ev.Metadata.Response.StatusCode
				codes[st]++
				switch {
				case st < 300:
					classes["success"]++
				case st < 400:
					classes["3xx"]++
				case st < 500:
					classes["4xx"]++
				default:
					classes["5xx"]++
				}
				methods[ev.Metadata.Request.Method]++
				p := ev.Metadata.Request.Path
				switch {
				case strings.HasPrefix(p, "/rest/v1/rpc/"):
					apis["rpc"]++
				case strings.HasPrefix(p, "/rest/v1/"):
					apis["rest"]++
				case strings.HasPrefix(p, "/auth/v1/"):
					apis["auth"]++
				case strings.HasPrefix(p, "/storage/v1/"):
					apis["storage"]++
				case strings.HasPrefix(p, "/realtime/v1/websocket"):
					apis["realtime"]++
				case strings.HasPrefix(p, "/functions/v1/"):
					apis["functions"]++
				case strings.HasPrefix(p, "/graphql/v1"):
					apis["graphql"]++
				case strings.HasPrefix(p, "/pg/"):
					apis["meta"]++
				default:
					t.Fatalf("unexpected path %q", p)
				}
				if shape == gen.Platform {
					origin = append(origin, ev.Metadata.Response.OriginTime)
				}
			}
			// Kong error lines carry the default status 200 Vector sets.
			checkShares(t, classes, n, map[string][2]float64{
				"success": {0.83, 0.89}, "3xx": {0.005, 0.04}, "4xx": {0.08, 0.13}, "5xx": {0.008, 0.025},
			})
			for _, c := range []int{101, 200, 201, 204, 304, 400, 401, 403, 404, 406, 409, 429, 500, 502, 503, 504, 520} {
				if codes[c] == 0 {
					t.Errorf("status %d never drawn", c)
				}
			}
			checkShares(t, methods, n, map[string][2]float64{
				"GET": {0.60, 0.80}, "POST": {0.12, 0.30}, "PATCH": {0.01, 0.06}, "DELETE": {0.005, 0.04},
				"OPTIONS": {0.01, 0.06}, "HEAD": {0.005, 0.04},
			})
			checkShares(t, apis, n, map[string][2]float64{
				"rest": {0.55, 0.70}, "rpc": {0.03, 0.07}, "auth": {0.10, 0.17}, "storage": {0.07, 0.13},
				"realtime": {0.01, 0.05}, "functions": {0.02, 0.06}, "graphql": {0.005, 0.02},
			})
			if shape == gen.Platform {
				slices.Sort(origin)
				median, p99 := origin[n/2], origin[n*99/100]
				in := 0
				for _, v := range origin {
					if v >= 5 && v <= 200 {
						in++
					}
				}
				if median < 15 || median > 60 || p99 < 500 || origin[n-1] < 3000 || float64(in)/n < 0.75 {
					t.Errorf("origin_time: median %d ms, p99 %d ms, max %d ms, %.0f%% in 5–200 ms",
						median, p99, origin[n-1], 100*float64(in)/n)
				}
			}
		})
	}
}

// TestEdgePlatformSize: platform edge events average 1.0–1.5 KB of JSON,
// whatever the seed and number of projects.
func TestEdgePlatformSize(t *testing.T) {
	const n = 20000
	for i, opts := range []gen.Options{
		{Seed: 1, Shape: gen.Platform},
		{Seed: 2, Shape: gen.Platform, Projects: 1},
		{Seed: 3, Shape: gen.Platform, Projects: 10000},
	} {
		body := gen.New(gen.EdgeLogs, opts).AppendNDJSON(nil, n)
		avg := float64(len(body)-n) / n
		t.Logf("options %d: %.0f bytes/event", i, avg)
		if avg < 1000 || avg > 1500 {
			t.Errorf("options %d: average event is %.0f bytes, want 1000–1500", i, avg)
		}
	}
}

// TestStatusCodesAreIntegers: every status code in the sources that carry
// one is a JSON integer, as Studio's queries compare it to numbers.
func TestStatusCodesAreIntegers(t *testing.T) {
	for _, tc := range []struct {
		src  gen.Source
		path string
	}{
		{gen.EdgeLogs, "metadata.response.status_code"},
		{gen.FunctionEdgeLogs, "metadata.response.status_code"},
		{gen.AuthLogs, "metadata.status"},
	} {
		for _, shape := range shapes {
			evs, _ := events(t, tc.src, gen.Options{Seed: 37, Shape: shape}, 1000)
			for _, ev := range evs {
				v, ok := lookup(ev, tc.path)
				if !ok {
					continue
				}
				n, isNum := v.(json.Number)
				code, err := strconv.Atoi(string(n))
				if !isNum || err != nil || code < 100 || code > 599 {
					t.Fatalf("%v/%v: %s = %#v", tc.src, shape, tc.path, v)
				}
			}
		}
	}
}
