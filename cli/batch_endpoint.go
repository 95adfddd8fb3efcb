package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/shoal-ml/shoal/cli/cmdutil"
	"github.com/shoal-ml/shoal/client"
	"github.com/shoal-ml/shoal/domain/batch"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job/jobio"
)

// `shoal batch-endpoint` and `shoal batch-deployment` are az ml's verbs
// of the same names. They live in package cli because a deployment's
// code folder and an invocation's local input are uploaded as a job's
// are (upload.go).

// batchEndpointColumns are the endpoint table's columns.
var batchEndpointColumns = []string{"name", "defaults.deployment_name", "description", "created_by", "created_on"}

// batchJobColumns are list-jobs' columns.
var batchJobColumns = []string{"name", "status", "display_name", "compute", "created_on"}

func newBatchEndpointCommand(g *cmdutil.Globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "batch-endpoint",
		Short: "Batch endpoints: a stable name that scores data with one of its deployments",
		Long: `Batch endpoints, as Azure ML's: a name that users and services invoke to
score a folder of files or a table with one of the endpoint's deployments
(shoal batch-deployment), its default unless --deployment-name names another.
Each invocation is a parallel job on the deployment's cluster; its output
score holds the rows the scoring script returned (predictions.csv by default).
Readers list and show endpoints; Contributors create, update, delete and
invoke them.`,
	}
	cmd.AddCommand(newBatchEndpointCreateCommand(g, "create"), newBatchEndpointCreateCommand(g, "update"),
		newBatchEndpointShowCommand(g), newBatchEndpointListCommand(g), newBatchEndpointDeleteCommand(g),
		newBatchEndpointInvokeCommand(g), newBatchEndpointListJobsCommand(g), newBatchEndpointTokenCommand(g))
	return cmd
}

// readBatchDocument reads -f (or starts from an empty document), applies
// --name and --set, and returns it with the name it gives.
func readBatchDocument(file, name string, sets []string) (map[string]any, string, error) {
	doc := map[string]any{}
	if file != "" {
		var err error
		if doc, err = cmdutil.ReadYAMLDocument(file); err != nil {
			return nil, "", err
		}
	}
	if name != "" {
		doc["name"] = name
	}
	for _, s := range sets {
		if err := cmdutil.ApplySet(doc, s); err != nil {
			return nil, "", err
		}
	}
	n, _ := doc["name"].(string)
	if strings.TrimSpace(n) == "" {
		return nil, "", &core.Error{Code: core.EINVALID, Field: "name", Message: "name: is required, in the file or --name"}
	}
	delete(doc, "$schema")
	return doc, strings.TrimSpace(n), nil
}

// newBatchEndpointCreateCommand is create or update: both send the whole
// document (update merges it into the stored endpoint's first).
func newBatchEndpointCreateCommand(g *cmdutil.Globals, verb string) *cobra.Command {
	var (
		file, name string
		sets       []string
	)
	cmd := &cobra.Command{
		Use:   verb,
		Short: map[string]string{"create": "Create a batch endpoint from Azure ML batch endpoint YAML", "update": "Update a batch endpoint: its description, tags or default deployment"}[verb],
		Example: map[string]string{
			"create": "  shoal batch-endpoint create -f endpoint.yml\n  shoal batch-endpoint create --name mnist-batch",
			"update": "  shoal batch-endpoint update --name mnist-batch --set defaults.deployment_name=mnist-torch-dpl",
		}[verb],
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if verb == "create" && file == "" && name == "" {
				return &core.Error{Code: core.EINVALID, Field: "file", Message: "--file: is required (or --name for an endpoint with no description)"}
			}
			doc, n, err := readBatchDocument(file, name, nil)
			if err != nil {
				return err
			}
			c, ws, err := g.Client()
			if err != nil {
				return err
			}
			if verb == "update" {
				old, err := c.GetBatchEndpoint(cmd.Context(), ws, n)
				if err != nil {
					return err
				}
				base := map[string]any{"name": old.Name, "description": old.Description, "tags": old.Tags}
				if d := old.DefaultDeployment(); d != "" {
					base["defaults"] = map[string]any{"deployment_name": d}
				}
				for k, v := range doc {
					base[k] = v
				}
				doc = base
			}
			for _, s := range sets {
				if err := cmdutil.ApplySet(doc, s); err != nil {
					return err
				}
			}
			raw, err := cmdutil.ToJSON(doc)
			if err != nil {
				return err
			}
			e, _, err := c.PutBatchEndpoint(cmd.Context(), ws, n, raw)
			if err != nil {
				return err
			}
			return g.Render(e, batchEndpointColumns)
		},
	}
	cmd.Flags().StringVarP(&file, "file", "f", "", "the endpoint's YAML file")
	cmd.Flags().StringVarP(&name, "name", "n", "", "the endpoint's name (overrides the file's)")
	cmd.Flags().StringArrayVar(&sets, "set", nil, "set a key of the document: --set defaults.deployment_name=dpl (repeatable)")
	return cmd
}

// batchName takes a name as the argument or --name, as az ml does.
func batchName(args []string, flag, noun string) (string, error) {
	return cmdutil.NameArg(args, flag, noun)
}

// namedRead is a read of one endpoint's resource by the endpoint's name
// (an argument or --name): show and list-jobs.
func namedRead(g *cmdutil.Globals, use, short string, columns []string, call func(ctx context.Context, c *client.Client, ws, name string) (any, error)) *cobra.Command {
	var name string
	cmd := &cobra.Command{
		Use:   use,
		Short: short,
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			n, err := batchName(args, name, "batch-endpoint")
			if err != nil {
				return err
			}
			return g.CallAndRender(columns, func(ctx context.Context, c *client.Client, ws string) (any, error) {
				return call(ctx, c, ws, n)
			})(cmd, args)
		},
	}
	cmd.Flags().StringVarP(&name, "name", "n", "", "the endpoint's name")
	return cmd
}

// endpointClient reads the endpoint's name (argument or --name) and
// opens the client: what every verb that acts on one endpoint does first.
func endpointClient(g *cmdutil.Globals, args []string, flag string) (string, *client.Client, string, error) {
	n, err := batchName(args, flag, "batch-endpoint")
	if err != nil {
		return "", nil, "", err
	}
	c, ws, err := g.Client()
	return n, c, ws, err
}

func newBatchEndpointShowCommand(g *cmdutil.Globals) *cobra.Command {
	return namedRead(g, "show NAME", "Show a batch endpoint", batchEndpointColumns, func(ctx context.Context, c *client.Client, ws, n string) (any, error) {
		return c.GetBatchEndpoint(ctx, ws, n)
	})
}

func newBatchEndpointListCommand(g *cmdutil.Globals) *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List the workspace's batch endpoints",
		Args:  cobra.NoArgs,
		RunE: g.CallAndRender(batchEndpointColumns, func(ctx context.Context, c *client.Client, ws string) (any, error) {
			return c.ListBatchEndpoints(ctx, ws)
		}),
	}
}

func newBatchEndpointDeleteCommand(g *cmdutil.Globals) *cobra.Command {
	var (
		name string
		yes  bool
	)
	cmd := &cobra.Command{
		Use:   "delete NAME",
		Short: "Delete a batch endpoint and its deployments (the jobs it started stay)",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			n, c, ws, err := endpointClient(g, args, name)
			if err != nil {
				return err
			}
			if err := c.DeleteBatchEndpoint(cmd.Context(), ws, n); err != nil {
				return err
			}
			fmt.Fprintf(g.Stdout, "batch endpoint %s deleted\n", n)
			return nil
		},
	}
	cmd.Flags().StringVarP(&name, "name", "n", "", "the endpoint's name")
	cmd.Flags().BoolVarP(&yes, "yes", "y", false, "do not ask (az ml's flag; Shoal never asks)")
	return cmd
}

func newBatchEndpointInvokeCommand(g *cmdutil.Globals) *cobra.Command {
	var (
		name, input, inputType, deployment, jobName, outputPath string
	)
	cmd := &cobra.Command{
		Use:   "invoke NAME",
		Short: "Score data with a batch endpoint: start a parallel job and print it",
		Long: `Score data with a batch endpoint: starts a job that runs the deployment's
scoring script over --input, split into mini-batches across the deployment's
nodes. --input is a data asset (azureml:<name>@latest or azureml:<name>:<version>),
a datastore path (azureml://datastores/<name>/paths/<path>), a URL, or a local
folder or file, which is uploaded first. Follow the job with shoal job show and
download its predictions with shoal job download --output-name score.`,
		Example: `  shoal batch-endpoint invoke --name mnist-batch --input ./mnist-sample
  shoal batch-endpoint invoke -n mnist-batch --input azureml:mnist-sample@latest --deployment-name mnist-keras-dpl
  shoal batch-endpoint invoke -n heart --input azureml://datastores/workspaceblobstore/paths/heart/ --input-type uri_folder`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			n, err := batchName(args, name, "batch-endpoint")
			if err != nil {
				return err
			}
			if strings.TrimSpace(input) == "" {
				return &core.Error{Code: core.EINVALID, Field: "input", Message: "--input: is required: a data asset, a datastore path or a local folder"}
			}
			c, ws, err := g.Client()
			if err != nil {
				return err
			}
			inv := &batch.Invocation{Input: batch.Input{Type: inputType, Path: input}, DeploymentName: deployment, JobName: jobName, OutputPath: outputPath}
			if p := strings.TrimPrefix(input, "file:"); jobio.PathKind(input) == jobio.Local {
				abs, err := filepath.Abs(p)
				if err != nil {
					return err
				}
				st, err := os.Stat(abs)
				if err != nil {
					return &core.Error{Code: core.EINVALID, Field: "input", Message: fmt.Sprintf("--input: %s: %v", p, err)}
				}
				if !st.IsDir() && inputType == "" {
					inv.Input.Type = jobio.TypeURIFile
				}
				if inv.Input.Path, err = uploadPath(cmd.Context(), c, ws, abs, false); err != nil {
					return fmt.Errorf("--input: %w", err)
				}
			}
			j, err := c.InvokeBatchEndpoint(cmd.Context(), ws, n, inv)
			if err != nil {
				return err
			}
			return g.Render(j, batchJobColumns)
		},
	}
	cmd.Flags().StringVarP(&name, "name", "n", "", "the endpoint's name")
	cmd.Flags().StringVar(&input, "input", "", "what to score: a data asset, a datastore path, a URL or a local folder (uploaded)")
	cmd.Flags().StringVar(&inputType, "input-type", "", "uri_folder (the default), uri_file or mltable")
	cmd.Flags().StringVarP(&deployment, "deployment-name", "d", "", "the deployment to run (default: the endpoint's default)")
	cmd.Flags().StringVar(&jobName, "job-name", "", "the job's name (default: generated)")
	cmd.Flags().StringVar(&outputPath, "output-path", "", "where the score output goes (azureml://datastores/<name>/paths/<path>)")
	return cmd
}

func newBatchEndpointListJobsCommand(g *cmdutil.Globals) *cobra.Command {
	return namedRead(g, "list-jobs NAME", "List the jobs a batch endpoint's invocations started, newest first", batchJobColumns,
		func(ctx context.Context, c *client.Client, ws, n string) (any, error) {
			return c.ListBatchEndpointJobs(ctx, ws, n)
		})
}

func newBatchEndpointTokenCommand(g *cmdutil.Globals) *cobra.Command {
	var (
		name string
		days int
	)
	cmd := &cobra.Command{
		Use:   "create-token NAME",
		Short: "Make a token that may only invoke this endpoint (for a service), acting as you",
		Long: `Make an API token that may do one thing: invoke this batch endpoint (shoal
batch-endpoint invoke, or POST to its scoring URI), as you: the jobs are yours,
and your role must still allow invoking. It can read nothing, not even the
jobs it starts. The token is shown once; shoal token list shows it among your
tokens, and shoal token revoke ends it.`,
		Example: "  shoal batch-endpoint create-token --name mnist-batch --expires-in-days 30",
		Args:    cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			n, c, ws, err := endpointClient(g, args, name)
			if err != nil {
				return err
			}
			tok, err := c.CreateInvokeToken(cmd.Context(), ws, n, days)
			if err != nil {
				return err
			}
			return g.Render(tok, []string{"id", "scope", "expires_on", "token"})
		},
	}
	cmd.Flags().StringVarP(&name, "name", "n", "", "the endpoint's name")
	cmd.Flags().IntVar(&days, "expires-in-days", 0, "days until the token expires (0: never; at most 366)")
	return cmd
}
