package endpoints

import (
	"os"
	"sync"
	"testing"
)

// fixtureDirs are the data directories benchmark fixtures made; they are
// shared by the benchmarks of one run (so kept until it ends) and removed
// when it does, instead of leaving a data directory of a million events in
// the temporary directory per run.
var fixtureDirs dirList

type dirList struct {
	mu   sync.Mutex
	dirs []string
}

func (l *dirList) add(dir string) {
	l.mu.Lock()
	l.dirs = append(l.dirs, dir)
	l.mu.Unlock()
}

func (l *dirList) removeAll() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, d := range l.dirs {
		os.RemoveAll(d)
	}
	l.dirs = nil
}

func TestMain(m *testing.M) {
	code := m.Run()
	fixtureDirs.removeAll()
	os.Exit(code)
}
