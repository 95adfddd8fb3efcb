package cli

import (
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/shoal-ml/shoal/cli/cmdutil"
)

// NewCommand returns the `shoal` command tree with side's commands,
// writing to stdout and stderr, for programs that read the tree rather
// than run it: the CLI reference generator (cli/clidoc, through
// cli/full) and the docs tests.
func NewCommand(stdout, stderr io.Writer, side Side) *cobra.Command {
	return NewRoot(&cmdutil.Globals{Stdin: strings.NewReader(""), Stdout: stdout, Stderr: stderr}, side)
}
