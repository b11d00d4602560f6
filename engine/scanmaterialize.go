package engine

import (
	"context"
	"errors"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/sediment/sediment/internal/recovered"
	"github.com/sediment/sediment/internal/vec"
	"github.com/sediment/sediment/segment"
)

// Materialize writes the JSON of the records refs point at (see scan.Scan).
func (sc *shardScan) Materialize(ctx context.Context, path string, asArray bool, refs []int64, dst []string) error {
	if sc.memo != nil {
		// The scan that read these rows is over: the records find the
		// pages it kept, each of theirs is read once.
		sc.memo.Freeze()
	}
	parts := sc.sn.partList()
	byPart := map[int][]int{} // part → indexes into refs
	for i, ref := range refs {
		pid := int(ref >> 32)
		if pid < 0 || pid >= len(parts) {
			return errors.New("engine: row reference from another scan")
		}
		byPart[pid] = append(byPart[pid], i)
	}
	// One task per head and per segment block: they write different rows
	// of dst, and run on several cores (each decompresses its own pages).
	// Records scattered over many blocks (rare matches) stop filling the
	// page cache once they have read much.
	pass := newPassReads()
	var tasks []func() error
	for pid, idxs := range byPart {
		p := parts[pid]
		var cols []colRef
		for cp, cs := range p.byPath {
			if hasPrefixPath(cp, path) {
				cols = append(cols, cs...)
			}
		}
		sort.Slice(idxs, func(i, j int) bool { return refs[idxs[i]] < refs[idxs[j]] })
		objects := presenceOrder(cols)
		layout := newRecordLayout(cols, path)
		emit := func(cr colReader, rows []int32, at []int) error {
			vecs := make([]vec.Vector, len(cols))
			if err := readRecordColumns(cr, cols, objects, rows, vecs); err != nil {
				return err
			}
			rb := layout.builder(vecs)
			for k := range rows {
				v, err := rb.build(k)
				if err != nil {
					return err
				}
				dst[at[k]] = string(appendBQJSON(nil, &v, asArray))
			}
			return nil
		}
		if p.hv != nil {
			rows := make([]int32, len(idxs))
			for k, i := range idxs {
				rows[k] = int32(refs[i] & 0xffffffff)
			}
			at := make([]int, len(idxs))
			copy(at, idxs)
			tasks = append(tasks, func() error { return emit(headReader{p.hv}, rows, at) })
			continue
		}
		r := p.seg.r
		// Records built before (segment.Reader.KeepRowText) are taken as
		// they are; only the others are read. A large answer (an export,
		// not a page of results) neither looks for kept records nor keeps
		// its own: they would only push the records of interactive
		// queries out of the small cache.
		keep := len(refs) <= maxKeptRecords
		tag := recordTextTag(path, asArray)
		if keep {
			idxs = slices.DeleteFunc(idxs, func(i int) bool {
				text, ok := r.RowText(int(refs[i]&0xffffffff), tag)
				if ok {
					dst[i] = text
				}
				return ok
			})
		}
		for start := 0; start < len(idxs); {
			row := int(refs[idxs[start]] & 0xffffffff)
			b := sort.Search(r.NumBlocks(), func(k int) bool { bi := r.Block(k); return bi.FirstRow+bi.Rows > row })
			if b >= r.NumBlocks() {
				return errors.New("engine: row reference out of range")
			}
			bi := r.Block(b)
			end := start
			var rows []int32
			var at []int
			for end < len(idxs) {
				rr := int(refs[idxs[end]] & 0xffffffff)
				if rr >= bi.FirstRow+bi.Rows {
					break
				}
				rows = append(rows, int32(rr-bi.FirstRow))
				at = append(at, idxs[end])
				end++
			}
			tasks = append(tasks, func() error {
				err := emitDedup(&blockReader{r: r, b: b, pass: pass, memo: sc.memo}, rows, at, emit, dst)
				if err == nil && keep {
					for k, row := range rows {
						r.KeepRowText(bi.FirstRow+int(row), tag, dst[at[k]])
					}
				}
				if lu, ok := readLoss(ctx, p.seg, b, err); ok {
					// Rows were emitted already: the query fails, saying why.
					return &PartialError{Source: sc.name, Cause: lu.cause}
				}
				if err != nil && errors.Is(err, segment.ErrCorrupt) {
					// The rows were emitted already: the records cannot be
					// left out without a wrong answer, so the query fails.
					lu := p.seg.shard.markBlockDamaged(p.seg, b, err)
					return &DamageError{Source: sc.name, File: filepath.Join("segments", segName(lu.seg)), Block: b, Cause: lu.cause, Fresh: true}
				}
				return sc.clientError(err)
			})
			start = end
		}
	}
	return runTasks(ctx, tasks)
}

// maxKeptRecords is the most records an answer may have for Materialize
// to keep them (a Studio page is 100 rows; the log explorer asks for up
// to 1000).
const maxKeptRecords = 1000

// recordTextTag names the JSON of a record of the columns under path
// (written as a one-element array with asArray) among a segment row's
// kept texts.
func recordTextTag(path string, asArray bool) string {
	if asArray {
		return "record[]\x00" + path
	}
	return "record\x00" + path
}

// runTasks runs tasks on up to GOMAXPROCS goroutines and returns the
// first error (the other tasks not yet started are left out). A panic in a
// task fails the call, not the process.
func runTasks(ctx context.Context, tasks []func() error) error {
	workers := min(len(tasks), runtime.GOMAXPROCS(0))
	if workers <= 1 {
		for _, t := range tasks {
			if err := ctx.Err(); err != nil {
				return err
			}
			if err := t(); err != nil {
				return err
			}
		}
		return nil
	}
	var (
		next     atomic.Int64
		mu       sync.Mutex
		firstErr error
		wg       sync.WaitGroup
	)
	fail := func(err error) {
		mu.Lock()
		if firstErr == nil {
			firstErr = err
		}
		mu.Unlock()
	}
	failed := func() bool {
		mu.Lock()
		defer mu.Unlock()
		return firstErr != nil
	}
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() {
				if r := recover(); r != nil {
					fail(recovered.New(r))
				}
			}()
			for {
				i := int(next.Add(1) - 1)
				if i >= len(tasks) || failed() {
					return
				}
				if err := ctx.Err(); err != nil {
					fail(err)
					return
				}
				if err := tasks[i](); err != nil {
					fail(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	return firstErr
}

// emitDedup materialises unique rows once and copies the text to
// duplicates (the same record referenced several times).
func emitDedup(cr colReader, rows []int32, at []int, emit func(colReader, []int32, []int) error, dst []string) error {
	uniq := rows[:0:0]
	var uat []int
	var dupOf []int
	for k, r := range rows {
		if len(uniq) > 0 && uniq[len(uniq)-1] == r {
			dupOf = append(dupOf, k)
			continue
		}
		uniq = append(uniq, r)
		uat = append(uat, at[k])
		dupOf = append(dupOf, -1)
	}
	if err := emit(cr, uniq, uat); err != nil {
		return err
	}
	last := -1
	for k := range rows {
		if dupOf[k] == -1 {
			last = at[k]
		} else {
			dst[at[k]] = dst[last]
		}
	}
	return nil
}
