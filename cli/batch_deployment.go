package cli

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/shoal-ml/shoal/cli/cmdutil"
	"github.com/shoal-ml/shoal/client"
	"github.com/shoal-ml/shoal/domain/core"
)

// batchDeploymentColumns are the deployment table's columns.
var batchDeploymentColumns = []string{"name", "endpoint_name", "model", "compute", "resources.instance_count", "settings.mini_batch_size", "created_on"}

func newBatchDeploymentCommand(g *cmdutil.Globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "batch-deployment",
		Short: "Batch deployments: how a batch endpoint scores (model, scoring script, environment, cluster, settings)",
		Long: `Batch deployments, as Azure ML's (type: model): a registered model, a scoring
script in a code folder (init() and run(mini_batch)), an environment, a compute
cluster, resources.instance_count and the parallel settings (mini_batch_size,
max_concurrency_per_instance, output_action, output_file_name, retry_settings,
error_threshold, logging_level). The code folder is uploaded by create and update.
An endpoint's first deployment becomes its default; --set-default makes another one.`,
	}
	cmd.AddCommand(newBatchDeploymentCreateCommand(g, "create"), newBatchDeploymentCreateCommand(g, "update"),
		newBatchDeploymentShowCommand(g), newBatchDeploymentListCommand(g), newBatchDeploymentDeleteCommand(g))
	return cmd
}

// newBatchDeploymentCreateCommand is create or update: the file's code
// folder and inline environment's files are uploaded as a job's are,
// then the whole document is sent.
func newBatchDeploymentCreateCommand(g *cmdutil.Globals, verb string) *cobra.Command {
	var (
		file, name, endpoint string
		sets                 []string
		setDefault           bool
	)
	cmd := &cobra.Command{
		Use:   verb,
		Short: map[string]string{"create": "Create a batch deployment from Azure ML batch deployment YAML", "update": "Update a batch deployment from its YAML (the code folder is uploaded again)"}[verb],
		Example: `  shoal batch-deployment ` + verb + ` -f deployment.yml
  shoal batch-deployment ` + verb + ` -f deployment.yml --endpoint-name mnist-batch --set-default`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if file == "" {
				return &core.Error{Code: core.EINVALID, Field: "file", Message: "--file: is required"}
			}
			doc, n, err := readBatchDocument(file, name, sets)
			if err != nil {
				return err
			}
			if endpoint != "" {
				doc["endpoint_name"] = endpoint
			}
			ep, _ := doc["endpoint_name"].(string)
			if strings.TrimSpace(ep) == "" {
				return &core.Error{Code: core.EINVALID, Field: "endpoint_name", Message: "endpoint_name: is required, in the file or --endpoint-name"}
			}
			c, ws, err := g.Client()
			if err != nil {
				return err
			}
			if err := uploadDeploymentFiles(cmd.Context(), c, ws, filepath.Dir(file), doc); err != nil {
				return err
			}
			raw, err := cmdutil.ToJSON(doc)
			if err != nil {
				return err
			}
			d, _, err := c.PutBatchDeployment(cmd.Context(), ws, strings.TrimSpace(ep), n, raw, setDefault)
			if err != nil {
				return err
			}
			return g.Render(d, batchDeploymentColumns)
		},
	}
	cmd.Flags().StringVarP(&file, "file", "f", "", "the deployment's YAML file")
	cmd.Flags().StringVarP(&name, "name", "n", "", "the deployment's name (overrides the file's)")
	cmd.Flags().StringVarP(&endpoint, "endpoint-name", "e", "", "the endpoint's name (overrides the file's)")
	cmd.Flags().StringArrayVar(&sets, "set", nil, "set a key of the document: --set settings.mini_batch_size=20 (repeatable)")
	cmd.Flags().BoolVar(&setDefault, "set-default", false, "make it the endpoint's default deployment")
	return cmd
}

// uploadDeploymentFiles uploads code_configuration.code and an inline
// environment's local files (relative to base) with the job's upload,
// and puts their ids in doc.
func uploadDeploymentFiles(ctx context.Context, c *client.Client, ws, base string, doc map[string]any) error {
	cc, _ := doc["code_configuration"].(map[string]any)
	part := map[string]any{}
	if cc != nil && cc["code"] != nil {
		part["code"] = cc["code"]
	}
	if env, ok := doc["environment"].(map[string]any); ok {
		part["environment"] = env
	}
	if err := uploadJobFiles(ctx, c, ws, base, part); err != nil {
		if strings.HasPrefix(err.Error(), "code:") {
			return fmt.Errorf("code_configuration.%w", err)
		}
		return err
	}
	if cc != nil && part["code"] != nil {
		cc["code"] = part["code"]
	}
	return nil
}

// deploymentArgs reads NAME (or --name) and --endpoint-name.
func deploymentArgs(args []string, name, endpoint string) (string, error) {
	n, err := batchName(args, name, "batch-deployment")
	if err != nil {
		return "", err
	}
	if endpoint == "" {
		return "", &core.Error{Code: core.EINVALID, Field: "endpoint_name", Message: "--endpoint-name: is required"}
	}
	return n, nil
}

func newBatchDeploymentShowCommand(g *cmdutil.Globals) *cobra.Command {
	var name, endpoint string
	cmd := &cobra.Command{
		Use:     "show NAME --endpoint-name ENDPOINT",
		Short:   "Show a batch deployment",
		Example: "  shoal batch-deployment show --name mnist-torch-dpl --endpoint-name mnist-batch -o yaml",
		Args:    cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			n, err := deploymentArgs(args, name, endpoint)
			if err != nil {
				return err
			}
			return g.CallAndRender(batchDeploymentColumns, func(ctx context.Context, c *client.Client, ws string) (any, error) {
				return c.GetBatchDeployment(ctx, ws, endpoint, n)
			})(cmd, args)
		},
	}
	cmd.Flags().StringVarP(&name, "name", "n", "", "the deployment's name")
	cmd.Flags().StringVarP(&endpoint, "endpoint-name", "e", "", "the endpoint's name")
	return cmd
}

func newBatchDeploymentListCommand(g *cmdutil.Globals) *cobra.Command {
	var endpoint string
	cmd := &cobra.Command{
		Use:   "list --endpoint-name ENDPOINT",
		Short: "List a batch endpoint's deployments",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if endpoint == "" {
				return &core.Error{Code: core.EINVALID, Field: "endpoint_name", Message: "--endpoint-name: is required"}
			}
			return g.CallAndRender(batchDeploymentColumns, func(ctx context.Context, c *client.Client, ws string) (any, error) {
				return c.ListBatchDeployments(ctx, ws, endpoint)
			})(cmd, args)
		},
	}
	cmd.Flags().StringVarP(&endpoint, "endpoint-name", "e", "", "the endpoint's name")
	return cmd
}

func newBatchDeploymentDeleteCommand(g *cmdutil.Globals) *cobra.Command {
	var (
		name, endpoint string
		yes            bool
	)
	cmd := &cobra.Command{
		Use:   "delete NAME --endpoint-name ENDPOINT",
		Short: "Delete a batch deployment (the endpoint's default only when it is the last)",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			n, err := deploymentArgs(args, name, endpoint)
			if err != nil {
				return err
			}
			c, ws, err := g.Client()
			if err != nil {
				return err
			}
			if err := c.DeleteBatchDeployment(cmd.Context(), ws, endpoint, n); err != nil {
				return err
			}
			fmt.Fprintf(g.Stdout, "batch deployment %s of %s deleted\n", n, endpoint)
			return nil
		},
	}
	cmd.Flags().StringVarP(&name, "name", "n", "", "the deployment's name")
	cmd.Flags().StringVarP(&endpoint, "endpoint-name", "e", "", "the endpoint's name")
	cmd.Flags().BoolVarP(&yes, "yes", "y", false, "do not ask (az ml's flag; Shoal never asks)")
	return cmd
}
