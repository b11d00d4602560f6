// Package catalog keeps Sediment's metadata: sources, query endpoints and
// access tokens (docs/compat/logflare.md §5.2, §5.3, §2), persisted in one
// versioned, checksummed JSON file in the data directory (file.go) and
// reloaded on restart. Every change keeps the file before it as
// catalog.json.prev; a damaged file is refused (ErrCorrupt), and
// RestorePrevious puts the previous version back.
//
// # Concurrency
//
// Readers never lock: the catalog's state is an immutable snapshot swapped
// atomically by each change (copy-on-write), so the ingest hot path looks a
// source up with a map read. Writers are serialised; a change is made
// durable (the whole file rewritten atomically) before it becomes visible.
// The *Source, *Endpoint and *AccessToken values handed out are shared and
// must not be modified; a change replaces them with new values.
//
// # Single tenant
//
// Sediment serves one tenant, so there is no user: every source, endpoint
// and token belongs to the same owner. Source names need not be unique (as
// in Logflare); ingesting by name picks, deterministically, the source with
// that name that was created first (lowest id). Endpoint names must be
// unique, since endpoints are queried by name.
//
// # Tokens
//
// Access token keys are stored as their SHA-256 digest only, and compared
// in constant time (every stored digest is compared, whether or not one
// already matched). The keys are high-entropy random strings (NewKey) or
// operator-chosen environment values; a digest without salt is the usual
// practice for such API keys.
//
// The package knows nothing of HTTP.
package catalog
