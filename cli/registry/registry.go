// Package registry is `shoal registry`: a workspace's private container
// registries.
package registry

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/shoal-ml/shoal/cli/cmdutil"
	"github.com/shoal-ml/shoal/client"
	"github.com/shoal-ml/shoal/domain/asset"
	"github.com/shoal-ml/shoal/domain/core"
)

var registryColumns = []string{"server", "username", "insecure", "push", "created_on", "created_by"}

// NewCommand is `shoal registry`: the workspace's private container
// registries, the logins that jobs' images are pulled with.
func NewCommand(g *cmdutil.Globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "registry",
		Short: "The workspace's private container registries: logins jobs' images are pulled with",
		Long: `The workspace's private container registries. A login's password is stored
encrypted by the server's secrets key, never shown, and handed to a node only
inside the task of a job whose image comes from that registry. Adding and
removing logins takes the workspace's Owner role; every role may list them.`,
	}
	cmd.AddCommand(newRegistryAddCommand(g), newRegistryListCommand(g), newRegistryRemoveCommand(g))
	return cmd
}

func newRegistryAddCommand(g *cmdutil.Globals) *cobra.Command {
	var req asset.RegistryAdd
	var passwordStdin bool
	cmd := &cobra.Command{
		Use:   "add",
		Short: "Add a registry login (or replace the one of the same server)",
		Long: `Add a registry login, or replace the one of the same server. The password is
read from standard input (--password-stdin), never from a flag, so it stays
out of shell history and process lists. --insecure reaches the registry over
plain HTTP; without it, only HTTPS. --push makes it the registry images built
for the workspace's jobs are pushed to (<server>/shoal/<workspace>), so other
nodes pull them rather than build them again.`,
		Example: `  echo "$REGISTRY_PASSWORD" | shoal registry add --server myregistry.example.com --username team --password-stdin
  shoal registry add --server localhost:5000 --insecure`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if passwordStdin {
				b, err := io.ReadAll(io.LimitReader(g.Stdin, 8193))
				if err != nil {
					return fmt.Errorf("read the password from standard input: %w", err)
				}
				req.Password = strings.TrimRight(string(b), "\r\n")
				if req.Password == "" {
					return &core.Error{Code: core.EINVALID, Field: "password", Message: "password: --password-stdin read nothing from standard input"}
				}
			} else if req.Username != "" {
				return &core.Error{Code: core.EINVALID, Field: "password", Message: "password: a login needs its password on standard input: --password-stdin"}
			}
			c, ws, err := g.Client()
			if err != nil {
				return err
			}
			r, err := c.AddRegistry(cmd.Context(), ws, &req)
			if err != nil {
				return err
			}
			return g.Render(r, registryColumns)
		},
	}
	cmd.Flags().StringVar(&req.Server, "server", "", "the registry's host[:port], as image references name it (localhost:5000)")
	cmd.Flags().StringVarP(&req.Username, "username", "u", "", "the login's user name")
	cmd.Flags().BoolVar(&passwordStdin, "password-stdin", false, "read the password from standard input")
	cmd.Flags().BoolVar(&req.Insecure, "insecure", false, "reach the registry over plain HTTP")
	cmd.Flags().BoolVar(&req.Push, "push", false, "push images built for the workspace's jobs here")
	_ = cmd.MarkFlagRequired("server")
	return cmd
}

func newRegistryListCommand(g *cmdutil.Globals) *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List the workspace's registry logins (never their passwords)",
		Args:  cobra.NoArgs,
		RunE: g.CallAndRender(registryColumns, func(ctx context.Context, c *client.Client, ws string) (any, error) {
			return c.ListRegistries(ctx, ws)
		}),
	}
}

func newRegistryRemoveCommand(g *cmdutil.Globals) *cobra.Command {
	var server string
	cmd := &cobra.Command{
		Use:   "remove",
		Short: "Remove a registry login",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, ws, err := g.Client()
			if err != nil {
				return err
			}
			if err := c.RemoveRegistry(cmd.Context(), ws, server); err != nil {
				return err
			}
			fmt.Fprintf(g.Stdout, "registry %s removed\n", server)
			return nil
		},
	}
	cmd.Flags().StringVar(&server, "server", "", "the registry's host[:port]")
	_ = cmd.MarkFlagRequired("server")
	return cmd
}
