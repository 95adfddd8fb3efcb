// Package access is who may do what: `shoal user`, `token`, `login`,
// `role`, `identity`, `sp` and `audit`.
package access

import (
	"bufio"
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/shoal-ml/shoal/cli/clientconfig"
	"github.com/shoal-ml/shoal/cli/cmdutil"
	"github.com/shoal-ml/shoal/client"
	"github.com/shoal-ml/shoal/domain/identity"
)

// NewUserCommand is `shoal user`: the server's users, which administrators
// create, list and disable.
func NewUserCommand(g *cmdutil.Globals) *cobra.Command {
	cmd := &cobra.Command{Use: "user", Short: "Manage users (administrators)"}
	var name, issuer, subject string
	var admin bool
	create := &cobra.Command{Use: "create", Short: "Create a user", Args: cobra.NoArgs,
		RunE: g.CallAndRender(nil, func(ctx context.Context, c *client.Client, ws string) (any, error) {
			return c.CreateUser(ctx, &identity.User{Name: name, Admin: admin, OIDCIssuer: issuer, OIDCSubject: subject})
		})}
	create.Flags().StringVarP(&name, "name", "n", "", "user name")
	create.Flags().BoolVar(&admin, "admin", false, "make the user a server administrator")
	create.Flags().StringVar(&issuer, "oidc-issuer", "", "link a sign-in provider account: its issuer URL")
	create.Flags().StringVar(&subject, "oidc-subject", "", "link a sign-in provider account: its subject")
	_ = create.MarkFlagRequired("name")
	list := &cobra.Command{Use: "list", Short: "List users", Args: cobra.NoArgs,
		RunE: g.CallAndRender([]string{"name", "admin", "disabled", "created_on"}, func(ctx context.Context, c *client.Client, ws string) (any, error) {
			return c.ListUsers(ctx)
		})}
	named := func(use, short string, run func(cmd *cobra.Command, c *client.Client, name string) (any, error)) *cobra.Command {
		var n string
		sub := &cobra.Command{Use: use, Short: short, Args: cobra.NoArgs}
		sub.RunE = g.CallAndRender(nil, func(ctx context.Context, c *client.Client, ws string) (any, error) { return run(sub, c, n) })
		sub.Flags().StringVarP(&n, "name", "n", "", "user name")
		_ = sub.MarkFlagRequired("name")
		return sub
	}
	show := named("show", "Show a user", func(cmd *cobra.Command, c *client.Client, n string) (any, error) {
		return c.GetUser(cmd.Context(), n)
	})
	disable := named("disable", "Disable a user: their tokens stop working at once", func(cmd *cobra.Command, c *client.Client, n string) (any, error) {
		return c.SetUserDisabled(cmd.Context(), n, true)
	})
	enable := named("enable", "Enable a disabled user", func(cmd *cobra.Command, c *client.Client, n string) (any, error) {
		return c.SetUserDisabled(cmd.Context(), n, false)
	})
	cmd.AddCommand(create, list, show, disable, enable)
	return cmd
}

// NewTokenCommand is `shoal token`: API tokens, the secrets scripts and
// agents sign in with.
func NewTokenCommand(g *cmdutil.Globals) *cobra.Command {
	cmd := &cobra.Command{Use: "token", Short: "Manage API tokens"}
	var user, name, expires string
	create := &cobra.Command{Use: "create", Short: "Create an API token; it is printed once", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, _, err := g.Client()
			if err != nil {
				return err
			}
			d, err := parseDays(expires)
			if err != nil {
				return err
			}
			tok, err := c.CreateToken(cmd.Context(), user, name, d)
			if err != nil {
				return err
			}
			if g.Output == "json" && g.Query == "" {
				return g.Render(tok, nil)
			}
			if g.Output == "table" || g.Output == "tsv" {
				fmt.Fprintln(g.Stdout, tok.Token)
				return nil
			}
			return g.Render(tok, nil)
		}}
	create.Flags().StringVar(&user, "user", "", "the user the token acts as")
	create.Flags().StringVar(&name, "name", "", "a name for the token, e.g. laptop")
	create.Flags().StringVar(&expires, "expires-in", "", "lifetime, e.g. 30d or 12h (default: never)")
	_ = create.MarkFlagRequired("user")
	_ = create.MarkFlagRequired("name")
	var listUser string
	list := &cobra.Command{Use: "list", Short: "List a user's tokens (never the tokens themselves)", Args: cobra.NoArgs,
		RunE: g.CallAndRender([]string{"id", "name", "principal_id", "created_on", "expires_on", "revoked"}, func(ctx context.Context, c *client.Client, ws string) (any, error) {
			return c.ListTokens(ctx, listUser)
		})}
	list.Flags().StringVar(&listUser, "user", "", "the user")
	_ = list.MarkFlagRequired("user")
	var id string
	revoke := &cobra.Command{Use: "revoke", Short: "Revoke a token: it fails at once", Args: cobra.NoArgs,
		RunE: g.CallAndRender(nil, func(ctx context.Context, c *client.Client, ws string) (any, error) {
			return c.RevokeToken(ctx, id)
		})}
	revoke.Flags().StringVar(&id, "id", "", "token id (see token list)")
	_ = revoke.MarkFlagRequired("id")
	cmd.AddCommand(create, list, revoke)
	return cmd
}

// parseDays reads "30d", "12h" or "90m"; "" is 0 (never expires).
func parseDays(v string) (string, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return "", nil
	}
	if n, ok := strings.CutSuffix(v, "d"); ok {
		days, err := cmdutil.IntFlag("expires-in", n)
		if err != nil || days <= 0 {
			return "", fmt.Errorf("--expires-in: %q is not a number of days such as 30d", v)
		}
		return fmt.Sprintf("%dh", days*24), nil
	}
	return v, nil
}

// NewLoginCommand is `shoal login`: store a server and token in the client
// config so later commands need neither.
func NewLoginCommand(g *cmdutil.Globals) *cobra.Command {
	var server, token string
	cmd := &cobra.Command{
		Use:   "login",
		Short: "Store a server URL and API token in the client config",
		Long:  "Store a server URL and API token in the client config (~/.config/shoal/config.yaml). The token is read from --token, or from standard input when --token is not given.",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if server == "" {
				return fmt.Errorf("--server: is required")
			}
			if token == "" {
				fmt.Fprint(g.Stderr, "API token: ")
				line, err := bufio.NewReader(g.Stdin).ReadString('\n')
				if err != nil && strings.TrimSpace(line) == "" {
					return fmt.Errorf("no token given: pass --token or type it on standard input")
				}
				token = strings.TrimSpace(line)
			}
			c := client.NewClient(server, token)
			who, err := c.Whoami(cmd.Context())
			if err != nil {
				return err
			}
			path := g.ConfigPath
			if path == "" {
				if path, err = clientconfig.DefaultPath(); err != nil {
					return err
				}
			}
			cfg, err := clientconfig.Load(path)
			if err != nil {
				return err
			}
			cfg.Server, cfg.Token, cfg.WrittenByServer = strings.TrimRight(server, "/"), token, false
			if g.Workspace != "" {
				cfg.Workspace = g.Workspace
			}
			if err := clientconfig.Save(path, cfg); err != nil {
				return err
			}
			fmt.Fprintf(g.Stderr, "Logged in to %s as %s\n", server, who.Principal.Name)
			return nil
		},
	}
	cmd.Flags().StringVar(&server, "server", "", "server URL, e.g. http://127.0.0.1:7420")
	cmd.Flags().StringVar(&token, "token", "", "API token (default: read from standard input)")
	return cmd
}

// NewRoleCommand is `shoal role`: roles and their assignments, which decide
// what each user may do in a workspace.
func NewRoleCommand(g *cmdutil.Globals) *cobra.Command {
	cmd := &cobra.Command{Use: "role", Short: "Roles and role assignments (per workspace)"}
	list := &cobra.Command{Use: "list", Short: "List built-in and custom roles", Args: cobra.NoArgs,
		RunE: g.CallAndRender([]string{"name", "built_in", "actions", "not_actions", "description"}, func(ctx context.Context, c *client.Client, ws string) (any, error) {
			return c.ListRoles(ctx)
		})}
	var name, description string
	var actions, notActions []string
	create := &cobra.Command{Use: "create", Short: "Define a custom role from actions (computes/read, computes/start/action, jobs/*, */read, ...)", Args: cobra.NoArgs,
		RunE: g.CallAndRender(nil, func(ctx context.Context, c *client.Client, ws string) (any, error) {
			return c.CreateRole(ctx, &identity.RoleDefinition{Name: name, Description: description, Actions: actions, NotActions: notActions})
		})}
	create.Flags().StringVarP(&name, "name", "n", "", "role name")
	create.Flags().StringVar(&description, "description", "", "description")
	create.Flags().StringSliceVar(&actions, "actions", nil, "actions granted (comma-separated)")
	create.Flags().StringSliceVar(&notActions, "not-actions", nil, "actions subtracted")
	_ = create.MarkFlagRequired("name")
	_ = create.MarkFlagRequired("actions")
	var user, identity, compute, sp, role string
	principalOf := func(ws string) (string, error) {
		n := 0
		for _, v := range []string{user, identity, compute, sp} {
			if v != "" {
				n++
			}
		}
		if n != 1 {
			return "", fmt.Errorf("give exactly one of --user, --identity, --sp or --compute")
		}
		switch {
		case sp != "":
			return "sp:" + sp, nil
		case user != "":
			return "user:" + user, nil
		case identity != "":
			return "identity:" + identity, nil
		}
		// A compute's system-assigned identity is named <workspace>.<compute>.
		return "identity:" + strings.ToLower(ws) + "." + strings.ToLower(compute), nil
	}
	assign := &cobra.Command{Use: "assign", Short: "Grant a role to a user, identity or service principal in the workspace", Args: cobra.NoArgs,
		RunE: g.CallAndRender(nil, func(ctx context.Context, c *client.Client, ws string) (any, error) {
			p, err := principalOf(ws)
			if err != nil {
				return nil, err
			}
			return c.AssignRole(ctx, ws, p, role)
		})}
	unassign := &cobra.Command{Use: "unassign", Short: "Remove a role from a user, identity or service principal in the workspace", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, ws, err := g.Client()
			if err != nil {
				return err
			}
			p, err := principalOf(ws)
			if err != nil {
				return err
			}
			return c.UnassignRole(cmd.Context(), ws, p, role)
		}}
	for _, sub := range []*cobra.Command{assign, unassign} {
		sub.Flags().StringVar(&user, "user", "", "user name")
		sub.Flags().StringVar(&identity, "identity", "", "identity name")
		sub.Flags().StringVar(&sp, "sp", "", "service principal name")
		sub.Flags().StringVar(&compute, "compute", "", "a compute whose system-assigned identity gets the role")
		sub.Flags().StringVar(&role, "role", "", "role name (Owner, Contributor, Reader or a custom one)")
		_ = sub.MarkFlagRequired("role")
	}
	assignments := &cobra.Command{Use: "list-assignments", Short: "List the workspace's role assignments", Args: cobra.NoArgs,
		RunE: g.CallAndRender([]string{"principal_id", "role", "workspace", "created_by", "created_on"}, func(ctx context.Context, c *client.Client, ws string) (any, error) {
			return c.ListAssignments(ctx, ws)
		})}
	cmd.AddCommand(list, create, assign, unassign, assignments)
	return cmd
}

// NewIdentityCommand is `shoal identity`: managed identities that jobs and
// instances act as.
func NewIdentityCommand(g *cmdutil.Globals) *cobra.Command {
	cmd := &cobra.Command{Use: "identity", Short: "Managed identities that workloads act as"}
	var name string
	create := &cobra.Command{Use: "create", Short: "Create a user-assigned identity (administrators)", Args: cobra.NoArgs,
		RunE: g.CallAndRender(nil, func(ctx context.Context, c *client.Client, ws string) (any, error) {
			return c.CreateIdentity(ctx, name)
		})}
	create.Flags().StringVarP(&name, "name", "n", "", "identity name")
	_ = create.MarkFlagRequired("name")
	list := &cobra.Command{Use: "list", Short: "List identities (system-assigned ones are named <workspace>.<compute>)", Args: cobra.NoArgs,
		RunE: g.CallAndRender([]string{"name", "client_id", "system_assigned", "created_on"}, func(ctx context.Context, c *client.Client, ws string) (any, error) {
			return c.ListIdentities(ctx)
		})}
	cmd.AddCommand(create, list)
	return cmd
}

// NewAuditCommand is `shoal audit`: the audit log, who did what, for
// administrators.
func NewAuditCommand(g *cmdutil.Globals) *cobra.Command {
	cmd := &cobra.Command{Use: "audit", Short: "The audit log (administrators)"}
	var since, principal, target string
	list := &cobra.Command{Use: "list", Short: "List audit records: every change, login and refusal", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, _, err := g.Client()
			if err != nil {
				return err
			}
			_, ws, err := g.Client()
			if err != nil {
				return err
			}
			l, err := c.ListAudit(cmd.Context(), since, principal, auditTarget(target, ws))
			if err != nil {
				return err
			}
			return g.Render(l, []string{"time", "principal_id", "action", "target", "outcome", "source_address", "detail"})
		}}
	list.Flags().StringVar(&since, "since", "", "only records since an RFC 3339 time or a duration ago (1h)")
	list.Flags().StringVar(&principal, "principal", "", "only this principal (admin, user:alice, identity:trainer)")
	list.Flags().StringVar(&target, "target", "", "only records about this resource and what is under it: computes/NAME or jobs/NAME (in the workspace), users/NAME, or a full path")
	cmd.AddCommand(list)
	return cmd
}

// auditTarget turns "computes/x" or "jobs/y" into the workspace's resource
// path, as the audit log records targets.
func auditTarget(target, ws string) string {
	for _, p := range []string{"computes/", "jobs/", "roleassignments", "artifacts"} {
		if strings.HasPrefix(target, p) {
			return "workspaces/" + ws + "/" + target
		}
	}
	return target
}
