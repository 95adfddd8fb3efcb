package core

import (
	"sync"
	"testing"
)

// The expression compiles once, on first use, also when goroutines race
// to it, and answers as regexp does.
func TestCompiledOnFirstUse(t *testing.T) {
	r := LazyRegexp(`^a(b+)$`)
	if r.re != nil {
		t.Fatal("compiled before use")
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() { defer wg.Done(); _ = r.MatchString("abb") }()
	}
	wg.Wait()
	if !r.MatchString("abbb") || r.MatchString("ac") {
		t.Error("MatchString")
	}
	if m := r.FindStringSubmatch("abb"); len(m) != 2 || m[1] != "bb" {
		t.Errorf("FindStringSubmatch: %q", m)
	}
	if r.String() != `^a(b+)$` {
		t.Errorf("String: %q", r.String())
	}
	all := LazyRegexp(`x(\d)`)
	if m := all.FindAllStringSubmatch("x1 x2", -1); len(m) != 2 || m[1][1] != "2" {
		t.Errorf("FindAllStringSubmatch: %q", m)
	}
	if m := all.FindAllStringSubmatchIndex("x1 x2", -1); len(m) != 2 || m[1][2] != 4 {
		t.Errorf("FindAllStringSubmatchIndex: %v", m)
	}
}

// A bad expression panics where it is first used, as MustCompile would.
func TestBadExpressionPanicsOnUse(t *testing.T) {
	r := LazyRegexp(`(`)
	defer func() {
		if recover() == nil {
			t.Error("no panic")
		}
	}()
	r.MatchString("x")
}
