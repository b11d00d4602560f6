package httpapi

import (
	"bytes"
	"errors"
	"io"
	"strings"

	json "github.com/goccy/go-json"
	"github.com/valyala/fasthttp"
)

// collectParams gathers a query endpoint request's parameters, as strings
// (docs/compat/logflare.md §6.3): the path parameter under pathKey, then the
// query string, then the body, later sources overriding earlier ones (the
// body wins, as in Phoenix). The body counts for a POST (JSON, or a form);
// for a GET only on a sandboxable endpoint when the query string has no
// sql= or lql=, and only if it is a JSON object (anything else is
// ignored). A POST body that is not a JSON object is an error. Every
// string is a copy: the map outlives the request. An API key passed in the
// query string is not a parameter: it is left out, so that it reaches
// neither cache keys nor query logs.
func collectParams(ctx *fasthttp.RequestCtx, pathKey, pathValue string, sandboxable bool) (map[string]string, error) {
	params := map[string]string{pathKey: strings.Clone(pathValue)}
	args := ctx.QueryArgs()
	for k, v := range args.All() {
		if key := b2s(k); key == "api_key" || key == "header_X_API_KEY" {
			continue
		}
		params[string(k)] = string(v)
	}
	body := ctx.PostBody()
	if len(bytes.TrimSpace(body)) == 0 {
		return params, nil
	}
	switch {
	case ctx.IsPost():
		if bytes.HasPrefix(ctx.Request.Header.ContentType(), []byte("application/x-www-form-urlencoded")) {
			for k, v := range ctx.PostArgs().All() {
				params[string(k)] = string(v)
			}
			return params, nil
		}
		if err := mergeJSONParams(params, body); err != nil {
			return nil, err
		}
	case sandboxable && !args.Has("sql") && !args.Has("lql"):
		_ = mergeJSONParams(params, body) // a GET body is optional: ignore one that is not JSON
	}
	return params, nil
}

// errParamsBody is returned for a body that is not one JSON object.
var errParamsBody = errors.New("request body must be a JSON object")

// mergeJSONParams parses body as one JSON object and sets each member in
// dst as text: strings as they are, numbers as written, booleans as
// true/false, objects and arrays as compact JSON; null members are left
// out (a missing parameter binds NULL). dst is unchanged on error.
func mergeJSONParams(dst map[string]string, body []byte) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil || m == nil {
		return errParamsBody
	}
	if err := dec.Decode(new(json.RawMessage)); err != io.EOF {
		return errParamsBody // trailing data after the object
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		switch x := v.(type) {
		case nil:
		case string:
			out[k] = x
		case json.Number:
			out[k] = string(x)
		case bool:
			if x {
				out[k] = "true"
			} else {
				out[k] = "false"
			}
		default:
			b, err := json.Marshal(x)
			if err != nil {
				return errParamsBody
			}
			out[k] = string(b)
		}
	}
	for k, v := range out {
		dst[k] = v
	}
	return nil
}
