// Package server is `shoal server`: the control plane, run in this process.
package server

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/shoal-ml/shoal/cli/cmdutil"
	"github.com/shoal-ml/shoal/server/app"
)

// NewCommand is `shoal server`: run the Shoal API server in this process.
func NewCommand(g *cmdutil.Globals) *cobra.Command {
	var opts app.Options
	var logFormat, logLevel, pprofListen string
	cmd := &cobra.Command{
		Use:   "server",
		Short: "Run the Shoal control plane with embedded defaults (SQLite, local provider)",
		Long: `Run the Shoal server. With no flags it listens on 127.0.0.1:7420, keeps its data in
~/.local/share/shoal and needs no other service. On its first start it creates the
workspace "default" and an admin API token (<data-dir>/admin.token), and points the
local user's CLI at itself (~/.config/shoal/config.yaml) so that no login is needed.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			var level slog.Level
			if err := level.UnmarshalText([]byte(logLevel)); err != nil {
				return fmt.Errorf("--log-level: %w", err)
			}
			hopts := &slog.HandlerOptions{Level: level}
			switch logFormat {
			case "text":
				opts.Logger = slog.New(slog.NewTextHandler(g.Stderr, hopts))
			case "json":
				opts.Logger = slog.New(slog.NewJSONHandler(g.Stderr, hopts))
			default:
				return fmt.Errorf("--log-format: use text or json, not %q", logFormat)
			}
			if g.ConfigPath != "" {
				opts.ClientConfigPath = g.ConfigPath
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			if pprofListen != "" {
				if err := servePprof(ctx, pprofListen); err != nil {
					return fmt.Errorf("--pprof-listen: %w", err)
				}
			}
			opts.StoreEnv = os.Getenv(app.StoreEnv)
			return runServer(ctx, opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.Listen, "listen", "", "address to listen on (default 127.0.0.1:7420)")
	f.StringVar(&opts.AppsListen, "apps-listen", "", "address where instances' applications (Jupyter, custom ones) are served, on an origin of their own (default: the --listen host, a port the system picks)")
	f.StringVar(&opts.DataDir, "data-dir", "", "data directory (default ~/.local/share/shoal)")
	f.StringVar(&opts.NodesDir, "nodes-dir", "", "where the local provider's nodes keep their work dirs (default <data-dir>/nodes; as root /var/lib/shoal-nodes/<data dir's name>-<hash>, outside the data dir, which work never reaches)")
	f.StringVar(&opts.ConfigPath, "config", "", "server config file (YAML; optional)")
	f.BoolVar(&opts.TLS, "tls", false, "serve HTTPS with a private CA and certificate made in the data dir (<data-dir>/tls/ca.pem is what clients trust; the CLI config written records it)")
	f.StringVar(&opts.TLSCert, "tls-cert", "", "serve HTTPS with this certificate (PEM; with --tls-key)")
	f.StringVar(&opts.TLSKey, "tls-key", "", "the certificate's private key (PEM)")
	f.StringVar(&opts.TLSCA, "tls-ca", "", "with --tls-cert: the CA bundle clients and agents need when the certificate does not chain to a system root")
	f.StringVar(&opts.Store, "store", "", "where state is kept: sqlite:///path/to/shoal.db or postgres://user@host:5432/db (default: $SHOAL_STORE, else the config file's store:, else SQLite in the data dir); a URL with a password goes in SHOAL_STORE or the config file, since a command line is readable by every process on the host (refused as root)")
	f.StringVar(&logFormat, "log-format", "text", "log format: text or json")
	f.StringVar(&logLevel, "log-level", "info", "log level: debug, info, warn, error")
	f.StringVar(&pprofListen, "pprof-listen", "", "serve Go's profiles (/debug/pprof/) on this address, without authentication: keep it on loopback (for diagnosing CPU and memory; off by default)")
	return cmd
}

// runServer starts the server and blocks until ctx is cancelled (SIGINT or
// SIGTERM), then shuts down gracefully.
func runServer(ctx context.Context, opts app.Options) error {
	m, err := app.Start(ctx, opts)
	if err != nil {
		return err
	}
	<-ctx.Done()
	opts.Logger.Info("shutting down")
	return m.Close()
}
