package gen_test

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sediment/sediment/bench/gen"
)

// decode parses one event, keeping numbers as json.Number so that integer
// and float fields can be told apart.
func decode(t testing.TB, ev []byte) map[string]any {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(ev))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil {
		t.Fatalf("invalid JSON: %v\n%s", err, ev)
	}
	if d.More() {
		t.Fatalf("trailing data after event: %s", ev)
	}
	return m
}

// lookup follows a dotted path; "a.b[0].c" indexes arrays.
func lookup(m map[string]any, path string) (any, bool) {
	var cur any = m
	for _, part := range strings.Split(path, ".") {
		idx := -1
		if i := strings.IndexByte(part, '['); i >= 0 {
			n, err := strconv.Atoi(strings.TrimSuffix(part[i+1:], "]"))
			if err != nil {
				return nil, false
			}
			idx, part = n, part[:i]
		}
		obj, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = obj[part]; !ok {
			return nil, false
		}
		if idx >= 0 {
			arr, ok := cur.([]any)
			if !ok || idx >= len(arr) {
				return nil, false
			}
			cur = arr[idx]
		}
	}
	return cur, true
}

// kindOf names a decoded JSON value's type: string, int, float, bool, null,
// object or array.
func kindOf(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return "string"
	case bool:
		return "bool"
	case json.Number:
		if _, err := x.Int64(); err == nil {
			return "int"
		}
		return "float"
	case map[string]any:
		return "object"
	case []any:
		return "array"
	}
	return "unknown"
}

func str(m map[string]any, path string) string {
	v, _ := lookup(m, path)
	s, _ := v.(string)
	return s
}

func num(m map[string]any, path string) int64 {
	v, _ := lookup(m, path)
	n, _ := v.(json.Number)
	i, _ := n.Int64()
	return i
}

// events generates n events and decodes them.
func events(t testing.TB, src gen.Source, opts gen.Options, n int) ([]map[string]any, [][]byte) {
	t.Helper()
	g := gen.New(src, opts)
	maps := make([]map[string]any, n)
	raw := make([][]byte, n)
	for i := range n {
		raw[i] = g.AppendEvent(nil)
		maps[i] = decode(t, raw[i])
	}
	return maps, raw
}

func parseTime(t testing.TB, s string) time.Time {
	t.Helper()
	ts, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatalf("bad timestamp %q: %v", s, err)
	}
	return ts
}

var shapes = []gen.Shape{gen.SelfHosted, gen.Platform}
