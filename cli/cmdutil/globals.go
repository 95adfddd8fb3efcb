// Package cmdutil is what every `shoal` noun's commands share: the global
// flags and streams (Globals), the API client they make, the output
// formats and tables, progress of long waits, escaping of what users
// wrote, watched lists, and YAML documents. It imports no command
// package, so that every one can import it.
package cmdutil

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/shoal-ml/shoal/cli/clientconfig"
	"github.com/shoal-ml/shoal/client"
	"github.com/shoal-ml/shoal/domain/core"
)

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
	// Args are the command line's arguments after the program's name,
	// as given: the CLI hands them unchanged to the full binary for the
	// commands it does not link (see cli.FullBinaryCommands).
	Args []string
}

// Root reports whether this process runs as root (see IsRoot): admin
// commands that touch the store warn about what root may do.
func (g *Globals) Root() bool {
	if g.IsRoot != nil {
		return g.IsRoot()
	}
	return os.Geteuid() == 0
}

// Client returns an API client and the workspace to act in, from flags,
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
		ws = core.DefaultWorkspace
	}
	c := client.NewClient(cfg.Server, cfg.Token)
	if err := c.TrustCA([]byte(cfg.CACert)); err != nil {
		return nil, "", fmt.Errorf("%s: ca_cert: %w", path, err)
	}
	return c, ws, nil
}

// Render prints v in the chosen output format, on stdout.
// A --query result has its own shape, so the default columns apply only
// without one.
func (g *Globals) Render(v any, columns []string) error {
	if g.Query != "" {
		columns = nil
	}
	return Render(g.Stdout, v, g.Output, g.Query, columns)
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

// TableView reports whether the output is a table of the command's own
// columns, the only output table views change.
func (g *Globals) TableView() bool { return g.Output == "table" && g.Query == "" }

// Confirm asks a yes/no question on stderr and reads the answer from
// stdin: deletes ask before they destroy, unless --yes.
func Confirm(g *Globals, question string) (bool, error) {
	fmt.Fprint(g.Stderr, question)
	line, err := bufio.NewReader(g.Stdin).ReadString('\n')
	if err != nil && strings.TrimSpace(line) == "" {
		return false, fmt.Errorf("no answer to the confirmation prompt; pass --yes to delete without asking")
	}
	a := strings.ToLower(strings.TrimSpace(line))
	return a == "y" || a == "yes", nil
}
