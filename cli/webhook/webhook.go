// Package webhook is `shoal webhook`: a workspace's webhooks, the signed
// HTTP POSTs (or mails) the server sends when something happens, and
// their deliveries.
package webhook

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/shoal-ml/shoal/cli/cmdutil"
	"github.com/shoal-ml/shoal/client"
	"github.com/shoal-ml/shoal/domain/notify"
)

var (
	webhookColumns  = []string{"name", "url", "emails", "events", "dropped", "secret_hint", "created_by", "created_on"}
	createdColumns  = []string{"name", "url", "emails", "events", "secret"}
	deliveryColumns = []string{"id", "event", "status", "attempts", "status_code", "last_error", "next_attempt"}
)

// NewCommand is `shoal webhook`.
func NewCommand(g *cmdutil.Globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "webhook",
		Short: "The workspace's webhooks: signed POSTs (or mails) sent when jobs end, queues wait, budgets cross...",
		Long: `The workspace's webhooks. A webhook subscribes to notification events
(` + strings.Join(notify.Events, ", ") + `)
and receives each as an HTTP POST signed with its own secret (the
X-Shoal-Signature header: HMAC-SHA256), or as a mail to its addresses. The
secret is shown once, by create (and rotate-secret), and kept encrypted.
A URL on the loopback, link-local (the cloud metadata address) or unspecified
address is refused unless the server's config allows it. Webhooks are the
workspace Owners' alone: other roles can neither see nor change them.
See docs/reference/webhooks.md for the payload and how to check a signature.`,
	}
	cmd.AddCommand(newCreateCommand(g), newListCommand(g), newShowCommand(g), newDeleteCommand(g),
		newDeliveriesCommand(g), newTestCommand(g), newRotateCommand(g))
	return cmd
}

func newCreateCommand(g *cmdutil.Globals) *cobra.Command {
	var req notify.WebhookCreate
	cmd := &cobra.Command{
		Use:   "create",
		Short: "Create a webhook; its signing secret is printed this once",
		Example: `  shoal webhook create --name ops --url https://hooks.example.com/shoal --events job_failed,job_queued_too_long
  shoal webhook create --name team-mail --email oncall@example.com --events job_failed,budget_threshold`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, ws, err := g.Client()
			if err != nil {
				return err
			}
			out, err := c.CreateWebhook(cmd.Context(), ws, &req)
			if err != nil {
				return err
			}
			fmt.Fprintln(g.Stderr, "Keep the secret: it signs every delivery and is not shown again (shoal webhook rotate-secret makes a new one).")
			return g.Render(out, createdColumns)
		},
	}
	cmd.Flags().StringVarP(&req.Name, "name", "n", "", "the webhook's name")
	cmd.Flags().StringVar(&req.URL, "url", "", "the https:// URL each event is POSTed to")
	cmd.Flags().StringSliceVar(&req.Emails, "email", nil, "an address mailed each event, instead of a URL (repeat, or a,b)")
	cmd.Flags().StringSliceVar(&req.Events, "events", nil, "the events sent: "+strings.Join(notify.Events, ","))
	cmd.Flags().StringVar(&req.Description, "description", "", "what the webhook is for")
	_ = cmd.MarkFlagRequired("name")
	_ = cmd.MarkFlagRequired("events")
	return cmd
}

func newListCommand(g *cmdutil.Globals) *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List the workspace's webhooks (never their secrets)",
		Args:  cobra.NoArgs,
		RunE: g.CallAndRender(webhookColumns, func(ctx context.Context, c *client.Client, ws string) (any, error) {
			return c.ListWebhooks(ctx, ws)
		}),
	}
}

// oneHook is a command of one webhook, NAME or -n NAME (cmdutil.NameArg,
// as every noun's), run with the configured client and workspace.
func oneHook(g *cmdutil.Globals, use, short string, run func(ctx context.Context, c *client.Client, ws, name string) error) *cobra.Command {
	var flag string
	cmd := &cobra.Command{
		Use:   use + " [NAME]",
		Short: short,
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name, err := cmdutil.NameArg(args, flag, "webhook")
			if err != nil {
				return err
			}
			c, ws, err := g.Client()
			if err != nil {
				return err
			}
			return run(cmd.Context(), c, ws, name)
		},
	}
	cmd.Flags().StringVarP(&flag, "name", "n", "", "the webhook's name")
	return cmd
}

// named is a command of one webhook that prints what the call returns.
func named(g *cmdutil.Globals, use, short string, columns []string, call func(ctx context.Context, c *client.Client, ws, name string) (any, error)) *cobra.Command {
	return oneHook(g, use, short, func(ctx context.Context, c *client.Client, ws, name string) error {
		v, err := call(ctx, c, ws, name)
		if err != nil {
			return err
		}
		return g.Render(v, columns)
	})
}

func newShowCommand(g *cmdutil.Globals) *cobra.Command {
	return named(g, "show", "Show a webhook (never its secret)", webhookColumns, func(ctx context.Context, c *client.Client, ws, name string) (any, error) {
		return c.GetWebhook(ctx, ws, name)
	})
}

func newDeleteCommand(g *cmdutil.Globals) *cobra.Command {
	return oneHook(g, "delete", "Delete a webhook and its deliveries", func(ctx context.Context, c *client.Client, ws, name string) error {
		if err := c.DeleteWebhook(ctx, ws, name); err != nil {
			return err
		}
		_, err := fmt.Fprintf(g.Stdout, "webhook %s deleted\n", name)
		return err
	})
}

func newDeliveriesCommand(g *cmdutil.Globals) *cobra.Command {
	var limit int
	cmd := named(g, "deliveries", "A webhook's deliveries, newest first: status, tries, the receiver's last answer, the next try",
		deliveryColumns, func(ctx context.Context, c *client.Client, ws, name string) (any, error) {
			return c.WebhookDeliveries(ctx, ws, name, limit)
		})
	cmd.Flags().IntVar(&limit, "limit", 50, "show at most this many")
	return cmd
}

func newTestCommand(g *cmdutil.Globals) *cobra.Command {
	return named(g, "test", "Queue a signed ping delivery to the webhook (see it with deliveries)", deliveryColumns,
		func(ctx context.Context, c *client.Client, ws, name string) (any, error) {
			return c.TestWebhook(ctx, ws, name)
		})
}

func newRotateCommand(g *cmdutil.Globals) *cobra.Command {
	return named(g, "rotate-secret", "Give the webhook a new signing secret, printed this once", createdColumns,
		func(ctx context.Context, c *client.Client, ws, name string) (any, error) {
			return c.RotateWebhookSecret(ctx, ws, name)
		})
}
