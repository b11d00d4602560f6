//go:build linux || darwin || freebsd

package httpapi

import (
	"errors"
	"net"
	"syscall"
)

// peekConn looks, without reading and without waiting, at what a TCP
// connection has for us: bytes, nothing yet, or its end (the peer closed
// or reset it). Bytes fasthttp has buffered already are not seen.
func peekConn(c net.Conn) peekState {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return peekUnknown
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return peekUnknown
	}
	st := peekClosed
	var b [1]byte
	// Control, not Read: Read takes the descriptor's read lock, which a
	// fasthttp worker waiting for the next request holds.
	err = rc.Control(func(fd uintptr) {
		// The socket is non-blocking (Go's poller made it so); MSG_DONTWAIT
		// says so again for platforms where that is not a given.
		n, _, rerr := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		switch {
		case n > 0:
			st = peekData
		case errors.Is(rerr, syscall.EAGAIN) || errors.Is(rerr, syscall.EWOULDBLOCK) || errors.Is(rerr, syscall.EINTR):
			st = peekEmpty
		default: // n == 0 without error is the peer's FIN; an error is a reset
			st = peekClosed
		}
	})
	if err != nil {
		return peekClosed // closed on our side
	}
	return st
}
