// Package cli is the `shoal` command line, modelled on `az ml`: the same
// verbs, flags, output formats (--output/-o) and JMESPath --query.
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

	"github.com/shoal-ml/shoal"
	"github.com/shoal-ml/shoal/client"
	"github.com/shoal-ml/shoal/clientconfig"
)

// Version is the program version, set at build time with -ldflags.
var Version = "dev"

// Globals are the flags every command takes and the streams it uses:
// one value, made by the root command, that every noun's commands share.
type Globals struct {
	// Workspace is --workspace; empty means the client config's, else
	// the default workspace (see Client).
	Workspace string
	// ResourceGroup is --resource-group, taken for az compatibility only.
	ResourceGroup string
	// Subscription is --subscription, taken for az compatibility only.
	Subscription string
	// Output is --output: one of OutputFormats.
	Output string
	// Query is --query, a JMESPath expression applied to what is printed.
	Query string
	// ConfigPath is --client-config; empty means the default path.
	ConfigPath string
	// Stdin, Stdout and Stderr are the command's streams: the process's,
	// or a test's buffers.
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	// IsRoot reports whether this process runs as root; nil asks the
	// system (tests set it to try both).
	IsRoot func() bool
	// Clock is what waits tell the time and sleep with; nil is the wall
	// clock (tests set a fake one).
	Clock WaitClock
}

// Root reports whether this process runs as root (see IsRoot): admin
// commands that touch the store warn about what root may do.
func (g *Globals) Root() bool {
	if g.IsRoot != nil {
		return g.IsRoot()
	}
	return os.Geteuid() == 0
}

// Execute runs the CLI with os.Args and returns the process exit code.
func Execute(ctx context.Context) int {
	return Run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
}

// Run runs the CLI with args and the given streams; it returns the exit
// code. Errors are printed to stderr as "ERROR: <message>", as az does.
func Run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	g := &Globals{Stdin: stdin, Stdout: stdout, Stderr: stderr}
	root := newRootCommand(g)
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	if err := root.ExecuteContext(ctx); err != nil {
		// Messages quote what users wrote (names, paths): escaped.
		fmt.Fprintln(stderr, "ERROR: "+EscapeControls(errorText(err), true))
		return 1
	}
	return 0
}

func errorText(err error) string {
	var e *shoal.Error
	if errors.As(err, &e) {
		return e.Message
	}
	return err.Error()
}

func newRootCommand(g *Globals) *cobra.Command {
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
	pf.StringVarP(&g.Output, "output", "o", "json", "output format: "+strings.Join(OutputFormats, ", "))
	pf.StringVar(&g.Query, "query", "", "JMESPath query applied to the output, e.g. \"[].name\"")
	pf.StringVar(&g.ConfigPath, "client-config", "", "client config file (default ~/.config/shoal/config.yaml)")
	_ = pf.MarkHidden("subscription")
	root.SetGlobalNormalizationFunc(func(f *pflag.FlagSet, name string) pflag.NormalizedName {
		if name == "workspace-name" {
			name = "workspace"
		}
		return pflag.NormalizedName(name)
	})
	root.AddCommand(newServerCommand(g), newAgentCommand(g), newComputeCommand(g), newJobCommand(g), newEnvironmentCommand(g), newComponentCommand(g), newRegistryCommand(g), newWorkspaceCommand(g), newLocationCommand(g), newAdminCommand(g),
		newUserCommand(g), newTokenCommand(g), newLoginCommand(g), newRoleCommand(g), newIdentityCommand(g), newSPCommand(g), newQuotaCommand(g), newSimCommand(g), newCostCommand(g), newBudgetCommand(g), newAuditCommand(g),
		newVersionCommand(g))
	return root
}

// client returns an API client and the workspace to act in, from flags,
// environment and the client config.
func (g *Globals) Client() (*client.Client, string, error) {
	path := g.ConfigPath
	if path == "" {
		var err error
		if path, err = clientconfig.DefaultPath(); err != nil {
			return nil, "", err
		}
	}
	cfg, err := clientconfig.Load(path)
	if err != nil {
		return nil, "", err
	}
	cfg.ApplyEnv()
	if cfg.Server == "" {
		return nil, "", fmt.Errorf("no Shoal server is configured: start one with `shoal server` (it writes %s), or set SHOAL_SERVER and SHOAL_TOKEN", path)
	}
	ws := g.Workspace
	if ws == "" {
		ws = cfg.Workspace
	}
	if ws == "" {
		ws = shoal.DefaultWorkspace
	}
	c := client.NewClient(cfg.Server, cfg.Token)
	if err := c.TrustCA([]byte(cfg.CACert)); err != nil {
		return nil, "", fmt.Errorf("%s: ca_cert: %w", path, err)
	}
	return c, ws, nil
}

// render prints v in the chosen output format.
// A --query result has its own shape, so the default columns apply only
// without one.
func (g *Globals) Render(v any, columns []string) error {
	if g.Query != "" {
		columns = nil
	}
	return Render(g.Stdout, v, g.Output, g.Query, columns)
}

func newVersionCommand(g *Globals) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version of shoal",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return g.Render(map[string]string{"shoal": Version}, nil)
		},
	}
}

// CallAndRender returns a command body that calls the server with the
// configured client and workspace and prints what the call returns.
func (g *Globals) CallAndRender(columns []string, call func(ctx context.Context, c *client.Client, ws string) (any, error)) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		c, ws, err := g.Client()
		if err != nil {
			return err
		}
		v, err := call(cmd.Context(), c, ws)
		if err != nil {
			return err
		}
		return g.Render(v, columns)
	}
}
