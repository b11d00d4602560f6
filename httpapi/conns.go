package httpapi

import (
	"net"
	"sync"
	"sync/atomic"

	"github.com/valyala/fasthttp"
)

// connTracker follows every connection's state (fasthttp's ConnState hook)
// so that Shutdown can close, at once, the connections that have not sent
// a request. fasthttp's own shutdown closes keep-alive connections idle
// between requests at once, but counts a new connection as idle only 5 s
// after it opened (and fasthttp before v1.78 never did): a client that
// connected and sent nothing held shutdown for that long. Go's HTTP client
// leaves such connections behind when it dials for a request that another
// connection then serves, which is what made TestEndpointCache's shutdown
// time out now and then.
//
// Closing a new connection races with a request arriving on it. That race
// is made harmless: a connection is closed only while fasthttp has it as
// new (no request byte read), and handle drops, without doing anything, a
// request that arrives on a connection closed this way, so no request is
// ever half done. Its client sees the connection close without an answer,
// as when a listener closes.
type connTracker struct {
	mu    sync.Mutex
	conns map[net.Conn]*trackedConn
	// closing is set (under mu) once shutting down: new connections are
	// closed as they come.
	closing atomic.Bool
}

type trackedConn struct {
	state  fasthttp.ConnState
	closed bool // closed by closeSilent
}

// hook is the fasthttp Server's ConnState.
func (t *connTracker) hook(c net.Conn, st fasthttp.ConnState) {
	t.mu.Lock()
	defer t.mu.Unlock()
	switch st {
	case fasthttp.StateNew:
		if t.conns == nil {
			t.conns = make(map[net.Conn]*trackedConn)
		}
		tc := &trackedConn{state: st}
		t.conns[c] = tc
		if t.closing.Load() {
			t.closeIfSilentLocked(c, tc)
		}
	case fasthttp.StateClosed, fasthttp.StateHijacked:
		delete(t.conns, c)
	default:
		if tc := t.conns[c]; tc != nil {
			tc.state = st
		}
	}
}

// closeSilent closes every connection that has sent nothing yet, and from
// now on every new one.
func (t *connTracker) closeSilent() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.closing.Store(true)
	for c, tc := range t.conns {
		if tc.state == fasthttp.StateNew {
			t.closeIfSilentLocked(c, tc)
		}
	}
}

// closeIfSilentLocked closes c unless a request is arriving on it (bytes
// are waiting): that one is served, and fasthttp closes its connection
// after the answer.
func (t *connTracker) closeIfSilentLocked(c net.Conn, tc *trackedConn) {
	if tc.closed || peekConn(c) == peekData {
		return
	}
	tc.closed = true
	_ = c.Close()
}

// closedByShutdown reports whether c was closed by closeSilent; a request
// read from it anyway must not be served. It costs nothing until shutdown.
func (t *connTracker) closedByShutdown(c net.Conn) bool {
	if !t.closing.Load() {
		return false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	tc := t.conns[c]
	return tc != nil && tc.closed
}
