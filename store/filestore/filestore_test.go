package filestore_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/store/filestore"
)

// sandbox is a store root next to an "outside" folder that nothing the
// store does may touch.
type sandbox struct {
	base, root, outside string
	fs                  *filestore.Store
}

func newSandbox(t *testing.T) *sandbox {
	t.Helper()
	base := t.TempDir()
	sb := &sandbox{base: base, root: filepath.Join(base, "store"), outside: filepath.Join(base, "outside")}
	if err := os.MkdirAll(sb.outside, 0o700); err != nil {
		t.Fatal(err)
	}
	s, err := filestore.Open(sb.root)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	sb.fs = s
	return sb
}

// files lists the regular files and symlinks under dir, relative to it.
func files(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// entries lists the names directly in dir.
func entries(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range es {
		out = append(out, e.Name())
	}
	return out
}

func wantInvalid(t *testing.T, what string, err error) {
	t.Helper()
	if err == nil {
		t.Errorf("%s: accepted, want EINVALID", what)
		return
	}
	if core.ErrorCode(err) != core.EINVALID {
		t.Errorf("%s: %v (code %s), want EINVALID", what, err, core.ErrorCode(err))
	}
}

func TestArtifactRoundTrip(t *testing.T) {
	sb := newSandbox(t)
	data := []byte("code archive")
	id, err := sb.fs.PutArtifact("default", bytes.NewReader(data), 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	if want := "sha256:" + hex.EncodeToString(sum[:]); id != want {
		t.Fatalf("id %s, want %s", id, want)
	}
	if !sb.fs.HasArtifact("default", id) {
		t.Fatal("HasArtifact is false for a stored artifact")
	}
	f, err := sb.fs.OpenArtifact("default", id)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(f)
	f.Close()
	if !bytes.Equal(got, data) {
		t.Fatalf("read %q, want %q", got, data)
	}
	other := "sha256:" + strings.Repeat("0", 64)
	if _, err := sb.fs.OpenArtifact("default", other); core.ErrorCode(err) != core.ENOTFOUND {
		t.Fatalf("missing artifact: %v, want ENOTFOUND", err)
	}
	if _, err := sb.fs.PutArtifact("default", strings.NewReader("too long"), 3); core.ErrorCode(err) != core.EINVALID {
		t.Fatalf("oversized upload: %v, want EINVALID", err)
	}
	// Another workspace neither sees nor opens it; nor does a workspace
	// name that is not one path component.
	if sb.fs.HasArtifact("other", id) {
		t.Error("another workspace has the artifact")
	}
	if _, err := sb.fs.OpenArtifact("other", id); core.ErrorCode(err) != core.ENOTFOUND {
		t.Errorf("another workspace opening it: %v, want ENOTFOUND", err)
	}
	for _, ws := range []string{"", "..", "../default", "a/b", ".tmp"} {
		if _, err := sb.fs.OpenArtifact(ws, id); core.ErrorCode(err) != core.EINVALID {
			t.Errorf("workspace %q: %v, want EINVALID", ws, err)
		}
		if _, err := sb.fs.PutArtifact(ws, strings.NewReader("x"), 10); core.ErrorCode(err) != core.EINVALID {
			t.Errorf("upload to workspace %q: %v, want EINVALID", ws, err)
		}
	}
}

func TestArtifactIDTraversal(t *testing.T) {
	sb := newSandbox(t)
	// Files an escaping ID could reach.
	secret := []byte("secret")
	for _, p := range []string{filepath.Join(sb.base, "x"), filepath.Join(sb.base, "x.tar.gz"), filepath.Join(sb.outside, "etc.tar.gz")} {
		if err := os.WriteFile(p, secret, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	hex64 := strings.Repeat("ab", 32)
	ids := []string{
		"",
		"../x",
		"../../x",
		"sha256:../../etc",
		"sha256:../x",
		"sha256:../outside/etc",
		"sha256:" + strings.Repeat("../", 21) + "x",
		"/etc/passwd",
		filepath.Join(sb.base, "x"),
		"sha256:/etc/passwd",
		"sha256:" + strings.Repeat("zz", 32),               // not hex
		"sha256:" + strings.ToUpper(hex64),                 // upper case
		"sha256:" + hex64[:63],                             // too short
		"sha256:" + hex64 + "0",                            // too long
		"sha256:" + hex64[:62] + "/x",                      // separator
		"sha256:" + hex64[:62] + "..",                      // dots
		"sha256:" + hex64[:63] + "\x00",                    // NUL
		"sha256:" + hex64[:61] + "\\.x",                    // backslash
		"md5:" + hex64,                                     // other algorithm
		hex64,                                              // no prefix
		"sha256:" + hex64 + "/../../../outside/etc.tar.gz", // suffix
	}
	for _, id := range ids {
		f, err := sb.fs.OpenArtifact("default", id)
		if f != nil {
			f.Close()
			t.Errorf("OpenArtifact(%q) opened a file", id)
		}
		wantInvalid(t, "OpenArtifact("+id+")", err)
		if sb.fs.HasArtifact("default", id) {
			t.Errorf("HasArtifact(%q) is true", id)
		}
	}
	if got := files(t, sb.root); len(got) != 0 {
		t.Errorf("files created in the store: %v", got)
	}
	if got := entries(t, sb.base); strings.Join(got, ",") != "outside,store,x,x.tar.gz" {
		t.Errorf("entries next to the store: %v", got)
	}
	if got := entries(t, sb.outside); strings.Join(got, ",") != "etc.tar.gz" {
		t.Errorf("entries outside: %v", got)
	}
}

var badNames = []string{
	"",
	".",
	"..",
	"../x",
	"../../etc",
	"a/b",
	"a/../b",
	"/abs",
	"/etc/passwd",
	`a\b`,
	`..\x`,
	`\x`,
	".hidden",
	".x",
	"a..b",
	"x..",
	"-dash",
	"_under",
	"a b",
	"a\x00b",
	"a\nb",
	"né",
	strings.Repeat("a", 256),
}

func TestNamesAreOnePathComponent(t *testing.T) {
	sb := newSandbox(t)
	for _, bad := range badNames {
		for _, names := range [][2]string{{bad, "job"}, {"default", bad}} {
			ws, job := names[0], names[1]
			what := func(op string) string { return op + "(" + strings.Join([]string{ws, job}, ", ") + ")" }
			wantInvalid(t, what("WriteLog"), sb.fs.WriteLog(ws, job, 1, 0, 0, []byte("pwned")))
			f, err := sb.fs.OpenLog(ws, job, 1, 0)
			if f != nil {
				f.Close()
			}
			wantInvalid(t, what("OpenLog"), err)
			wantInvalid(t, what("PutOutputs"), sb.fs.PutOutputs(ws, job, 1, 0, strings.NewReader("pwned"), 1<<20))
			o, err := sb.fs.OpenOutputs(ws, job, 1, 0)
			if o != nil {
				o.Close()
			}
			wantInvalid(t, what("OpenOutputs"), err)
			if sb.fs.HasOutputs(ws, job, 1, 0) {
				t.Errorf("%s is true", what("HasOutputs"))
			}
		}
	}
	if got := files(t, sb.root); len(got) != 0 {
		t.Errorf("files created in the store: %v", got)
	}
	if got := entries(t, sb.root); len(got) != 0 {
		t.Errorf("folders created in the store: %v", got)
	}
	if got := entries(t, sb.base); strings.Join(got, ",") != "outside,store" {
		t.Errorf("entries next to the store: %v", got)
	}
	if got := entries(t, sb.outside); len(got) != 0 {
		t.Errorf("entries outside: %v", got)
	}

	// The longest and oddest valid names still work.
	for _, good := range []string{"a", "A1", "x.y", "job_1-a.b", strings.Repeat("a", 255)} {
		if err := sb.fs.WriteLog("default", good, 1, 0, 0, []byte("ok")); err != nil {
			t.Errorf("WriteLog(default, %s): %v", good, err)
		}
		if err := sb.fs.PutOutputs(good, "job", 1, 0, strings.NewReader("ok"), 10); err != nil {
			t.Errorf("PutOutputs(%s, job): %v", good, err)
		}
	}
}

func TestLogAndOutputsRoundTrip(t *testing.T) {
	sb := newSandbox(t)
	if err := sb.fs.WriteLog("Default", "j1", 2, 1, 0, []byte("hello ")); err != nil {
		t.Fatal(err)
	}
	if err := sb.fs.WriteLog("Default", "j1", 2, 1, 6, []byte("world\n")); err != nil {
		t.Fatal(err)
	}
	// A retried chunk at the same offset is idempotent.
	if err := sb.fs.WriteLog("default", "j1", 2, 1, 6, []byte("world\n")); err != nil {
		t.Fatal(err)
	}
	f, err := sb.fs.OpenLog("DEFAULT", "j1", 2, 1)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(f)
	f.Close()
	if string(got) != "hello world\n" {
		t.Fatalf("log %q", got)
	}
	if _, err := sb.fs.OpenLog("default", "j1", 2, 0); core.ErrorCode(err) != core.ENOTFOUND {
		t.Fatalf("missing log: %v, want ENOTFOUND", err)
	}
	if err := sb.fs.PutOutputs("default", "j1", 2, 1, strings.NewReader("tgz"), 3); err != nil {
		t.Fatal(err)
	}
	if !sb.fs.HasOutputs("default", "j1", 2, 1) || sb.fs.HasOutputs("default", "j1", 1, 1) {
		t.Fatal("HasOutputs is wrong")
	}
	if err := sb.fs.PutOutputs("default", "j1", 3, 0, strings.NewReader("four"), 3); core.ErrorCode(err) != core.EINVALID {
		t.Fatalf("oversized outputs: %v, want EINVALID", err)
	}
	if sb.fs.HasOutputs("default", "j1", 3, 0) {
		t.Fatal("oversized outputs were kept")
	}
}

// symlink plants link -> target, skipping where symlinks are unavailable.
func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(link), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		if runtime.GOOS == "windows" {
			t.Skipf("symlinks unavailable: %v", err)
		}
		t.Fatal(err)
	}
}

// A symlink planted inside the store (by a bug, or someone with access to
// the data directory) must not lead writes or reads outside the root.
func TestSymlinkOutOfRootNotFollowed(t *testing.T) {
	t.Run("logs folder", func(t *testing.T) {
		sb := newSandbox(t)
		symlink(t, sb.outside, filepath.Join(sb.root, "logs"))
		if err := sb.fs.WriteLog("default", "j1", 1, 0, 0, []byte("escaped")); err == nil {
			t.Error("WriteLog through a symlink out of the root succeeded")
		}
		if got := files(t, sb.outside); len(got) != 0 {
			t.Errorf("files written outside the root: %v", got)
		}
		// A log planted outside is not read through the link either.
		planted := filepath.Join(sb.outside, "default", "j1", "1")
		if err := os.MkdirAll(planted, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(planted, "rank-0.log"), []byte("secret"), 0o600); err != nil {
			t.Fatal(err)
		}
		if f, err := sb.fs.OpenLog("default", "j1", 1, 0); err == nil {
			b, _ := io.ReadAll(f)
			f.Close()
			t.Errorf("OpenLog read %q through a symlink out of the root", b)
		}
	})
	t.Run("outputs folder", func(t *testing.T) {
		sb := newSandbox(t)
		symlink(t, sb.outside, filepath.Join(sb.root, "outputs"))
		if err := sb.fs.PutOutputs("default", "j1", 1, 0, strings.NewReader("escaped"), 1<<20); err == nil {
			t.Error("PutOutputs through a symlink out of the root succeeded")
		}
		if got := files(t, sb.outside); len(got) != 0 {
			t.Errorf("files written outside the root: %v", got)
		}
	})
	t.Run("deeper folder", func(t *testing.T) {
		sb := newSandbox(t)
		// logs/default is a link: the workspace folder leads outside.
		symlink(t, sb.outside, filepath.Join(sb.root, "logs", "default"))
		if err := sb.fs.WriteLog("default", "j1", 1, 0, 0, []byte("escaped")); err == nil {
			t.Error("WriteLog through a nested symlink out of the root succeeded")
		}
		if got := files(t, sb.outside); len(got) != 0 {
			t.Errorf("files written outside the root: %v", got)
		}
	})
	t.Run("log file", func(t *testing.T) {
		sb := newSandbox(t)
		target := filepath.Join(sb.outside, "victim")
		if err := os.WriteFile(target, []byte("original"), 0o600); err != nil {
			t.Fatal(err)
		}
		symlink(t, target, filepath.Join(sb.root, "logs", "default", "j1", "1", "rank-0.log"))
		if err := sb.fs.WriteLog("default", "j1", 1, 0, 0, []byte("escaped")); err == nil {
			t.Error("WriteLog through a symlinked log file succeeded")
		}
		if b, _ := os.ReadFile(target); string(b) != "original" {
			t.Errorf("file outside the root was overwritten: %q", b)
		}
	})
	t.Run("artifacts folder", func(t *testing.T) {
		sb := newSandbox(t)
		symlink(t, sb.outside, filepath.Join(sb.root, "artifacts"))
		if _, err := sb.fs.PutArtifact("default", strings.NewReader("escaped"), 1<<20); err == nil {
			t.Error("PutArtifact through a symlink out of the root succeeded")
		}
		if got := files(t, sb.outside); len(got) != 0 {
			t.Errorf("files written outside the root: %v", got)
		}
	})
	t.Run("artifact file", func(t *testing.T) {
		sb := newSandbox(t)
		target := filepath.Join(sb.outside, "secret")
		if err := os.WriteFile(target, []byte("secret"), 0o600); err != nil {
			t.Fatal(err)
		}
		id := "sha256:" + strings.Repeat("cd", 32)
		symlink(t, target, filepath.Join(sb.root, "artifacts", strings.TrimPrefix(id, "sha256:")+".tar.gz"))
		if f, err := sb.fs.OpenArtifact("default", id); err == nil {
			b, _ := io.ReadAll(f)
			f.Close()
			t.Errorf("OpenArtifact read %q through a symlink out of the root", b)
		}
	})
}

// An artifact stored before artifacts were kept per workspace (in the
// shared folder) still opens for the job that named it, but no
// workspace "has" it: a new job cannot be accepted naming it.
func TestLegacyArtifactOpensButIsNotHeld(t *testing.T) {
	sb := newSandbox(t)
	id := "sha256:" + strings.Repeat("ef", 32)
	if err := os.MkdirAll(filepath.Join(sb.root, "artifacts"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(sb.root, "artifacts", strings.TrimPrefix(id, "sha256:")+".tar.gz"), []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	if sb.fs.HasArtifact("default", id) {
		t.Error("a legacy artifact is held by a workspace")
	}
	f, err := sb.fs.OpenArtifact("default", id)
	if err != nil {
		t.Fatalf("opening a legacy artifact: %v", err)
	}
	b, _ := io.ReadAll(f)
	f.Close()
	if string(b) != "old" {
		t.Errorf("read %q", b)
	}
}

// A workspace's storage use is the bytes of its artifacts, outputs, rank
// logs and instances' setup logs, not another workspace's; the counts
// kept as files are written agree with a walk of the folders (a store
// opened afresh) after duplicates, retries, replacements and removals.
func TestUsage(t *testing.T) {
	sb := newSandbox(t)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	// Counted from the start, and from a walk of what was there.
	if n, err := sb.fs.Usage("default"); err != nil || n != 0 {
		t.Fatalf("empty: %d %v", n, err)
	}
	_, err := sb.fs.PutArtifact("default", strings.NewReader("12345"), 100)
	must(err)
	_, err = sb.fs.PutArtifact("Default", strings.NewReader("12345"), 100) // held already
	must(err)
	must(sb.fs.PutOutputs("default", "job1", 1, 0, strings.NewReader("123456"), 100))
	must(sb.fs.PutOutputs("default", "job1", 1, 0, strings.NewReader("123"), 100)) // replaced
	if err := sb.fs.PutOutputs("default", "job1", 1, 1, strings.NewReader("too long"), 2); err == nil {
		t.Fatal("an oversized output was stored")
	}
	_, err = sb.fs.PutArtifact("other", strings.NewReader("1234567"), 100)
	must(err)
	must(sb.fs.WriteLog("default", "job1", 1, 0, 0, []byte("a log "))) // 6
	must(sb.fs.WriteLog("default", "job1", 1, 0, 0, []byte("a log "))) // retried
	must(sb.fs.WriteLog("default", "job1", 1, 0, 6, []byte("counts"))) // 12
	must(sb.fs.WriteInstanceLog("default", "ci1", 0, []byte("setup")))
	must(sb.fs.WriteInstanceLog("default", "ci2", 0, []byte("setup 2")))
	must(sb.fs.RemoveInstanceFiles("default", "ci2"))
	want := map[string]int64{"default": 5 + 3 + 12 + 5, "other": 7, "empty": 0}
	for ws, want := range want {
		if n, err := sb.fs.Usage(ws); err != nil || n != want {
			t.Errorf("%s: %d %v; want %d", ws, n, err, want)
		}
	}
	fresh, err := filestore.Open(sb.root)
	must(err)
	defer fresh.Close()
	for ws, want := range want {
		if n, err := fresh.Usage(ws); err != nil || n != want {
			t.Errorf("%s walked afresh: %d %v; want %d", ws, n, err, want)
		}
	}
}

// BenchmarkUsage compares the kept count (asked before each log write)
// with the walk it replaced, over a workspace of 100 jobs × 8 ranks.
func BenchmarkUsage(b *testing.B) {
	dir := b.TempDir()
	s, err := filestore.Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	for j := range 100 {
		for r := range 8 {
			if err := s.WriteLog("default", fmt.Sprintf("job%d", j), 1, r, 0, []byte("line\n")); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("kept", func(b *testing.B) {
		for b.Loop() {
			if _, err := s.Usage("default"); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("walk", func(b *testing.B) {
		for b.Loop() {
			fresh, err := filestore.Open(dir)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := fresh.Usage("default"); err != nil {
				b.Fatal(err)
			}
			fresh.Close()
		}
	})
}
