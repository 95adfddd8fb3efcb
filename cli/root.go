// Package cli is the `shoal` command line, modelled on `az ml`: the same
// verbs, flags, output formats (--output/-o) and JMESPath --query.
//
// This package is the root command and its wiring; each noun's commands
// are a package below it (cli/compute, cli/job, ...), all sharing
// cli/cmdutil.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/shoal-ml/shoal/cli/access"
	"github.com/shoal-ml/shoal/cli/cmdutil"
	"github.com/shoal-ml/shoal/cli/compute"
	"github.com/shoal-ml/shoal/cli/datastore"
	"github.com/shoal-ml/shoal/cli/job"
	"github.com/shoal-ml/shoal/cli/registry"
	"github.com/shoal-ml/shoal/cli/schedule"
	"github.com/shoal-ml/shoal/cli/webhook"
	"github.com/shoal-ml/shoal/cli/workspace"
	"github.com/shoal-ml/shoal/domain/core"
)

// Version is the program version, set at build time with -ldflags.
var Version = "dev"

// Execute runs the CLI with os.Args and returns the process exit code:
// the client's commands here, the server's, the agent's and the store's
// by exec of the full binary (FullBinaryCommands).
func Execute(ctx context.Context) int {
	return RunWith(ctx, FullBinaryCommands(SyscallExec), os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
}

// Run runs the client's commands in-process with args and the given
// streams; it returns the exit code. The full binary's commands fail
// here (cli/full's Run has them).
func Run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return RunWith(ctx, FullBinaryCommands(nil), args, stdin, stdout, stderr)
}

// RunWith runs the command tree with side's commands beside the client's.
// Errors are printed to stderr as "ERROR: <message>", as az does.
func RunWith(ctx context.Context, side Side, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	g := &cmdutil.Globals{Stdin: stdin, Stdout: stdout, Stderr: stderr, Args: args}
	root := NewRoot(g, side)
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := unknownSubcommand(root, args)
	if err == nil {
		err = root.ExecuteContext(ctx)
	}
	if err != nil {
		// Messages quote what users wrote (names, paths): escaped.
		fmt.Fprintln(stderr, "ERROR: "+cmdutil.EscapeControls(errorText(err), true))
		return 1
	}
	return 0
}

func errorText(err error) string {
	var e *core.Error
	if errors.As(err, &e) {
		return e.Message
	}
	return err.Error()
}

// NewRoot is the `shoal` command tree: the client's commands and side's.
func NewRoot(g *cmdutil.Globals, side Side) *cobra.Command {
	root := &cobra.Command{
		Use:           "shoal",
		Short:         "Self-hosted managed ML compute: compute clusters, instances and jobs, the az ml way",
		Long:          "Shoal runs Azure Machine Learning style compute clusters on your own machines.\nStart a server with `shoal server`, then manage computes with `shoal compute ...` as you would with `az ml compute ...`.",
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       Version,
	}
	pf := root.PersistentFlags()
	pf.StringVarP(&g.Workspace, "workspace", "w", "", "workspace name (also --workspace-name; default: the client config's, else \"default\"; env SHOAL_WORKSPACE)")
	pf.StringVarP(&g.ResourceGroup, "resource-group", "g", "", "accepted for az compatibility; Shoal has no resource groups")
	pf.StringVar(&g.Subscription, "subscription", "", "accepted for az compatibility; Shoal has no subscriptions")
	pf.StringVarP(&g.Output, "output", "o", "json", "output format: "+strings.Join(cmdutil.OutputFormats, ", "))
	pf.StringVar(&g.Query, "query", "", "JMESPath query applied to the output, e.g. \"[].name\"")
	pf.StringVar(&g.ConfigPath, "client-config", "", "client config file (default ~/.config/shoal/config.yaml)")
	_ = pf.MarkHidden("subscription")
	root.SetGlobalNormalizationFunc(func(f *pflag.FlagSet, name string) pflag.NormalizedName {
		if name == "workspace-name" {
			name = "workspace"
		}
		return pflag.NormalizedName(name)
	})
	// Each noun's commands live in a package of their own (cli/compute,
	// cli/job, ...), sharing cli/cmdutil; environment and component, and
	// the local-file upload that jobs share with them, are still here.
	jobFiles := job.LocalFiles{Command: uploadJobFiles, Pipeline: inlinePipelineComponents}
	root.AddCommand(compute.NewCommand(g), job.NewCommand(g, jobFiles), newEnvironmentCommand(g), newComponentCommand(g), newDataCommand(g), newModelCommand(g), registry.NewCommand(g), datastore.NewCommand(g), newBatchEndpointCommand(g), newBatchDeploymentCommand(g), schedule.NewCommand(g, jobFiles), workspace.NewCommand(g), compute.NewLocationCommand(g),
		access.NewUserCommand(g), access.NewTokenCommand(g), access.NewLoginCommand(g), access.NewRoleCommand(g), access.NewIdentityCommand(g), access.NewSPCommand(g), workspace.NewQuotaCommand(g), workspace.NewCostCommand(g), workspace.NewBudgetCommand(g), access.NewAuditCommand(g),
		newVersionCommand(g))
	// Issue 39's notifications.
	root.AddCommand(webhook.NewCommand(g))
	root.AddCommand(side(g)...)
	return root
}

func newVersionCommand(g *cmdutil.Globals) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version of shoal",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return g.Render(map[string]string{"shoal": Version}, nil)
		},
	}
}
