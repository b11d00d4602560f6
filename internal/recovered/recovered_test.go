package recovered

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

func explode(i []int) int { return i[3] }

func run(i []int) (n int, err error) {
	defer Catch(&err)
	return explode(i), nil
}

func TestCatchKeepsTheStackOfThePanic(t *testing.T) {
	_, err := run(nil)
	e := As(err)
	if e == nil {
		t.Fatalf("got %v, want a recovered panic", err)
	}
	if !strings.Contains(e.Error(), "index out of range [3] with length 0") {
		t.Errorf("message %q does not name the panic", e.Error())
	}
	if strings.Contains(e.Error(), "goroutine") {
		t.Errorf("message %q carries the stack", e.Error())
	}
	if !strings.Contains(string(e.Stack), "recovered.explode") {
		t.Errorf("stack does not show the panicking frame:\n%s", e.Stack)
	}
	var re interface{ RuntimeError() }
	if !errors.As(err, &re) {
		t.Errorf("the runtime error is not reachable through Unwrap")
	}
}

func TestNoPanicNoError(t *testing.T) {
	if n, err := run([]int{1, 2, 3, 4}); err != nil || n != 4 {
		t.Fatalf("got %d, %v", n, err)
	}
}

func TestNewKeepsACarriedError(t *testing.T) {
	first := New("boom")
	if New(first) != first {
		t.Fatal("a re-raised *Error must keep its original stack")
	}
	wrapped := fmt.Errorf("query: %w", first)
	if As(wrapped) != first {
		t.Fatal("As must find the error through wrapping")
	}
}

func TestFirstReport(t *testing.T) {
	e := New("boom")
	if !e.FirstReport() || e.FirstReport() {
		t.Fatal("a panic must be reported exactly once")
	}
}
