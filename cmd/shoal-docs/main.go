// Command shoal-docs writes the CLI reference (docs/reference/cli/*.md)
// from the `shoal` command tree. Run it from the repository root after
// changing a command or a flag:
//
//	go run ./cmd/shoal-docs
//
// `go test ./cli/clidoc` fails until it has been
// run and its output committed.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/shoal-ml/shoal/cli/clidoc"
)

func main() {
	dir := flag.String("dir", clidoc.Dir, "folder to write the pages into (its old pages are removed)")
	flag.Parse()
	if err := run(*dir); err != nil {
		fmt.Fprintln(os.Stderr, "shoal-docs:", err)
		os.Exit(1)
	}
}

// run replaces the folder's pages, so a removed command's page goes too.
func run(dir string) error {
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return clidoc.GenerateMarkdown(dir)
}
