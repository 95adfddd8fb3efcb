package plainfile

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// A file opened here appends, reads back, keeps its mode, is closed on
// exec and stays blocking; a missing one is fs.ErrNotExist, as with
// os.OpenFile.
func TestOpenIsAnOrdinaryFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log")
	for _, s := range []string{"one\n", "two\n"} {
		f, err := Open(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteString(s); err != nil {
			t.Fatal(err)
		}
		fl, _ := unix.FcntlInt(f.Fd(), unix.F_GETFL, 0)
		fd, _ := unix.FcntlInt(f.Fd(), unix.F_GETFD, 0)
		if fl&unix.O_NONBLOCK != 0 || fd&unix.FD_CLOEXEC == 0 {
			t.Errorf("flags %#x, descriptor flags %#x: want blocking and close-on-exec", fl, fd)
		}
		f.Close()
	}
	f, err := Open(path, os.O_RDONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b, _ := io.ReadAll(f)
	fi, _ := f.Stat()
	if string(b) != "one\ntwo\n" || fi.Mode().Perm() != 0o600 {
		t.Fatalf("read %q, mode %v", b, fi.Mode())
	}
	if _, err := Open(filepath.Join(t.TempDir(), "none"), os.O_RDONLY, 0); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("a missing file: %v", err)
	}
}
