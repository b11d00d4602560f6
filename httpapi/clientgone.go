package httpapi

import (
	"net"
	"time"
)

// peekState is what peekConn saw on a connection.
type peekState uint8

const (
	// peekUnknown: the connection cannot be looked at (not a socket, or a
	// platform without the call).
	peekUnknown peekState = iota
	// peekEmpty: the peer is there and has sent nothing more.
	peekEmpty
	// peekData: bytes are waiting to be read.
	peekData
	// peekClosed: the peer closed or reset the connection, or we did.
	peekClosed
)

// clientWatchInterval is how often a running query looks whether its
// client is still connected. fasthttp has no notice of a peer closing while
// a handler runs (it reads the connection only between requests), so the
// watcher polls with a non-blocking peek: a few wake-ups a second per
// running query, and a client that leaves is noticed within this interval.
const clientWatchInterval = 200 * time.Millisecond

// watchClient calls gone once the peer of c closes or resets the
// connection, until stop is called; stop returns once the watcher has
// ended, so gone is never called after it. A peer that half-closes after
// its request (shuts down its sending side) reads as gone, as in Go's
// net/http. Once the client sends more bytes (a pipelined request) the
// watch ends: what follows them cannot be seen without reading them.
func watchClient(c net.Conn, gone func()) (stop func()) {
	if c == nil || peekConn(c) == peekUnknown {
		return func() {}
	}
	done := make(chan struct{})
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		t := time.NewTicker(clientWatchInterval)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			switch peekConn(c) {
			case peekClosed:
				gone()
				return
			case peekData, peekUnknown:
				return
			}
		}
	}()
	return func() {
		close(done)
		<-ended
	}
}
