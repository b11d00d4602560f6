package httpapi

import (
	"errors"

	"github.com/valyala/fasthttp"

	"github.com/sediment/sediment/lql"
)

// sendRequestError answers a search request error: 400 {"error": msg}, as
// Logflare does, and for LQL that does not parse two more members saying
// where, so that a client can point at the clause:
//
//	{"error": "LQL parser error: path `metadata.x` not present in source schema.",
//	 "clause": "m.x:1", "offset": 7}
//
// clause is the offending clause as written and offset its byte offset in
// the lql parameter.
func sendRequestError(ctx *fasthttp.RequestCtx, err error) {
	var le *lql.Error
	if !errors.As(err, &le) {
		sendError(ctx, fasthttp.StatusBadRequest, err.Error())
		return
	}
	sendJSON(ctx, fasthttp.StatusBadRequest, struct {
		Error  string `json:"error"`
		Clause string `json:"clause"`
		Offset int    `json:"offset"`
	}{err.Error(), le.Clause, le.Offset})
}
