package httpapi

import (
	"bufio"
	"bytes"
	"errors"
	"testing"
)

// FuzzSyslogFraming feeds a TCP stream to the listener's framer: it must
// not panic, must make progress, and must hand out frames no longer than
// the limit.
func FuzzSyslogFraming(f *testing.F) {
	for _, s := range []string{
		"17 <13>1 - - - - - x<13>Jul 10 12:00:03 h app[1]: line\n\r\n",
		"99999999999 x\n12x y\n5 ab",
		"3 abc\x00\x004 defg",
		"\n\n\n<13>no newline at the end",
	} {
		f.Add([]byte(s))
	}
	const max = 64
	f.Fuzz(func(t *testing.T, data []byte) {
		r := bufio.NewReaderSize(bytes.NewReader(data), max+16)
		for range len(data) + 1 {
			frame, err := readSyslogFrame(r, max)
			if errors.Is(err, errFrameSkipped) {
				continue
			}
			if err != nil {
				return
			}
			if len(frame) > max+1 { // a line keeps its newline
				t.Fatalf("frame of %d bytes, limit %d", len(frame), max)
			}
		}
		if _, err := readSyslogFrame(r, max); err == nil || errors.Is(err, errFrameSkipped) {
			t.Fatalf("the framer handed out more frames than the %d bytes allow", len(data))
		}
	})
}
