package scan

import (
	"context"
	"sync"
)

// Validity collects until when one query's answer stays right as stored
// data ages: a source with a retention stops showing an event once the
// event is older than the retention, so an answer that read events of it
// must not be served (from a cache) past the moment the oldest of them
// expires. Scans of such sources report that moment (Expires); sources
// that keep everything report nothing. Safe for concurrent use.
type Validity struct {
	mu    sync.Mutex
	until int64 // unix µs
	set   bool
}

// Expires records that the answer may hold an event that is past
// retention from t (unix µs) on.
func (v *Validity) Expires(t int64) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if !v.set || t < v.until {
		v.until, v.set = t, true
	}
}

// Until returns the first moment (unix µs) the answer may show an event
// past retention; ok is false when it never does.
func (v *Validity) Until() (t int64, ok bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.until, v.set
}

type validityKey struct{}

// WithValidity returns a context that carries v to the scans of a query.
func WithValidity(ctx context.Context, v *Validity) context.Context {
	return context.WithValue(ctx, validityKey{}, v)
}

// ValidityFrom returns the collector ctx carries, or nil.
func ValidityFrom(ctx context.Context) *Validity {
	v, _ := ctx.Value(validityKey{}).(*Validity)
	return v
}
