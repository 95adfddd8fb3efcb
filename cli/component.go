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

func newComponentCreateCommand(g *cmdutil.Globals) *cobra.Command {
	var file, name, version string
	cmd := &cobra.Command{
		Use:   "create",
		Short: "Register a version of a command component from Azure ML component YAML",
		Long: `Register a version of a command component. Without a version (in the
file or --version), the next one is given (1 for a new name, else one more
than the largest). The code folder is uploaded like a job's, relative to
the YAML file; a version never changes once registered.`,
		Example: `  shoal component create -f train.yml
  shoal component create -f train.yml --version 2`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if file == "" {
				return &core.Error{Code: core.EINVALID, Field: "file", Message: "--file: is required"}
			}
			doc, err := assetDocument(file, name, version)
			if err != nil {
				return err
			}
			c, ws, err := g.Client()
			if err != nil {
				return err
			}
			if err := uploadJobFiles(cmd.Context(), c, ws, filepath.Dir(file), doc); err != nil {
				return err
			}
			raw, err := cmdutil.ToJSON(doc)
			if err != nil {
				return err
			}
			n, _ := doc["name"].(string)
			v, _ := doc["version"].(string)
			// Unknown keys are the server's to refuse, naming them.
			out, _, err := c.CreateComponent(cmd.Context(), ws, raw, n, v)
			if err != nil {
				return err
			}
			return g.Render(out, componentColumns)
		},
	}
	createFlags(cmd, "component", &file, &name, &version)
	return cmd
}

// inlinePipelineComponents prepares a pipeline document for the server,
// which reads no local file: each step's `component: ./train.yml` (a path
// relative to base, the pipeline file's folder) is replaced by the
// component's document, its code uploaded relative to the component's
// own file; inline command steps get their code uploaded relative to
// base; every step's and the pipeline's own local inputs are uploaded. azureml:
// references are left for the server to resolve at submit.
func inlinePipelineComponents(ctx context.Context, c *client.Client, ws, base string, doc map[string]any) error {
	jobs, _ := doc["jobs"].(map[string]any)
	for name, v := range jobs {
		step, ok := v.(map[string]any)
		if !ok {
			continue // the server refuses it, naming it
		}
		ref, isString := step["component"].(string)
		switch {
		case isString && ref != "" && !strings.HasPrefix(strings.ToLower(strings.TrimSpace(ref)), "azureml:"):
			p := strings.TrimPrefix(strings.TrimSpace(ref), "file:")
			if !filepath.IsAbs(p) {
				p = filepath.Join(base, p)
			}
			comp, err := cmdutil.ReadYAMLDocument(p)
			if err != nil {
				return fmt.Errorf("jobs.%s.component: %w", name, err)
			}
			if v, ok := comp["version"]; ok && v != nil {
				comp["version"] = fmt.Sprint(v)
			}
			if err := uploadJobFiles(ctx, c, ws, filepath.Dir(p), comp); err != nil {
				return fmt.Errorf("jobs.%s.component: %w", name, err)
			}
			step["component"] = comp
		case !isString && step["component"] != nil:
			if comp, ok := step["component"].(map[string]any); ok {
				if err := uploadJobFiles(ctx, c, ws, base, comp); err != nil {
					return fmt.Errorf("jobs.%s.component: %w", name, err)
				}
			}
		case step["component"] == nil:
			if err := uploadJobFiles(ctx, c, ws, base, step); err != nil {
				return fmt.Errorf("jobs.%s: %w", name, err)
			}
			continue
		}
		// A component step's own local inputs (relative to the pipeline
		// file, where the step is written) are uploaded as a command
		// job's; remote paths and bindings are sent as written.
		if err := uploadJobFiles(ctx, c, ws, base, map[string]any{"inputs": step["inputs"]}); err != nil {
			return fmt.Errorf("jobs.%s: %w", name, err)
		}
	}
	top := map[string]any{"inputs": doc["inputs"]}
	return uploadJobFiles(ctx, c, ws, base, top)
}
