package archive

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestIgnoreRules(t *testing.T) {
	type check struct {
		path  string
		isDir bool
		want  bool // excluded
	}
	cases := []struct {
		name   string
		files  map[string]string // ignore file's directory ("" for root) -> content
		checks []check
	}{
		{
			name:  "comments blank lines and plain names match at any depth",
			files: map[string]string{"": "# a comment\n\n*.pyc\n__pycache__\n\\#literal\n"},
			checks: []check{
				{"a.pyc", false, true},
				{"src/deep/b.pyc", false, true},
				{"a.py", false, false},
				{"src/__pycache__", true, true},
				{"src/__pycache__/x.py", false, true},
				{"# a comment", false, false},
				{"#literal", false, true},
			},
		},
		{
			name:  "negation re-includes, last match wins",
			files: map[string]string{"": "*.log\n!keep.log\n"},
			checks: []check{
				{"a.log", false, true},
				{"keep.log", false, false},
				{"sub/keep.log", false, false},
				{"sub/other.log", false, true},
			},
		},
		{
			name:  "negation cannot re-include inside an excluded directory",
			files: map[string]string{"": "build/\n!build/keep.txt\n"},
			checks: []check{
				{"build", true, true},
				{"build/keep.txt", false, true},
			},
		},
		{
			name:  "directory only",
			files: map[string]string{"": "data/\n"},
			checks: []check{
				{"data", true, true},
				{"data", false, false}, // a file named data stays
				{"sub/data", true, true},
				{"sub/data/x.csv", false, true},
				{"database", true, false},
			},
		},
		{
			name:  "anchored",
			files: map[string]string{"": "/outputs\ndocs/internal\n"},
			checks: []check{
				{"outputs", true, true},
				{"outputs/model.pt", false, true},
				{"src/outputs", true, false},
				{"docs/internal", true, true},
				{"src/docs/internal", true, false},
			},
		},
		{
			name:  "star and question mark stay within a segment",
			files: map[string]string{"": "src/*.tmp\nfile?.txt\n"},
			checks: []check{
				{"src/a.tmp", false, true},
				{"src/sub/a.tmp", false, false},
				{"file1.txt", false, true},
				{"file10.txt", false, false},
				{"deep/fileX.txt", false, true},
			},
		},
		{
			name:  "double star",
			files: map[string]string{"": "**/logs\na/**/z\ncache/**\n"},
			checks: []check{
				{"logs", true, true},
				{"x/y/logs", true, true},
				{"a/z", false, true},
				{"a/b/c/z", false, true},
				{"b/a/z", false, false},
				{"cache", true, false}, // "cache/**" is what is inside
				{"cache/x", false, true},
				{"cache/x/y", false, true},
			},
		},
		{
			name: "nested ignore file is relative to its directory and overrides its parent",
			files: map[string]string{
				"":    "*.bin\n",
				"sub": "/local.txt\n!*.bin\n",
			},
			checks: []check{
				{"a.bin", false, true},
				{"sub/a.bin", false, false},
				{"sub/local.txt", false, true},
				{"local.txt", false, false},
				{"sub/deeper/local.txt", false, false},
				{"other/a.bin", false, true},
			},
		},
		{
			name:  "trailing spaces, escaped space, CRLF, bracket negation",
			files: map[string]string{"": "trail   \r\nesc\\ \r\n[!a]x\n"},
			checks: []check{
				{"trail", false, true},
				{"esc ", false, true},
				{"esc", false, false},
				{"bx", false, true},
				{"ax", false, false},
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := &ignorer{}
			dirs := make([]string, 0, len(tc.files))
			for d := range tc.files {
				dirs = append(dirs, d)
			}
			slices.Sort(dirs) // shallowest first, as Pack's walk reads them
			for _, d := range dirs {
				m.add(d, tc.files[d])
			}
			for _, c := range tc.checks {
				if got := m.excluded(c.path, c.isDir); got != c.want {
					t.Errorf("excluded(%q, dir=%v) = %v, want %v", c.path, c.isDir, got, c.want)
				}
			}
		})
	}
}

func TestPackIgnoreFiles(t *testing.T) {
	root := t.TempDir()
	write := func(rel, content string) {
		t.Helper()
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(".amlignore", "data/\n*.ckpt\n")
	write(".gitignore", "src/\n") // not read: .amlignore wins
	write("src/train.py", "print(1)")
	write("data/big.csv", "1,2")
	write("model.ckpt", "x")
	write("sub/.gitignore", "secret.txt\n") // sub has no .amlignore: its .gitignore applies
	write("sub/secret.txt", "s")
	write("sub/ok.txt", "ok")
	write(".git/HEAD", "ref: refs/heads/main")
	write("vendor/lib/.git", "gitdir: elsewhere") // submodule marker file

	list := func(opts PackOptions) []string {
		var buf bytes.Buffer
		if _, err := Pack(&buf, root, opts); err != nil {
			t.Fatal(err)
		}
		return listEntries(t, buf.Bytes())
	}
	want := []string{".amlignore", ".gitignore", "src/", "src/train.py", "sub/", "sub/.gitignore", "sub/ok.txt", "vendor/", "vendor/lib/"}
	if got := list(PackOptions{Ignore: true}); !slices.Equal(got, want) {
		t.Errorf("with Ignore:\n got %q\nwant %q", got, want)
	}
	all := list(PackOptions{})
	for _, p := range []string{"data/big.csv", "model.ckpt", "sub/secret.txt"} {
		if !slices.Contains(all, p) {
			t.Errorf("without Ignore, %s missing from %q", p, all)
		}
	}
	for _, p := range all {
		if p == ".git/" || p == ".git/HEAD" || p == "vendor/lib/.git" {
			t.Errorf(".git packed without Ignore: %s", p)
		}
	}

	// Without an .amlignore, the .gitignore applies.
	if err := os.Remove(filepath.Join(root, ".amlignore")); err != nil {
		t.Fatal(err)
	}
	got := list(PackOptions{Ignore: true})
	if slices.Contains(got, "src/train.py") || !slices.Contains(got, "data/big.csv") {
		t.Errorf(".gitignore not honoured: %q", got)
	}
}
