package bench

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Row is one row of a query's answer, decoded from JSON with numbers kept
// as json.Number. Targets normalise their servers' names so that a
// query's check reads every server's rows the same way: "timestamp" and
// "event_message" are the event's time and message whatever the server
// calls them.
type Row map[string]any

// Get returns the value at path: a key of the row as it is (VictoriaLogs
// flattens nested fields to dotted names), else a dotted path through
// nested objects, where an array of one object (Logflare's form of a
// record, metadata: [{...}]) is looked through.
func (r Row) Get(path string) (any, bool) {
	if v, ok := r[path]; ok {
		return v, true
	}
	var cur any = map[string]any(r)
	for _, part := range strings.Split(path, ".") {
		if arr, ok := cur.([]any); ok && len(arr) == 1 {
			cur = arr[0]
		}
		obj, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = obj[part]; !ok {
			return nil, false
		}
	}
	return cur, true
}

// Int returns the integer at path: a JSON number or a string of digits
// (VictoriaLogs writes every value as a string).
func (r Row) Int(path string) (int64, error) {
	v, ok := r.Get(path)
	if !ok {
		return 0, fmt.Errorf("no field %s", path)
	}
	var s string
	switch x := v.(type) {
	case json.Number:
		s = x.String()
	case string:
		s = x
	default:
		return 0, fmt.Errorf("field %s: %v is not a number", path, v)
	}
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return n, nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f != math.Trunc(f) {
		return 0, fmt.Errorf("field %s: %q is not an integer", path, s)
	}
	return int64(f), nil
}

// Str returns the string at path.
func (r Row) Str(path string) (string, error) {
	v, ok := r.Get(path)
	if !ok {
		return "", fmt.Errorf("no field %s", path)
	}
	s, ok := v.(string)
	if !ok {
		return "", fmt.Errorf("field %s: %v is not a string", path, v)
	}
	return s, nil
}

// Time returns the time at path in microseconds since the epoch: a number
// (Logflare's microseconds) or a string in RFC 3339, or without a zone
// (BigQuery's DATETIME, read as UTC).
func (r Row) Time(path string) (int64, error) {
	v, ok := r.Get(path)
	if !ok {
		return 0, fmt.Errorf("no field %s", path)
	}
	switch x := v.(type) {
	case json.Number:
		n, err := x.Int64()
		if err != nil {
			return 0, fmt.Errorf("field %s: %v is not a time", path, x)
		}
		return n, nil
	case string:
		for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999", "2006-01-02 15:04:05.999999999", "2006-01-02 15:04:05.999999999Z07:00"} {
			if t, err := time.Parse(layout, x); err == nil {
				return t.UnixMicro(), nil
			}
		}
		if n, err := strconv.ParseInt(x, 10, 64); err == nil {
			return n, nil
		}
		return 0, fmt.Errorf("field %s: %q is not a time", path, x)
	}
	return 0, fmt.Errorf("field %s: %v is not a time", path, v)
}

// decodeJSON decodes b into v keeping numbers as json.Number.
func decodeJSON(b []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	return d.Decode(v)
}

// logflareRows reads Logflare's answer, {"result": [...]} or {"error": ...}
// (sent with HTTP 200), into rows.
func logflareRows(body []byte) ([]Row, error) {
	var r struct {
		Result []Row            `json:"result"`
		Error  *json.RawMessage `json:"error"`
	}
	if err := decodeJSON(body, &r); err != nil {
		return nil, fmt.Errorf("answer is not JSON: %s", snippet(body))
	}
	if r.Error != nil && string(*r.Error) != "null" {
		return nil, fmt.Errorf("query error: %s", snippet(*r.Error))
	}
	if r.Result == nil {
		return nil, fmt.Errorf("answer has no result: %s", snippet(body))
	}
	return r.Result, nil
}

// errWrongAnswer is wrapped by the errors of answers that are not the
// generator's truth.
var errWrongAnswer = errors.New("wrong answer")

// wrongf returns an error wrapping errWrongAnswer.
func wrongf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", errWrongAnswer, fmt.Sprintf(format, args...))
}
