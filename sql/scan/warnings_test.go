package scan

import (
	"context"
	"fmt"
	"sync"
	"testing"
)

func TestWarningsCollect(t *testing.T) {
	if WarningsFrom(context.Background()) != nil {
		t.Fatal("a bare context carries a collector")
	}
	w := &Warnings{}
	ctx := WithWarnings(context.Background(), w)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			WarningsFrom(ctx).Add("a")
			WarningsFrom(ctx).Add(fmt.Sprint("b", i%2))
		}()
	}
	wg.Wait()
	if got := w.List(); len(got) != 3 || got[0] != "a" && got[0] != "b0" && got[0] != "b1" {
		t.Fatalf("got %q", got)
	}
	var none *Warnings
	none.Add("x")
	if none.List() != nil {
		t.Fatal("nil collector lists warnings")
	}
	many := &Warnings{}
	for i := range MaxWarnings + 5 {
		many.Add(fmt.Sprint(i))
	}
	if got := many.List(); len(got) != MaxWarnings+1 || got[MaxWarnings] != "5 more warnings like these are not listed" {
		t.Fatalf("bounded list: %d %q", len(got), got[len(got)-1])
	}
}
