package archive

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// listEntries returns the entry names of a tar.gz, in order.
func listEntries(t testing.TB, b []byte) []string {
	t.Helper()
	gz, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	var names []string
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return names
		}
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, hdr.Name)
	}
}

// snapshot describes a tree: one line per entry with its kind, mode and
// content or link target.
func snapshot(t testing.TB, root string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if rel == "." {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			out = append(out, fmt.Sprintf("L %s -> %s", rel, target))
		case fi.IsDir():
			out = append(out, fmt.Sprintf("D %s %o", rel, fi.Mode().Perm()))
		default:
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			out = append(out, fmt.Sprintf("F %s %o %q", rel, fi.Mode().Perm(), b))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func makeTree(t testing.TB) string {
	t.Helper()
	root := t.TempDir()
	mk := func(rel string, mode fs.FileMode, content string) {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
	}
	mk("train.py", 0o644, "import torch\n")
	mk("run.sh", 0o755, "#!/bin/sh\necho hi\n")
	mk("src/pkg/mod.py", 0o640, "x = 1\n")
	mk("src/pkg/data/table.csv", 0o644, strings.Repeat("1,2,3\n", 1000))
	mk("src/empty.txt", 0o644, "")
	mk(strings.Repeat("long-directory-name/", 8)+strings.Repeat("f", 150)+".txt", 0o600, "deep") // PAX names
	mk("données/été.csv", 0o644, "a,b\n")
	if err := os.MkdirAll(filepath.Join(root, "outputs", "empty"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("pkg/mod.py", filepath.Join(root, "src", "link.py")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../src", filepath.Join(root, "outputs", "srclink")); err != nil {
		t.Fatal(err)
	}
	return root
}

func TestPackUnpackRoundTrip(t *testing.T) {
	root := makeTree(t)
	var buf bytes.Buffer
	st, err := Pack(&buf, root, PackOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if st.Files != 7 || st.Bytes != int64(len("import torch\n")+len("#!/bin/sh\necho hi\n")+len("x = 1\n")+6000+len("deep")+len("a,b\n")) {
		t.Errorf("stats = %+v", st)
	}
	dest := filepath.Join(t.TempDir(), "new", "dest") // created by Unpack
	if err := Unpack(bytes.NewReader(buf.Bytes()), dest, Limits{}); err != nil {
		t.Fatal(err)
	}
	want, got := snapshot(t, root), snapshot(t, dest)
	if !slices.Equal(want, got) {
		t.Errorf("round trip differs:\n got %q\nwant %q", got, want)
	}
	for _, line := range []string{"F run.sh 755 ", "D outputs/empty 755", "L src/link.py -> pkg/mod.py"} {
		if !slices.ContainsFunc(got, func(s string) bool { return strings.HasPrefix(s, line) }) {
			t.Errorf("unpacked tree lacks %q: %q", line, got)
		}
	}
}

func TestPackDeterministic(t *testing.T) {
	root := makeTree(t)
	pack := func() []byte {
		var buf bytes.Buffer
		if _, err := Pack(&buf, root, PackOptions{Ignore: true}); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	a := pack()
	b := pack()
	if !bytes.Equal(a, b) {
		t.Fatal("packing the same folder twice gave different bytes")
	}
	// Times are not part of the archive.
	old := time.Date(2001, 2, 3, 4, 5, 6, 7, time.UTC)
	if err := os.Chtimes(filepath.Join(root, "train.py"), old, old); err != nil {
		t.Fatal(err)
	}
	if c := pack(); !bytes.Equal(a, c) {
		t.Fatal("touching a file changed the archive")
	}
	da, _ := Digest(bytes.NewReader(a))
	dc, _ := Digest(bytes.NewReader(pack()))
	if da != dc || !strings.HasPrefix(da, "sha256:") || len(da) != len("sha256:")+64 {
		t.Fatalf("digests %s %s", da, dc)
	}
	// Content is.
	if err := os.WriteFile(filepath.Join(root, "train.py"), []byte("changed"), 0o644); err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(a, pack()) {
		t.Fatal("changing a file did not change the archive")
	}
	names := listEntries(t, a)
	if !slices.IsSorted(names) && !slices.Equal(names, listEntries(t, b)) {
		t.Errorf("entries not in a stable order: %q", names)
	}
}

func TestPackFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "script.py")
	if err := os.WriteFile(p, []byte("print('hi')\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := PackFile(&buf, p); err != nil {
		t.Fatal(err)
	}
	dest := t.TempDir()
	if err := Unpack(&buf, dest, Limits{}); err != nil {
		t.Fatal(err)
	}
	if got := snapshot(t, dest); !slices.Equal(got, []string{`F script.py 755 "print('hi')\n"`}) {
		t.Errorf("got %q", got)
	}
	if err := PackFile(io.Discard, dir); err == nil {
		t.Error("PackFile of a directory succeeded")
	}
}

func TestDigest(t *testing.T) {
	d, err := Digest(strings.NewReader(""))
	if err != nil || d != "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" {
		t.Errorf("Digest(\"\") = %q, %v", d, err)
	}
}

// entry describes one tar entry of a hand-built archive.
type entry struct {
	name string
	typ  byte
	body string
	link string
	mode int64
}

func file(name, body string) entry {
	return entry{name: name, typ: tar.TypeReg, body: body, mode: 0o644}
}
func dir(name string) entry { return entry{name: name, typ: tar.TypeDir, mode: 0o755} }
func symlink(name, target string) entry {
	return entry{name: name, typ: tar.TypeSymlink, link: target, mode: 0o777}
}

func tarBytes(t testing.TB, ents ...entry) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range ents {
		hdr := &tar.Header{Name: e.name, Typeflag: e.typ, Linkname: e.link, Mode: e.mode, Format: tar.FormatPAX}
		if e.typ == tar.TypeReg {
			hdr.Size = int64(len(e.body))
		}
		if err := tw.WriteHeader(hdr); err != nil {
			t.Fatal(err)
		}
		if e.body != "" {
			if _, err := io.WriteString(tw, e.body); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func gzipBytes(t testing.TB, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	if _, err := gz.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func tarGz(t testing.TB, ents ...entry) []byte { return gzipBytes(t, tarBytes(t, ents...)) }

// sandbox makes base/{dest,sentinel} and returns their paths: unpacking into
// dest must never touch sentinel, nor create anything else in base.
func sandbox(t testing.TB) (base, dest, sentinel string) {
	t.Helper()
	base = t.TempDir()
	dest = filepath.Join(base, "dest")
	sentinel = filepath.Join(base, "sentinel")
	for _, d := range []string{dest, sentinel} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return base, dest, sentinel
}

// assertContained checks that sentinel is empty, base holds only dest and
// sentinel, and no symlink in dest resolves outside it.
func assertContained(t testing.TB, base, dest, sentinel string) {
	t.Helper()
	if ents, err := os.ReadDir(sentinel); err != nil || len(ents) != 0 {
		t.Fatalf("sentinel dir touched: %v %v", ents, err)
	}
	ents, err := os.ReadDir(base)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if e.Name() != "dest" && e.Name() != "sentinel" {
			t.Fatalf("wrote outside dest: %s", filepath.Join(base, e.Name()))
		}
	}
	realDest, err := filepath.EvalSymlinks(dest)
	if err != nil {
		t.Fatal(err)
	}
	err = filepath.WalkDir(dest, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.Type()&fs.ModeSymlink == 0 {
			return nil
		}
		target, err := os.Readlink(p)
		if err != nil {
			t.Fatal(err)
		}
		if filepath.IsAbs(target) {
			t.Fatalf("absolute symlink left in dest: %s -> %s", p, target)
		}
		resolved, err := filepath.EvalSymlinks(p)
		if err != nil {
			// Dangling or looping: judge the lexical target from the
			// link's real directory.
			parent, perr := filepath.EvalSymlinks(filepath.Dir(p))
			if perr != nil {
				return nil
			}
			resolved = filepath.Join(parent, target)
		}
		if resolved != realDest && !strings.HasPrefix(resolved, realDest+string(filepath.Separator)) {
			t.Fatalf("symlink left in dest resolves outside: %s -> %s (%s)", p, target, resolved)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestUnpackRefusesMaliciousArchives(t *testing.T) {
	cases := []struct {
		name    string
		setup   func(t *testing.T, dest, sentinel string) // prepares dest before unpacking
		entries func(sentinel string) []entry
		limits  Limits
		wantErr error
		naming  string // the error names this entry
	}{
		{
			name:    "dot dot escape",
			entries: func(string) []entry { return []entry{file("../sentinel/pwned", "x")} },
			wantErr: ErrUnsafe, naming: "../sentinel/pwned",
		},
		{
			name:    "dot dot in the middle",
			entries: func(string) []entry { return []entry{dir("a/"), file("a/../../escape", "x")} },
			wantErr: ErrUnsafe, naming: "a/../../escape",
		},
		{
			name:    "absolute path",
			entries: func(s string) []entry { return []entry{file(filepath.Join(s, "pwned"), "x")} },
			wantErr: ErrUnsafe, naming: "/",
		},
		{
			name: "symlink escape then write through it",
			entries: func(string) []entry {
				return []entry{symlink("link", "../sentinel"), file("link/pwned", "x")}
			},
			wantErr: ErrUnsafe, naming: "link",
		},
		{
			name: "symlink to /etc then link/passwd",
			entries: func(string) []entry {
				return []entry{symlink("etc", "/etc"), file("etc/passwd", "root::0:0::/:/bin/sh\n")}
			},
			wantErr: ErrUnsafe, naming: "etc",
		},
		{
			name: "write through a symlink already in dest",
			setup: func(t *testing.T, dest, sentinel string) {
				if err := os.Symlink(sentinel, filepath.Join(dest, "pre")); err != nil {
					t.Fatal(err)
				}
			},
			entries: func(string) []entry { return []entry{file("pre/pwned", "x")} },
			wantErr: ErrUnsafe, naming: "pre/pwned",
		},
		{
			name: "relative symlink climbing out through an inner symlink",
			entries: func(string) []entry {
				return []entry{
					dir("a/"), dir("a/b/"), dir("a/b/c/"),
					symlink("a/b/c/up", "../../.."), // resolves to dest itself: fine
					symlink("a/b/c/up/out", "../sentinel"),
					file("out/pwned", "x"),
				}
			},
			wantErr: ErrUnsafe, naming: "a/b/c/up/out",
		},
		{
			name: "symlink target escaping through another symlink",
			entries: func(string) []entry {
				return []entry{
					dir("a/"), dir("a/b/"),
					symlink("a/b/top", "../.."),
					symlink("a/out", "b/top/../sentinel"),
				}
			},
			wantErr: ErrUnsafe, naming: "a/out",
		},
		{
			name: "symlink redirected by a later entry",
			entries: func(string) []entry {
				// l -> x/.. is dest while x does not exist; x -> . makes it dest/..
				return []entry{symlink("l", "x/.."), symlink("x", ".")}
			},
			wantErr: ErrUnsafe, naming: "l",
		},
		{
			name: "symlink redirected by a later entry, then an error",
			entries: func(string) []entry {
				return []entry{symlink("l", "x/.."), symlink("x", "."), {name: "h", typ: tar.TypeLink, link: "l"}}
			},
			wantErr: ErrUnsafe, naming: "h", // and l must not be left behind
		},
		{
			name:    "hard link",
			entries: func(string) []entry { return []entry{file("a", "x"), {name: "b", typ: tar.TypeLink, link: "a"}} },
			wantErr: ErrUnsafe, naming: "b",
		},
		{
			name:    "hard link to a file outside",
			entries: func(string) []entry { return []entry{{name: "passwd", typ: tar.TypeLink, link: "/etc/passwd"}} },
			wantErr: ErrUnsafe, naming: "passwd",
		},
		{
			name:    "char device",
			entries: func(string) []entry { return []entry{{name: "null", typ: tar.TypeChar, mode: 0o666}} },
			wantErr: ErrUnsafe, naming: "null",
		},
		{
			name:    "block device",
			entries: func(string) []entry { return []entry{{name: "sda", typ: tar.TypeBlock, mode: 0o666}} },
			wantErr: ErrUnsafe, naming: "sda",
		},
		{
			name:    "fifo",
			entries: func(string) []entry { return []entry{{name: "pipe", typ: tar.TypeFifo, mode: 0o666}} },
			wantErr: ErrUnsafe, naming: "pipe",
		},
		{
			name: "too many files",
			entries: func(string) []entry {
				var es []entry
				for i := range 20 {
					es = append(es, file(fmt.Sprintf("f%02d", i), "x"))
				}
				return es
			},
			limits:  Limits{MaxFiles: 10},
			wantErr: ErrLimit, naming: "f10",
		},
		{
			name: "too many bytes",
			entries: func(string) []entry {
				return []entry{file("a", strings.Repeat("x", 600)), file("b", strings.Repeat("y", 600))}
			},
			limits:  Limits{MaxBytes: 1000},
			wantErr: ErrLimit, naming: "b",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			base, dest, sentinel := sandbox(t)
			if tc.setup != nil {
				tc.setup(t, dest, sentinel)
			}
			err := Unpack(bytes.NewReader(tarGz(t, tc.entries(sentinel)...)), dest, tc.limits)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("Unpack error = %v, want %v", err, tc.wantErr)
			}
			t.Log(err)
			if !strings.Contains(err.Error(), fmt.Sprintf("%q", tc.naming)) && !strings.Contains(err.Error(), `"`+tc.naming) {
				t.Errorf("error %q does not name entry %q", err, tc.naming)
			}
			if tc.setup != nil {
				_ = os.Remove(filepath.Join(dest, "pre")) // the test's own escaping link
			}
			assertContained(t, base, dest, sentinel)
		})
	}
}

func TestUnpackAcceptsInnerSymlinksAndReplacements(t *testing.T) {
	base, dest, sentinel := sandbox(t)
	err := Unpack(bytes.NewReader(tarGz(t,
		dir("./"),
		dir("lib/"),
		file("lib/real.so.1", "elf"),
		symlink("lib/real.so", "real.so.1"),
		symlink("bin", "lib"),
		symlink("up", "lib/.."),
		file("bin/through.txt", "written via an inner link"), // bin -> lib stays inside
		file("dup.txt", "first"),
		file("dup.txt", "second"),
		symlink("dup2", "lib"),
		file("dup2", "a file replaces the link, not written through it"),
		entry{name: "ro/", typ: tar.TypeDir, mode: 0o555},
		entry{name: "ro/f", typ: tar.TypeReg, body: "x", mode: 0o4755}, // setuid dropped
	)), dest, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	assertContained(t, base, dest, sentinel)
	got := snapshot(t, dest)
	want := []string{
		`L bin -> lib`,
		`F dup.txt 644 "second"`,
		`F dup2 644 "a file replaces the link, not written through it"`,
		`D lib 755`,
		`F lib/real.so.1 644 "elf"`,
		`L lib/real.so -> real.so.1`,
		`F lib/through.txt 644 "written via an inner link"`,
		`D ro 755`, // owner keeps rwx
		`F ro/f 755 "x"`,
		`L up -> lib/..`,
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}

func TestUnpackRejectsGarbage(t *testing.T) {
	_, dest, _ := sandbox(t)
	if err := Unpack(strings.NewReader("not gzip"), dest, Limits{}); err == nil {
		t.Error("garbage accepted")
	}
	if err := Unpack(bytes.NewReader(gzipBytes(t, []byte(strings.Repeat("z", 1000)))), dest, Limits{}); err == nil {
		t.Error("gzip of garbage accepted")
	}
	good := tarGz(t, file("a", "x"))
	bad := slices.Clone(good)
	bad[len(bad)-8] ^= 0xff // gzip trailer: CRC-32
	if err := Unpack(bytes.NewReader(good), t.TempDir(), Limits{}); err != nil {
		t.Fatal(err)
	}
	if err := Unpack(bytes.NewReader(bad), t.TempDir(), Limits{}); err == nil {
		t.Error("archive with a bad CRC accepted")
	}
}

// FuzzUnpack feeds arbitrary bytes to Unpack: it must never panic nor write
// outside its destination. Inputs that are not gzip are gzip'd first, so
// the fuzzer can work on the tar structure directly.
func FuzzUnpack(f *testing.F) {
	seeds := [][]entry{
		{dir("a/"), file("a/b.txt", "hello"), symlink("a/l", "b.txt")},
		{file("../x", "x")},
		{symlink("link", "../sentinel"), file("link/pwned", "x")},
		{symlink("etc", "/etc"), file("etc/passwd", "x")},
		{dir("a/"), dir("a/b/"), symlink("a/b/up", "../.."), symlink("a/b/up/out", "../sentinel")},
		{symlink("l", "x/.."), symlink("x", ".")},
		{symlink("l", "x/.."), symlink("x", "."), {name: "h", typ: tar.TypeLink, link: "l"}},
		{file("a", "x"), {name: "b", typ: tar.TypeLink, link: "a"}},
		{{name: "c", typ: tar.TypeChar}},
		{file("dup", "1"), symlink("dup", "."), dir("dup/")},
	}
	for _, s := range seeds {
		raw := tarBytes(f, s...)
		f.Add(raw)
		f.Add(gzipBytes(f, raw))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) < 2 || data[0] != 0x1f || data[1] != 0x8b {
			data = gzipBytes(t, data)
		}
		base, dest, sentinel := sandbox(t)
		_ = Unpack(bytes.NewReader(data), dest, Limits{MaxFiles: 200, MaxBytes: 1 << 20})
		assertContained(t, base, dest, sentinel)
	})
}

// A folder others write, packed by root with SameOwner, cannot lend the
// packer a file of someone else's through a hard link: the pack is
// refused. Without SameOwner (the folder is the packer's own) it is packed.
func TestPackSameOwnerRefusesOthersFiles(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "outputs")
	if err := os.Mkdir(out, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(out, "mine.txt"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Pack(io.Discard, out, PackOptions{SameOwner: true}); err != nil {
		t.Fatalf("a folder of one owner's files: %v", err)
	}
	if os.Geteuid() != 0 {
		// Only root can make a file of another owner here; the refusal
		// itself is the same code path as below.
		return
	}
	secret := filepath.Join(dir, "secret")
	if err := os.WriteFile(secret, []byte("root's"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(out, 4242, 4242); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(filepath.Join(out, "mine.txt"), 4242, 4242); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(secret, filepath.Join(out, "link")); err != nil {
		t.Fatal(err)
	}
	_, err := Pack(io.Discard, out, PackOptions{SameOwner: true})
	if err == nil || !strings.Contains(err.Error(), "link: not the folder owner's file") {
		t.Fatalf("a hard link to root's file: %v", err)
	}
	if _, err := Pack(io.Discard, out, PackOptions{}); err != nil {
		t.Fatalf("without SameOwner: %v", err)
	}
}
