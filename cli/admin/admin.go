// Package admin is `shoal admin`: work on a server's store directly.
package admin

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"slices"

	"github.com/spf13/cobra"

	"github.com/shoal-ml/shoal/cli/cmdutil"
	"github.com/shoal-ml/shoal/client"
	"github.com/shoal-ml/shoal/server/app"
	"github.com/shoal-ml/shoal/store/sqlstore/storecopy"
)

// NewCommand is `shoal admin`: work on a server's store directly, on
// the machine that can reach it (no server call).
func NewCommand(g *cmdutil.Globals) *cobra.Command {
	cmd := &cobra.Command{Use: "admin", Short: "Back up, restore and move a server's store (run where the store is reachable)"}
	var store, dataDir, to, from string
	// storeOf is the server's store: --store, else SHOAL_STORE, else the
	// data dir's SQLite file.
	storeOf := func() (string, error) {
		if store != "" {
			if err := checkCommandLineURL(g, "--store", store, "put the URL in "+app.StoreEnv+" instead"); err != nil {
				return "", err
			}
			return store, nil
		}
		if env := os.Getenv(app.StoreEnv); env != "" {
			return env, nil
		}
		return app.DataDirStore(dataDir)
	}
	backup := &cobra.Command{
		Use:   "backup --to FILE",
		Short: "Write a consistent snapshot of the store to a new SQLite file, while the server runs",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if _, err := os.Stat(to); !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("--to %s: the file exists; a backup goes to a new file", to)
			}
			src, err := storeOf()
			if err != nil {
				return err
			}
			dst, err := app.SQLiteURL(to)
			if err != nil {
				return err
			}
			return copyStore(g, cmd, src, dst, false)
		},
	}
	restore := &cobra.Command{
		Use:   "restore --from FILE",
		Short: "Fill a new store (one no server has used) from a backup file",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			src, err := app.SQLiteURL(from)
			if err != nil {
				return err
			}
			dst, err := storeOf()
			if err != nil {
				return err
			}
			return copyStore(g, cmd, src, dst, false)
		},
	}
	migrate := &cobra.Command{
		Use:   "migrate-store --from URL --to URL",
		Short: "Move an installation to another store (sqlite:///path or postgres://...): stop the server, copy, start it on the new store",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			for _, f := range [][2]string{{"--from", from}, {"--to", to}} {
				if err := checkCommandLineURL(g, f[0], f[1], pgPasswordAdvice); err != nil {
					return err
				}
			}
			return copyStore(g, cmd, from, to, true)
		},
	}
	for _, c := range []*cobra.Command{backup, restore} {
		c.Flags().StringVar(&store, "store", "", "the server's store URL (default $SHOAL_STORE, else the data dir's SQLite file; a URL with a password goes in SHOAL_STORE: a command line is readable by every process on the host)")
		c.Flags().StringVar(&dataDir, "data-dir", "", "the server's data dir (default ~/.local/share/shoal)")
	}
	backup.Flags().StringVar(&to, "to", "", "the backup file to create (SQLite)")
	_ = backup.MarkFlagRequired("to")
	restore.Flags().StringVar(&from, "from", "", "the backup file")
	_ = restore.MarkFlagRequired("from")
	migrate.Flags().StringVar(&from, "from", "", "the store to copy (e.g. sqlite:///var/lib/shoal/shoal.db)")
	migrate.Flags().StringVar(&to, "to", "", "the new store (e.g. postgres://shoal@db:5432/shoal, the password in PGPASSWORD or ~/.pgpass)")
	_ = migrate.MarkFlagRequired("from")
	_ = migrate.MarkFlagRequired("to")
	status := &cobra.Command{
		Use:   "status",
		Short: "The server's store and role: with several servers on PostgreSQL, the leader, its term, the lease's age and the replicas seen",
		Args:  cobra.NoArgs,
		RunE: g.CallAndRender(nil, func(ctx context.Context, c *client.Client, ws string) (any, error) {
			return c.Ready(ctx)
		}),
	}
	cmd.AddCommand(backup, restore, migrate, status)
	return cmd
}

// pgPasswordAdvice is where migrate-store's passwords go: it takes two
// URLs, so one environment variable would not do; PostgreSQL's own
// PGPASSWORD and password file (~/.pgpass, or PGPASSFILE) hold them, and
// are read when the URL has none.
const pgPasswordAdvice = "leave the password out of the URL and give it in PGPASSWORD or in ~/.pgpass (PGPASSFILE), which are read when the URL has none"

// checkCommandLineURL refuses, when this process runs as root, a store URL
// with a password given in a command-line flag, and warns otherwise.
func checkCommandLineURL(g *cmdutil.Globals, flag, raw, advice string) error {
	warning, err := app.CheckCommandLineURL(flag, raw, advice, g.Root())
	if warning != "" {
		fmt.Fprintln(g.Stderr, "warning:", warning)
	}
	return err
}

// copyStore copies and prints the rows copied per table.
func copyStore(g *cmdutil.Globals, cmd *cobra.Command, from, to string, withFiles bool) error {
	stats, err := app.CopyStore(cmd.Context(), from, to, withFiles)
	if err != nil {
		return err
	}
	total := 0
	for _, t := range storecopy.Tables {
		total += stats[t]
	}
	fmt.Fprintf(g.Stdout, "copied %d rows:", total)
	for _, t := range slices.Sorted(maps.Keys(stats)) {
		if stats[t] > 0 {
			fmt.Fprintf(g.Stdout, " %s %d", t, stats[t])
		}
	}
	fmt.Fprintln(g.Stdout)
	return nil
}
