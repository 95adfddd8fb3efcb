package cli

import (
	"github.com/spf13/cobra"

	"github.com/shoal-ml/shoal/cli/admin"
	"github.com/shoal-ml/shoal/cli/agentcmd"
	"github.com/shoal-ml/shoal/cli/cmdutil"
	"github.com/shoal-ml/shoal/cli/server"
	"github.com/shoal-ml/shoal/cli/simcmd"
)

// testSide is cli/full's Side, which this package's tests cannot import
// (it imports cli): the tree's tests and the docs' tests read the whole
// tree, as the full binary has it. cli/full's tests hold the two lists
// to each other.
func testSide(g *cmdutil.Globals) []*cobra.Command {
	return []*cobra.Command{admin.NewCommand(g), agentcmd.NewCommand(g), server.NewCommand(g), simcmd.NewCommand(g)}
}

// newRootCommand is the full binary's tree.
func newRootCommand(g *cmdutil.Globals) *cobra.Command { return NewRoot(g, testSide) }
