package testhosts

import (
	"log"
	"os"
)

// Program is a T for a program (a benchmark): a failure ends it after
// running the cleanups; Done runs them at its end.
type Program struct{ cleanups []func() }

// Helper does nothing: a program has no test frames to skip.
func (p *Program) Helper() {}

// Fatalf runs the cleanups and exits with the message.
func (p *Program) Fatalf(format string, args ...any) { p.Done(); log.Fatalf(format, args...) }

// Skipf ends the program as Fatalf does: a benchmark cannot go on
// without what a test would skip for.
func (p *Program) Skipf(format string, args ...any) {
	p.Fatalf("cannot run: "+format, args...)
}

// Cleanup registers f to run at Done, last registered first.
func (p *Program) Cleanup(f func()) { p.cleanups = append(p.cleanups, f) }

// TempDir makes a directory removed at Done.
func (p *Program) TempDir() string {
	d, err := os.MkdirTemp("", "shoal-bench-")
	if err != nil {
		p.Fatalf("%v", err)
	}
	p.Cleanup(func() { os.RemoveAll(d) })
	return d
}

// Done runs the cleanups.
func (p *Program) Done() {
	for i := len(p.cleanups) - 1; i >= 0; i-- {
		p.cleanups[i]()
	}
	p.cleanups = nil
}
