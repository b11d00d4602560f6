// Package ingest decodes the bodies of Logflare-compatible ingest requests
// into raw event Values, one decoder per route (docs/compat/logflare.md
// §3.1–§3.7). It is pure: bytes, content type, content encoding, route
// and headers in; raw events, body parameters and a count of skipped lines
// out. Normalisation (event.Normalize), source selection, auth and HTTP live
// elsewhere.
//
// Errors map to HTTP statuses as Logflare answers them (StatusCode does it):
//
//	ErrTooLarge                  413  body, or its decompressed form, over the limit
//	ErrUnsupportedEncoding       400  Content-Encoding other than gzip/deflate/zstd/identity
//	ErrMalformed                 400  invalid JSON/NDJSON, corrupt compressed data
//	ErrBadShape                  400  valid JSON the route cannot take (e.g. a batch
//	                                  element that is not an object, /vector without timestamp)
//	ErrUnsupportedContentType    415  a content type the route does not parse
//	ErrBudget                    429  Request.Charge refused the memory decoding
//	                                  would hold (the caller's in-flight budget)
//
// Every error returned wraps exactly one of these sentinels, so callers use
// errors.Is. Lines of logplex and Cloudflare NDJSON bodies that cannot be
// parsed are not errors: they are dropped and counted in Result.Skipped, and
// the request still succeeds, as in Logflare.
//
// The protocols of other log stores have their own decoders on the same
// Decoder (sharing its decompression, limit and buffers): DecodeOTLPLogs
// (OTLP/HTTP logs, protobuf or JSON), DecodeLokiPush (Loki push, snappy
// protobuf or JSON), DecodeBulk (Elasticsearch's bulk API) and
// DecodeSyslogFrames (messages a syslog listener has framed; RFC 5424, and
// RFC 3164 as on the HTTP syslog routes). Each returns raw events grouped
// the way its protocol chooses sources, and fails with the same sentinels.
package ingest
