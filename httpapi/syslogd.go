package httpapi

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"sync"
	"time"

	"github.com/sediment/sediment/catalog"
	"github.com/sediment/sediment/engine"
)

// The syslog listener takes RFC 5424 and RFC 3164 messages over TCP
// (octet-counted as RFC 6587 §3.4.1 and RFC 5425 frame them, or one per
// line; a frame that starts with a digit is octet-counted, as rsyslog
// decides) and UDP (one message per datagram), TLS being the caller's to
// wrap around the TCP listener. Syslog has no keys: a listener writes to
// the one source it is configured with, and should be reachable only by
// the senders meant to use it (serve binds it to loopback unless told
// otherwise). Messages are parsed as on /logs/syslogs, with RFC 3164 as
// the fallback (see ingest.DecodeSyslogFrames), and stored through the
// same pipeline as HTTP ingest.
//
// There is no acknowledgement in syslog, so nothing may be lost after a
// message is read: when the source's shard pushes back, a TCP connection
// stops reading and retries until the append succeeds (the sender feels
// the back-pressure); UDP retries for a while, then drops and counts.
// Messages that do not parse, or that are longer than the limit, are
// counted as unparsed.

// SyslogOptions configure a syslog listener.
type SyslogOptions struct {
	// Source is the name or token of the source messages go to. It is
	// looked up for every batch, so it may be created after the listener
	// starts; until it exists messages are dropped, counted and logged.
	Source string
	// MaxMessageBytes bounds one message (default 64 KiB); longer ones are
	// skipped and counted.
	MaxMessageBytes int
	// IdleTimeout closes TCP connections silent this long (default 10 min).
	IdleTimeout time.Duration
	// MaxConns bounds concurrent TCP connections (default 512); more wait
	// to be accepted.
	MaxConns int
}

func (o SyslogOptions) withDefaults() SyslogOptions {
	if o.MaxMessageBytes <= 0 {
		o.MaxMessageBytes = 64 << 10
	}
	if o.IdleTimeout <= 0 {
		o.IdleTimeout = 10 * time.Minute
	}
	if o.MaxConns <= 0 {
		o.MaxConns = 512
	}
	return o
}

const (
	// syslogBatchFrames and syslogBatchBytes bound a batch of messages
	// appended together.
	syslogBatchFrames = 1024
	syslogBatchBytes  = 1 << 20
	// syslogUDPLinger is how long a UDP listener waits for more datagrams
	// before it stores what it has.
	syslogUDPLinger = 20 * time.Millisecond
	// syslogUDPRetry is how long a UDP batch is retried against a shard
	// that pushes back before it is dropped.
	syslogUDPRetry = 30 * time.Second
)

// syslogRegistry tracks listeners and connections so that Shutdown can
// close them and wait for the batches in flight.
type syslogRegistry struct {
	mu      sync.Mutex
	closers map[io.Closer]struct{}
	closed  bool
	wg      sync.WaitGroup
	// warned holds the source names already warned about as missing.
	warned sync.Map
}

// track registers c; false when shutdown has begun (c is then closed).
func (r *syslogRegistry) track(c io.Closer) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		c.Close()
		return false
	}
	if r.closers == nil {
		r.closers = make(map[io.Closer]struct{})
	}
	r.closers[c] = struct{}{}
	r.wg.Add(1)
	return true
}

func (r *syslogRegistry) untrack(c io.Closer) {
	r.mu.Lock()
	delete(r.closers, c)
	r.mu.Unlock()
	r.wg.Done()
}

// closeAll closes every listener and connection and waits for their
// goroutines, which store what they have read first.
func (r *syslogRegistry) closeAll() {
	r.mu.Lock()
	r.closed = true
	for c := range r.closers {
		c.Close()
	}
	r.mu.Unlock()
	r.wg.Wait()
}

// ServeSyslogTCP accepts syslog connections on ln until Shutdown (then it
// returns nil) or an accept error.
func (s *Server) ServeSyslogTCP(ln net.Listener, opts SyslogOptions) error {
	opts = opts.withDefaults()
	if !s.syslogd.track(ln) {
		return nil
	}
	defer s.syslogd.untrack(ln)
	slots := make(chan struct{}, opts.MaxConns)
	for {
		slots <- struct{}{}
		conn, err := ln.Accept()
		if err != nil {
			<-slots
			if s.draining.Load() || errors.Is(err, net.ErrClosed) {
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				time.Sleep(50 * time.Millisecond)
				continue
			}
			return err
		}
		if !s.syslogd.track(conn) {
			<-slots
			return nil
		}
		go func() {
			defer func() { <-slots }()
			defer s.syslogd.untrack(conn)
			defer conn.Close()
			s.syslogConn(conn, opts)
		}()
	}
}

// syslogConn reads one TCP connection's messages and stores them in
// batches: a batch ends when no more bytes are waiting, or at its bounds.
func (s *Server) syslogConn(conn net.Conn, opts SyslogOptions) {
	r := bufio.NewReaderSize(conn, opts.MaxMessageBytes+16)
	var b syslogBatch
	for {
		_ = conn.SetReadDeadline(time.Now().Add(opts.IdleTimeout))
		frame, err := readSyslogFrame(r, opts.MaxMessageBytes)
		switch {
		case errors.Is(err, errFrameSkipped):
			s.countDrops(nil, DropUnparseableLine, 1, "syslog messages that did not parse")
		case err != nil:
			if !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) && !isTimeout(err) {
				s.log.Debug("syslog connection", "remote", conn.RemoteAddr().String(), "err", err)
			}
			s.syslogFlush(&b, opts, true)
			return
		default:
			b.add(frame)
		}
		if r.Buffered() == 0 || b.full() {
			s.syslogFlush(&b, opts, true)
		}
	}
}

// errFrameSkipped: a message over MaxMessageBytes, or a frame whose octet
// count is malformed, skipped and counted.
var errFrameSkipped = errors.New("syslog frame skipped")

// readSyslogFrame reads one message: "LEN SP MSG" when the frame starts
// with a digit, else a line. The frame aliases r's buffer until the next
// read.
func readSyslogFrame(r *bufio.Reader, max int) ([]byte, error) {
	for {
		c, err := r.ReadByte()
		if err != nil {
			return nil, err
		}
		if c == '\n' || c == '\r' || c == 0 {
			continue // blank lines and trailers between frames
		}
		if err := r.UnreadByte(); err != nil {
			return nil, err
		}
		if c < '0' || c > '9' {
			break
		}
		n := 0
		for digits := 0; ; digits++ {
			c, err := r.ReadByte()
			if err != nil {
				return nil, err
			}
			if c == ' ' && digits > 0 {
				break
			}
			if c < '0' || c > '9' || digits >= 9 {
				// Not an octet count after all: read the rest as a line.
				line, err := readSyslogLine(r, max)
				if err == nil || (errors.Is(err, errFrameSkipped) && len(line) == 0) {
					return nil, errFrameSkipped
				}
				return nil, err
			}
			n = n*10 + int(c-'0')
		}
		if n > max {
			if _, err := r.Discard(n); err != nil {
				return nil, err
			}
			return nil, errFrameSkipped
		}
		buf, err := r.Peek(n)
		if err != nil {
			return nil, err
		}
		_, _ = r.Discard(n)
		return buf, nil
	}
	return readSyslogLine(r, max)
}

// readSyslogLine reads up to '\n'; a line longer than max is skipped.
func readSyslogLine(r *bufio.Reader, max int) ([]byte, error) {
	line, err := r.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		for errors.Is(err, bufio.ErrBufferFull) {
			_, err = r.ReadSlice('\n')
		}
		if err != nil {
			return nil, err
		}
		return nil, errFrameSkipped
	}
	if err != nil && !(errors.Is(err, io.EOF) && len(line) > 0) {
		return nil, err
	}
	if len(line) > max+1 {
		return nil, errFrameSkipped
	}
	return line, nil
}

// syslogBatch holds copies of the messages read since the last store.
type syslogBatch struct {
	buf    []byte
	ends   []int
	frames [][]byte
}

func (b *syslogBatch) add(frame []byte) {
	b.buf = append(b.buf, frame...)
	b.ends = append(b.ends, len(b.buf))
}

func (b *syslogBatch) full() bool {
	return len(b.ends) >= syslogBatchFrames || len(b.buf) >= syslogBatchBytes
}

func (b *syslogBatch) reset() {
	b.buf, b.ends = b.buf[:0], b.ends[:0]
	if cap(b.buf) > 4*syslogBatchBytes {
		b.buf = nil
	}
}

// syslogFlush parses and stores a batch. wait says whether to keep
// retrying while the shard pushes back (TCP); otherwise it gives up after
// syslogUDPRetry. The batch is empty afterwards.
func (s *Server) syslogFlush(b *syslogBatch, opts SyslogOptions, wait bool) {
	if len(b.ends) == 0 {
		return
	}
	defer b.reset()
	b.frames = b.frames[:0]
	start := 0
	for _, end := range b.ends {
		b.frames = append(b.frames, b.buf[start:end])
		start = end
	}
	w := s.workers.get()
	defer s.workers.put(w)
	res := w.dec.DecodeSyslogFrames(b.frames, s.opts.Now())
	src := s.syslogSource(opts.Source)
	s.countDrops(src, DropUnparseableLine, res.Skipped, "syslog messages that did not parse")
	if len(res.Events) == 0 {
		return
	}
	if src == nil {
		s.countDrops(nil, DropRejected, len(res.Events), "syslog messages the listener could not store")
		return
	}
	w.meter.start(routeIngestSyslog, len(b.buf), len(res.Events))
	deadline := time.Now().Add(syslogUDPRetry)
	for delay := 50 * time.Millisecond; ; delay = min(2*delay, time.Second) {
		err := s.store(w, src, res.Events, nil)
		if err == nil {
			return
		}
		if !errors.Is(err, engine.ErrBackpressure) || s.draining.Load() || (!wait && time.Now().After(deadline)) {
			if !errors.Is(err, engine.ErrClosed) {
				s.log.Error("syslog: events dropped", "source_id", src.ID, "events", len(res.Events), "err", err)
			}
			s.countDrops(src, DropRejected, len(res.Events), "syslog messages the listener could not store")
			return
		}
		select {
		case <-time.After(delay):
		case <-s.baseCtx.Done():
		}
	}
}

// syslogSource looks the listener's source up by name, then token; a
// missing source is logged once per name.
func (s *Server) syslogSource(nameOrToken string) *catalog.Source {
	p := sourcePicker{s: s}
	if src := p.lookup(nameOrToken); src != nil {
		return src
	}
	if _, warned := s.syslogd.warned.LoadOrStore(nameOrToken, true); !warned {
		s.log.Warn("syslog listener: no such source; messages are dropped (and counted) until it is created", "source", nameOrToken)
	}
	return nil
}

// ServeSyslogUDP reads syslog datagrams from pc until Shutdown (then it
// returns nil) or a read error.
func (s *Server) ServeSyslogUDP(pc net.PacketConn, opts SyslogOptions) error {
	opts = opts.withDefaults()
	if !s.syslogd.track(pc) {
		return nil
	}
	defer s.syslogd.untrack(pc)
	buf := make([]byte, 64<<10)
	var b syslogBatch
	for {
		if len(b.ends) == 0 {
			_ = pc.SetReadDeadline(time.Time{})
		} else {
			_ = pc.SetReadDeadline(time.Now().Add(syslogUDPLinger))
		}
		n, _, err := pc.ReadFrom(buf)
		if err != nil {
			if isTimeout(err) {
				s.syslogFlush(&b, opts, false)
				continue
			}
			s.syslogFlush(&b, opts, false)
			if s.draining.Load() || errors.Is(err, net.ErrClosed) {
				return nil
			}
			return err
		}
		if n > opts.MaxMessageBytes {
			s.countDrops(nil, DropUnparseableLine, 1, "syslog messages that did not parse")
			continue
		}
		b.add(buf[:n])
		if b.full() {
			s.syslogFlush(&b, opts, false)
		}
	}
}

// shutdownSyslog stops the syslog listeners; called by Shutdown.
func (s *Server) shutdownSyslog(context.Context) { s.syslogd.closeAll() }
