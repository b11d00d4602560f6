package segment

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/sediment/sediment/internal/vec"
)

// memoSegment writes a segment of one block with a text column, a
// dictionary column and a message derived from both (as a flush writes
// a platform event's), and opens it through a countingFile.
func memoSegment(t *testing.T) (*Reader, *countingFile, int) {
	t.Helper()
	const n = 6000
	rng := rand.New(rand.NewPCG(3, 3))
	url := make([]any, n)
	status := make([]any, n)
	msg := make([]any, n)
	ts := make([]any, n)
	for i := range url {
		ts[i] = int64(1_700_000_000_000_000 + i)
		u := fmt.Sprintf("https://%08x.example.co/rest/v1/item?id=%d", rng.Uint32(), rng.IntN(1e6))
		s := []string{"GET", "POST", "PATCH"}[rng.IntN(3)]
		url[i], status[i], msg[i] = u, s, s+" | "+u
	}
	cols := []testColumn{
		{ColumnDesc{Path: "timestamp", Type: TypeTimestamp}, ts},
		{ColumnDesc{Path: "event_message", Type: TypeString}, msg},
		{ColumnDesc{Path: "metadata.method", Type: TypeString}, status},
		{ColumnDesc{Path: "metadata.url", Type: TypeString}, url},
	}
	r, cf := writeCounted(t, cols, n, &WriterOptions{PageRows: 1024})
	return r, cf, n
}

// TestUnitMemoAnswersLaterReads: a read of a few rows through a memo
// keeps the pages of the columns the memo is told to keep (the message's
// references under metadata), a later read of those rows through it
// reads nothing from the file and returns the same values; once frozen it
// takes no more pages, and once released it answers nothing.
func TestUnitMemoAnswersLaterReads(t *testing.T) {
	defer SetPageCacheBytes(SetPageCacheBytes(0))
	defer SetDictCacheBytes(SetDictCacheBytes(0))
	r, cf, n := memoSegment(t)
	msgCol, urlCol := r.Column("event_message", TypeString), r.Column("metadata.url", TypeString)
	if c := r.testChunk(0, msgCol); c == nil || c.enc != encDerived {
		t.Skip("the writer did not derive the message from the URL")
	}
	memo := NewUnitMemo(1<<20, func(path string) bool { return path == "metadata.url" || path == "metadata.method" })
	rows := []int32{int32(n / 3)}
	want := map[int]string{}
	for _, col := range []int{msgCol, urlCol} {
		var v vec.Vector
		if err := r.Read(0, col, 0, 0, rows, &v, ReadOptions{Once: true}); err != nil {
			t.Fatal(err)
		}
		want[col] = v.StringAt(0)
	}

	// The message reads the URL it is built from: the memo keeps that page.
	var msg vec.Vector
	if err := r.Read(0, msgCol, 0, 0, rows, &msg, ReadOptions{Once: true, Memo: memo}); err != nil {
		t.Fatal(err)
	}
	if got := msg.StringAt(0); got != want[msgCol] {
		t.Fatalf("message through the memo %q, want %q", got, want[msgCol])
	}
	if memo.Bytes() == 0 {
		t.Fatal("the memo kept no page of the message's references")
	}
	memo.Freeze()
	kept := memo.Bytes()
	before := cf.reads
	var url vec.Vector
	if err := r.Read(0, urlCol, 0, 0, rows, &url, ReadOptions{Once: true, Memo: memo}); err != nil {
		t.Fatal(err)
	}
	if got := url.StringAt(0); got != want[urlCol] {
		t.Fatalf("URL through the memo %q, want %q", got, want[urlCol])
	}
	if cf.reads != before {
		t.Fatalf("the URL's row read %d units from the file, want none (the memo holds its page)", cf.reads-before)
	}
	// Frozen: another page of the URL is read but not kept.
	if err := r.Read(0, urlCol, 0, 0, []int32{int32(n - 1)}, &url, ReadOptions{Once: true, Memo: memo}); err != nil {
		t.Fatal(err)
	}
	if memo.Bytes() != kept {
		t.Fatalf("a frozen memo grew from %d to %d bytes", kept, memo.Bytes())
	}
	memo.Release()
	if memo.Bytes() != 0 {
		t.Fatalf("a released memo holds %d bytes", memo.Bytes())
	}
	before = cf.reads
	if err := r.Read(0, urlCol, 0, 0, rows, &url, ReadOptions{Once: true, Memo: memo}); err != nil {
		t.Fatal(err)
	}
	if got := url.StringAt(0); got != want[urlCol] || cf.reads == before {
		t.Fatalf("after Release: %q with %d reads, want %q read from the file", got, cf.reads-before, want[urlCol])
	}
}

// TestUnitMemoKeepsOnlySparseReadsWithinBudget: a read of most of a page
// (a predicate over a block) and pages of columns the memo is not told to
// keep are not kept, and the memo never holds more than its budget.
func TestUnitMemoKeepsOnlySparseReadsWithinBudget(t *testing.T) {
	defer SetPageCacheBytes(SetPageCacheBytes(0))
	r, _, n := memoSegment(t)
	urlCol := r.Column("metadata.url", TypeString)
	var v vec.Vector
	memo := NewUnitMemo(1<<20, func(path string) bool { return path == "metadata.url" })
	if err := r.Read(0, urlCol, 0, n, nil, &v, ReadOptions{Once: true, Memo: memo}); err != nil {
		t.Fatal(err)
	}
	if memo.Bytes() != 0 {
		t.Fatalf("a read of every row kept %d bytes", memo.Bytes())
	}
	other := NewUnitMemo(1<<20, func(path string) bool { return false })
	if err := r.Read(0, urlCol, 0, 0, []int32{5}, &v, ReadOptions{Once: true, Memo: other}); err != nil {
		t.Fatal(err)
	}
	if other.Bytes() != 0 {
		t.Fatalf("a column the memo does not keep took %d bytes", other.Bytes())
	}
	small := NewUnitMemo(120<<10, func(string) bool { return true })
	for row := 0; row < n; row += 1024 {
		if err := r.Read(0, urlCol, 0, 0, []int32{int32(row)}, &v, ReadOptions{Once: true, Memo: small}); err != nil {
			t.Fatal(err)
		}
		if small.Bytes() > 120<<10 {
			t.Fatalf("the memo holds %d bytes, over its budget of %d", small.Bytes(), 120<<10)
		}
	}
	if small.Bytes() == 0 {
		t.Fatal("the memo kept nothing")
	}
}
