// Package datastore is `shoal datastore`: a workspace's datastores,
// named connections to storage that data paths and job inputs and
// outputs name as azureml://datastores/<name>/paths/<path>.
package datastore

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/shoal-ml/shoal/cli/cmdutil"
	"github.com/shoal-ml/shoal/client"
	"github.com/shoal-ml/shoal/domain/core"
)

// columns are the table's columns: never a secret (a Datastore's JSON
// has none), only which kind of credential it keeps.
var columns = []string{"name", "type", "account_name", "container_name", "filesystem", "bucket", "endpoint_url", "path", "credentials_type", "is_default"}

// NewCommand is `shoal datastore`.
func NewCommand(g *cmdutil.Globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "datastore",
		Short: "The workspace's datastores: Azure Blob, ADLS Gen2, S3-compatible buckets and NFS paths",
		Long: `The workspace's datastores, as Azure ML's: a name for a place data lives
(an azure_blob container, an azure_data_lake_gen2 filesystem, an s3 bucket of
an S3-compatible server, or an nfs path mounted on every node), with the
credentials to reach it. Jobs and data assets name it as
azureml://datastores/<name>/paths/<path>. Credentials are stored encrypted by
the server's secrets key and never shown. workspaceblobstore (the default) and
workspaceartifactstore are Shoal's own file store, present in every workspace.
Contributors and Owners create and delete datastores; every role lists them.`,
	}
	cmd.AddCommand(newCreateCommand(g), newListCommand(g), newShowCommand(g), newDeleteCommand(g))
	return cmd
}

func newCreateCommand(g *cmdutil.Globals) *cobra.Command {
	var file, name string
	cmd := &cobra.Command{
		Use:   "create",
		Short: "Create a datastore from Azure ML datastore YAML (or replace the one of the same name)",
		Long: `Create a datastore from Azure ML datastore YAML, or replace the one of the
same name, as az ml datastore create does. The credentials in the file are
sent once, stored encrypted and never shown again; keep the file out of
version control, or leave credentials out for public storage.`,
		Example: `  shoal datastore create -f blob.yml
  shoal datastore create -f minio.yml --name team_bucket`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if file == "" {
				return &core.Error{Code: core.EINVALID, Field: "file", Message: "--file: is required"}
			}
			doc, err := cmdutil.ReadYAMLDocument(file)
			if err != nil {
				return err
			}
			if name != "" {
				doc["name"] = name
			}
			n, _ := doc["name"].(string)
			if strings.TrimSpace(n) == "" {
				return &core.Error{Code: core.EINVALID, Field: "name", Message: "name: is required, in the file or --name"}
			}
			delete(doc, "$schema")
			raw, err := cmdutil.ToJSON(doc)
			if err != nil {
				return err
			}
			c, ws, err := g.Client()
			if err != nil {
				return err
			}
			d, _, err := c.PutDatastore(cmd.Context(), ws, strings.TrimSpace(n), raw)
			if err != nil {
				return err
			}
			return g.Render(d, columns)
		},
	}
	cmd.Flags().StringVarP(&file, "file", "f", "", "the datastore's YAML file")
	cmd.Flags().StringVarP(&name, "name", "n", "", "the datastore's name (overrides the file's)")
	return cmd
}

func newListCommand(g *cmdutil.Globals) *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List the workspace's datastores, the built-ins included (never their credentials)",
		Args:  cobra.NoArgs,
		RunE: g.CallAndRender(columns, func(ctx context.Context, c *client.Client, ws string) (any, error) {
			return c.ListDatastores(ctx, ws)
		}),
	}
}

// nameArg takes the name as an argument or --name, as az ml does.
func nameArg(args []string, flag string) (string, error) {
	return cmdutil.NameArg(args, flag, "datastore")
}

func newShowCommand(g *cmdutil.Globals) *cobra.Command {
	var name string
	cmd := &cobra.Command{
		Use:     "show NAME",
		Short:   "Show a datastore (never its credentials)",
		Example: "  shoal datastore show workspaceblobstore\n  shoal datastore show --name blob_example -o json",
		Args:    cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			n, err := nameArg(args, name)
			if err != nil {
				return err
			}
			return g.CallAndRender(columns, func(ctx context.Context, c *client.Client, ws string) (any, error) {
				return c.GetDatastore(ctx, ws, n)
			})(cmd, args)
		},
	}
	cmd.Flags().StringVarP(&name, "name", "n", "", "the datastore's name")
	return cmd
}

func newDeleteCommand(g *cmdutil.Globals) *cobra.Command {
	var name string
	cmd := &cobra.Command{
		Use:   "delete NAME",
		Short: "Delete a datastore (the built-ins cannot be); data assets naming it then fail to resolve",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			n, err := nameArg(args, name)
			if err != nil {
				return err
			}
			c, ws, err := g.Client()
			if err != nil {
				return err
			}
			if err := c.DeleteDatastore(cmd.Context(), ws, n); err != nil {
				return err
			}
			fmt.Fprintf(g.Stdout, "datastore %s deleted\n", n)
			return nil
		},
	}
	cmd.Flags().StringVarP(&name, "name", "n", "", "the datastore's name")
	return cmd
}
