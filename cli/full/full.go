// Package full is the full binary's command tree (cmd/shoal-server): the
// client's commands (package cli) and the ones that link the server's
// packages: `shoal server`, `shoal agent`, `shoal sim` and `shoal admin`.
// The CLI's binary (cmd/shoal) does not link this package: its stand-ins
// exec the full binary for these commands.
package full

import (
	"context"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/shoal-ml/shoal/cli"
	"github.com/shoal-ml/shoal/cli/admin"
	"github.com/shoal-ml/shoal/cli/agentcmd"
	"github.com/shoal-ml/shoal/cli/cmdutil"
	"github.com/shoal-ml/shoal/cli/server"
	"github.com/shoal-ml/shoal/cli/simcmd"
)

// Side is the real commands for cli.SideCommands.
func Side(g *cmdutil.Globals) []*cobra.Command {
	return []*cobra.Command{admin.NewCommand(g), agentcmd.NewCommand(g), server.NewCommand(g), simcmd.NewCommand(g)}
}

// Execute runs every command with os.Args and returns the exit code.
func Execute(ctx context.Context) int {
	return Run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
}

// Run runs every command in-process with args and the given streams and
// returns the exit code.
func Run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return cli.RunWith(ctx, Side, args, stdin, stdout, stderr)
}

// NewCommand is the whole command tree, for programs that read it (the
// CLI reference generator).
func NewCommand(stdout, stderr io.Writer) *cobra.Command {
	return cli.NewCommand(stdout, stderr, Side)
}
