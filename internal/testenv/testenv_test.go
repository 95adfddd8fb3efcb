package testenv_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/internal/testenv"
)

// recorder is a T that records what Require did.
type recorder struct{ skipped, failed string }

func (r *recorder) Helper() {}
func (r *recorder) Skipf(format string, args ...any) {
	r.skipped = fmt.Sprintf(format, args...)
}
func (r *recorder) Fatalf(format string, args ...any) {
	r.failed = fmt.Sprintf(format, args...)
}

// A missing dependency skips the test, naming what is missing, why and
// how to get it; under SHOAL_TEST_REQUIRE_ALL the same fails it; a
// present one does neither.
func TestRequire(t *testing.T) {
	missing := func() error { return errors.New("no /usr/lib/postgresql/*/bin/initdb") }
	for _, c := range []struct {
		name, env          string
		check              func() error
		wantSkip, wantFail bool
	}{
		{"missing", "", missing, true, false},
		{"missing, require all", "1", missing, false, true},
		{"missing, require all off", "0", missing, true, false},
		{"present", "", func() error { return nil }, false, false},
		{"present, require all", "1", func() error { return nil }, false, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv(testenv.RequireAllVar, c.env)
			r := &recorder{}
			testenv.Require(r, "PostgreSQL's initdb", c.check, "apt-get install postgresql")
			if (r.skipped != "") != c.wantSkip || (r.failed != "") != c.wantFail {
				t.Fatalf("skipped %q, failed %q; want skip %v, fail %v", r.skipped, r.failed, c.wantSkip, c.wantFail)
			}
			for _, msg := range []string{r.skipped, r.failed} {
				if msg == "" {
					continue
				}
				for _, want := range []string{"needs PostgreSQL's initdb", "no /usr/lib/postgresql/*/bin/initdb", "apt-get install postgresql", "scripts/test", testenv.RequireAllVar} {
					if !strings.Contains(msg, want) {
						t.Errorf("%q lacks %q", msg, want)
					}
				}
			}
		})
	}
}

// Files, Command and Glob name the path or program that is missing.
func TestChecks(t *testing.T) {
	t.Setenv(testenv.RequireAllVar, "")
	dir := t.TempDir()
	absent := filepath.Join(dir, "absent")
	r := &recorder{}
	testenv.Files(r, "a thing", "make it", dir, absent)
	if !strings.Contains(r.skipped, "no "+absent) || strings.Contains(r.skipped, "no "+dir+" ") {
		t.Errorf("Files: %q", r.skipped)
	}
	r = &recorder{}
	testenv.Command(r, "shoal-no-such-program", "a program", "install it")
	if !strings.Contains(r.skipped, "shoal-no-such-program not on the PATH") {
		t.Errorf("Command: %q", r.skipped)
	}
	r = &recorder{}
	if got := testenv.Glob(r, filepath.Join(dir, "*"), "anything", "make it"); len(got) != 0 || !strings.Contains(r.skipped, "no "+dir) {
		t.Errorf("Glob: %v, %q", got, r.skipped)
	}
	r = &recorder{}
	if got := testenv.Glob(r, dir, "the dir", "make it"); len(got) != 1 || r.skipped != "" {
		t.Errorf("Glob of a present dir: %v, %q", got, r.skipped)
	}
}

// A prebuilt binary named by SHOAL_SERVER_BIN is copied, executable, and
// the copy is the test's own; a missing one is an error naming the
// variable.
func TestServerBinaryCopiesThePrebuiltOne(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "prebuilt")
	if err := os.WriteFile(src, []byte("#!/bin/sh\necho built once\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	t.Setenv(testenv.ServerBinVar, src)
	dst := filepath.Join(dir, "mine")
	if err := testenv.ServerBinary(dst); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(dst); err != nil || string(b) != "#!/bin/sh\necho built once\n" {
		t.Fatalf("copy: %q, %v", b, err)
	}
	if fi, _ := os.Stat(dst); fi.Mode().Perm() != 0o755 {
		t.Fatalf("copy's mode %v, want 0755", fi.Mode().Perm())
	}
	t.Setenv(testenv.ServerBinVar, filepath.Join(dir, "absent"))
	if err := testenv.ServerBinary(dst); err == nil || !strings.Contains(err.Error(), testenv.ServerBinVar) {
		t.Fatalf("absent prebuilt binary: %v", err)
	}
}
