package bench

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// IsTerminal reports whether f is a character device (a terminal), where
// a progress bar that redraws one line makes sense.
func IsTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// Progress draws a one-line progress bar, redrawn a few times a second,
// for one step at a time. A nil *Progress draws nothing, so callers need
// not check. Add may be called from several goroutines.
type Progress struct {
	w        io.Writer
	interval time.Duration

	mu    sync.Mutex // guards the step fields and drawing
	label string
	unit  string
	total int64
	start time.Time
	stop  chan struct{}
	done  chan struct{}

	n atomic.Int64
}

// NewProgress returns a progress bar drawing on w, or nil (no bar) when w
// is nil.
func NewProgress(w io.Writer) *Progress {
	if w == nil {
		return nil
	}
	return &Progress{w: w, interval: 200 * time.Millisecond}
}

// Start begins a step of total units (0: unknown), ending the previous one.
func (p *Progress) Start(label string, total int64, unit string) {
	if p == nil {
		return
	}
	p.Finish()
	p.mu.Lock()
	p.label, p.unit, p.total, p.start = label, unit, total, time.Now()
	p.n.Store(0)
	p.stop, p.done = make(chan struct{}), make(chan struct{})
	stop, done := p.stop, p.done
	p.mu.Unlock()
	go func() {
		defer close(done)
		t := time.NewTicker(p.interval)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				p.draw(false)
			}
		}
	}()
}

// Add counts n more units done.
func (p *Progress) Add(n int64) {
	if p != nil {
		p.n.Add(n)
	}
}

// Finish ends the current step, leaving its final line.
func (p *Progress) Finish() {
	if p == nil {
		return
	}
	p.mu.Lock()
	stop, done := p.stop, p.done
	p.stop, p.done = nil, nil
	p.mu.Unlock()
	if stop == nil {
		return
	}
	close(stop)
	<-done
	p.draw(true)
}

func (p *Progress) draw(final bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := p.n.Load()
	elapsed := time.Since(p.start)
	var b strings.Builder
	b.WriteString("\r\x1b[K") // to column 0, clear the line
	b.WriteString(p.label)
	if p.total > 0 {
		const width = 30
		frac := min(float64(n)/float64(p.total), 1)
		fill := int(frac * width)
		fmt.Fprintf(&b, " [%s%s] %3.0f%% %d/%d %s", strings.Repeat("#", fill), strings.Repeat(" ", width-fill), frac*100, n, p.total, p.unit)
	} else if n > 0 {
		fmt.Fprintf(&b, " %d %s", n, p.unit)
	}
	fmt.Fprintf(&b, " %s", elapsed.Round(100*time.Millisecond))
	if final {
		b.WriteByte('\n')
	}
	io.WriteString(p.w, b.String())
}
