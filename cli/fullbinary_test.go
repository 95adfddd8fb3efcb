package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// `shoal server ...` in the CLI's binary execs shoal-server (found on the
// PATH here: the test binary has none beside it) with the command line
// as given, flags before the command included, under this program's name.
func TestStandInExecsTheFullBinaryWithTheSameArguments(t *testing.T) {
	dir := t.TempDir()
	full := filepath.Join(dir, FullBinaryName)
	if err := os.WriteFile(full, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir)
	var program string
	var argv []string
	fake := func(p string, a []string) error { program, argv = p, a; return nil }
	args := []string{"-o", "table", "server", "--data-dir", "/x", "--help"}
	var out, errb bytes.Buffer
	if code := RunWith(context.Background(), FullBinaryCommands(fake), args, strings.NewReader(""), &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if program != full {
		t.Errorf("exec'd %q, want %q", program, full)
	}
	if len(argv) == 0 || argv[0] != os.Args[0] || !slices.Equal(argv[1:], args) {
		t.Errorf("argv %q, want %q then %q", argv, os.Args[0], args)
	}
}

// Without the full binary the command fails naming it and how to build
// it; in-process (no exec) the stand-ins fail rather than replace the
// caller's process.
func TestStandInWithoutTheFullBinary(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	called := false
	var out, errb bytes.Buffer
	code := RunWith(context.Background(), FullBinaryCommands(func(string, []string) error { called = true; return nil }), []string{"agent", "--server", "x"}, strings.NewReader(""), &out, &errb)
	if code == 0 || called || !strings.Contains(errb.String(), "shoal-server") || !strings.Contains(errb.String(), "./cmd/shoal-server") {
		t.Errorf("exit %d, exec'd %v, stderr %q", code, called, errb.String())
	}
	errb.Reset()
	if code := Run(context.Background(), []string{"sim", "--trace", "x"}, strings.NewReader(""), &out, &errb); code == 0 || !strings.Contains(errb.String(), "not in-process") {
		t.Errorf("in-process: exit %d, stderr %q", code, errb.String())
	}
}
