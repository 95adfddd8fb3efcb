// Package clidoc writes the CLI reference, docs/reference/cli/*.md, from
// the `shoal` command tree with cobra's doc generator, and tells whether a
// checked-in copy is current. It is a package of its own so that the
// generator's dependencies stay out of the shoal binary.
package clidoc

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"

	"github.com/shoal-ml/shoal/cli/full"
)

// Dir is where the generated CLI reference lives, relative to
// the repository root.
const Dir = "docs/reference/cli"

// GenerateMarkdown writes the CLI reference, one Markdown page per command,
// into dir (which must exist), from the same command tree the binary runs.
// The pages carry no generation date, so the same commands always give the
// same files and a test can hold the checked-in copy to them.
func GenerateMarkdown(dir string) error {
	root := full.NewCommand(io.Discard, io.Discard)
	// Cobra's own completion command is left out: it is cobra's, and its
	// pages would change with cobra's versions rather than Shoal's.
	root.CompletionOptions.DisableDefaultCmd = true
	root.DisableAutoGenTag = true
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		c.DisableAutoGenTag = true
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	return doc.GenMarkdownTree(root, dir)
}

// Diff generates the reference into a temporary folder and
// compares it with dir: it returns one line per file that is missing,
// extra or different, empty when dir is current.
func Diff(dir string) ([]string, error) {
	tmp, err := os.MkdirTemp("", "shoal-cli-reference-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	if err := GenerateMarkdown(tmp); err != nil {
		return nil, err
	}
	want, err := readDir(tmp)
	if err != nil {
		return nil, err
	}
	have, err := readDir(dir)
	if err != nil && !os.IsNotExist(err) {
		return nil, err
	}
	var diffs []string
	for name, text := range want {
		got, ok := have[name]
		switch {
		case !ok:
			diffs = append(diffs, name+": missing")
		case !bytes.Equal(got, text):
			diffs = append(diffs, name+": differs from the commands")
		}
	}
	for name := range have {
		if _, ok := want[name]; !ok {
			diffs = append(diffs, name+": no such command any more")
		}
	}
	return diffs, nil
}

// readDir reads every file of a folder by name.
func readDir(dir string) (map[string][]byte, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	out := map[string][]byte{}
	for _, e := range entries {
		if e.IsDir() {
			return nil, fmt.Errorf("%s: unexpected folder %s", dir, e.Name())
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		out[e.Name()] = b
	}
	return out, nil
}
