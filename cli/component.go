package cli

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/shoal-ml/shoal"
	"github.com/shoal-ml/shoal/cli/cmdutil"
	"github.com/shoal-ml/shoal/client"
)

var componentColumns = []string{"name", "version", "display_name", "type", "archived", "created_on", "created_by"}

func newComponentCommand(g *cmdutil.Globals) *cobra.Command {
	cmd := &cobra.Command{Use: "component", Short: "Register command components that pipeline steps run (az ml component)"}
	cmd.AddCommand(newComponentCreateCommand(g), newComponentListCommand(g), newComponentShowCommand(g),
		newComponentArchiveCommand(g, true), newComponentArchiveCommand(g, false))
	return cmd
}

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
				return &shoal.Error{Code: shoal.EINVALID, Field: "file", Message: "--file: is required"}
			}
			doc, err := cmdutil.ReadYAMLDocument(file)
			if err != nil {
				return err
			}
			if name != "" {
				doc["name"] = name
			}
			if version != "" {
				doc["version"] = version
			}
			if v, ok := doc["version"]; ok && v != nil {
				// YAML reads version: 1 as a number; a version is text.
				doc["version"] = fmt.Sprint(v)
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
	cmd.Flags().StringVarP(&file, "file", "f", "", "component YAML file")
	cmd.Flags().StringVarP(&name, "name", "n", "", "component name (overrides the file's)")
	cmd.Flags().StringVarP(&version, "version", "v", "", "version (overrides the file's; default the next)")
	return cmd
}

func newComponentListCommand(g *cmdutil.Globals) *cobra.Command {
	var name string
	var archived bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List component versions, by name, newest first",
		Args:  cobra.NoArgs,
		RunE: g.CallAndRender(componentColumns, func(ctx context.Context, c *client.Client, ws string) (any, error) {
			return c.ListComponents(ctx, ws, name, archived)
		}),
	}
	cmd.Flags().StringVarP(&name, "name", "n", "", "only this component's versions")
	cmd.Flags().BoolVar(&archived, "include-archived", false, "list archived versions too")
	return cmd
}

func newComponentShowCommand(g *cmdutil.Globals) *cobra.Command {
	var name, version, label string
	cmd := &cobra.Command{
		Use:     "show",
		Short:   "Show a version of a component (--version) or its latest (--label latest)",
		Example: "  shoal component show --name train --version 3\n  shoal component show --name train --label latest",
		Args:    cobra.NoArgs,
		RunE: g.CallAndRender(componentColumns, func(ctx context.Context, c *client.Client, ws string) (any, error) {
			if version == "" && label == "" {
				return nil, &shoal.Error{Code: shoal.EINVALID, Field: "version", Message: "--version or --label latest: one is required"}
			}
			return c.GetComponent(ctx, ws, name, version, label)
		}),
	}
	cmd.Flags().StringVarP(&name, "name", "n", "", "component name")
	cmd.Flags().StringVarP(&version, "version", "v", "", "version")
	cmd.Flags().StringVarP(&label, "label", "l", "", "label (latest)")
	_ = cmd.MarkFlagRequired("name")
	cmd.MarkFlagsMutuallyExclusive("version", "label")
	return cmd
}

func newComponentArchiveCommand(g *cmdutil.Globals, archived bool) *cobra.Command {
	var name, version string
	use, short := "restore", "Restore an archived version, or every version"
	if archived {
		use, short = "archive", "Archive a version, or every version: archived versions leave lists and @latest; pipelines naming one by version still run"
	}
	cmd := &cobra.Command{
		Use:   use,
		Short: short,
		Args:  cobra.NoArgs,
		RunE: g.CallAndRender(componentColumns, func(ctx context.Context, c *client.Client, ws string) (any, error) {
			return c.ArchiveComponent(ctx, ws, name, version, archived)
		}),
	}
	cmd.Flags().StringVarP(&name, "name", "n", "", "component name")
	cmd.Flags().StringVarP(&version, "version", "v", "", "only this version (default: every version)")
	_ = cmd.MarkFlagRequired("name")
	return cmd
}

// inlinePipelineComponents prepares a pipeline document for the server,
// which reads no local file: each step's `component: ./train.yml` (a path
// relative to base, the pipeline file's folder) is replaced by the
// component's document, its code uploaded relative to the component's
// own file; inline command steps get their code uploaded relative to
// base; and the pipeline's own local inputs are uploaded. azureml:
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
		}
	}
	top := map[string]any{"inputs": doc["inputs"]}
	return uploadJobFiles(ctx, c, ws, base, top)
}
