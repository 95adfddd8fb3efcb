package access

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/shoal-ml/shoal/cli/cmdutil"
	"github.com/shoal-ml/shoal/client"
)

// NewSPCommand is `shoal sp`: service principals, the applications that
// sign in with a client ID and secret through Azure's identity libraries
// (as `az ad sp create-for-rbac` makes them for Azure).
func NewSPCommand(g *cmdutil.Globals) *cobra.Command {
	cmd := &cobra.Command{Use: "sp", Aliases: []string{"service-principal"}, Short: "Service principals: applications that sign in with a client ID and secret (administrators)"}
	var name, description string
	// withHint prints what to set for Azure's SDKs, on stderr so that
	// -o json stays machine-readable.
	withHint := func(call func(ctx context.Context, c *client.Client) (*client.SPCredentials, error)) func(*cobra.Command, []string) error {
		return g.CallAndRender(nil, func(ctx context.Context, c *client.Client, ws string) (any, error) {
			cred, err := call(ctx, c)
			if err != nil {
				return nil, err
			}
			fmt.Fprintf(g.Stderr, "The secret is shown this once. Azure's SDKs sign in as %s with:\n"+
				"  AZURE_AUTHORITY_HOST=%s AZURE_TENANT_ID=%s AZURE_CLIENT_ID=%s AZURE_CLIENT_SECRET=<client_secret>\n"+
				"Grant it a role: shoal role assign --sp %s --role Contributor\n",
				cred.Name, cred.AuthorityHost, cred.TenantID, cred.ClientID, cred.Name)
			return cred, nil
		})
	}
	create := &cobra.Command{Use: "create", Short: "Create a service principal and print its client ID and secret (shown once)", Args: cobra.NoArgs,
		RunE: withHint(func(ctx context.Context, c *client.Client) (*client.SPCredentials, error) {
			return c.CreateServicePrincipal(ctx, name, description)
		})}
	create.Flags().StringVarP(&name, "name", "n", "", "service principal name")
	create.Flags().StringVar(&description, "description", "", "what it is for")
	_ = create.MarkFlagRequired("name")
	reset := &cobra.Command{Use: "reset-secret", Short: "Give a service principal a new secret (the old one and its tokens stop working)", Args: cobra.NoArgs,
		RunE: withHint(func(ctx context.Context, c *client.Client) (*client.SPCredentials, error) {
			return c.ResetServicePrincipalSecret(ctx, name)
		})}
	reset.Flags().StringVarP(&name, "name", "n", "", "service principal name")
	_ = reset.MarkFlagRequired("name")
	show := &cobra.Command{Use: "show", Short: "Show a service principal", Args: cobra.NoArgs,
		RunE: g.CallAndRender(nil, func(ctx context.Context, c *client.Client, ws string) (any, error) {
			return c.GetServicePrincipal(ctx, name)
		})}
	show.Flags().StringVarP(&name, "name", "n", "", "service principal name")
	_ = show.MarkFlagRequired("name")
	list := &cobra.Command{Use: "list", Short: "List service principals", Args: cobra.NoArgs,
		RunE: g.CallAndRender([]string{"name", "client_id", "description", "created_by", "created_on", "secret_created_on"}, func(ctx context.Context, c *client.Client, ws string) (any, error) {
			return c.ListServicePrincipals(ctx)
		})}
	del := &cobra.Command{Use: "delete", Short: "Delete a service principal and its role assignments", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, _, err := g.Client()
			if err != nil {
				return err
			}
			return c.DeleteServicePrincipal(cmd.Context(), name)
		}}
	del.Flags().StringVarP(&name, "name", "n", "", "service principal name")
	_ = del.MarkFlagRequired("name")
	cmd.AddCommand(create, list, show, reset, del)
	return cmd
}
