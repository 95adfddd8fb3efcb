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
		Short: "Register a version of a command or parallel component from Azure ML component YAML",
		Long: `Register a version of a command component, or of a parallel component
(type: parallel, whose task runs an entry script over mini-batches).
Without a version (in the file or --version), the next one is given (1 for
a new name, else one more than the largest). The code folder (a parallel
component's task.code) is uploaded like a job's, relative to the YAML
file; a version never changes once registered.`,
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
			if err := uploadComponentFiles(cmd.Context(), c, ws, filepath.Dir(file), doc); err != nil {
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
// own file; a pipeline component's own steps likewise, relative to its
// file; a sweep step's `trial: ./train.yml` as a component; inline
// command steps get their code uploaded relative to base; every step's
// and the pipeline's own local inputs are uploaded. azureml: references
// are left for the server to resolve at submit.
func inlinePipelineComponents(ctx context.Context, c *client.Client, ws, base string, doc map[string]any) error {
	return inlinePipeline(ctx, c, ws, base, doc, "", nil)
}

// maxInlineDepth stops the CLI reading pipeline component files nested
// deeper than the server takes (it names the field).
const maxInlineDepth = 8

// inlinePipeline inlines doc's steps; prefix is doc's path in the
// submitted document (jobs.a.component.) and files the pipeline
// component files being read, outermost first, so that a file that
// includes itself is named rather than read for ever.
func inlinePipeline(ctx context.Context, c *client.Client, ws, base string, doc map[string]any, prefix string, files []string) error {
	jobs, _ := doc["jobs"].(map[string]any)
	for name, v := range jobs {
		step, ok := v.(map[string]any)
		if !ok {
			continue // the server refuses it, naming it
		}
		field := prefix + "jobs." + name
		if trial, ok := step["trial"].(string); ok && isLocalRef(trial) {
			comp, p, err := readLocalComponent(base, trial)
			if err != nil {
				return fmt.Errorf("%s.trial: %w", field, err)
			}
			if err := uploadJobFiles(ctx, c, ws, filepath.Dir(p), comp); err != nil {
				return fmt.Errorf("%s.trial: %w", field, err)
			}
			step["trial"] = comp
		}
		ref, isString := step["component"].(string)
		switch {
		case isString && isLocalRef(ref):
			comp, p, err := readLocalComponent(base, ref)
			if err != nil {
				return fmt.Errorf("%s.component: %w", field, err)
			}
			if t, _ := comp["type"].(string); strings.EqualFold(strings.TrimSpace(t), "pipeline") {
				if err := inlineNested(ctx, c, ws, comp, p, field+".component.", files); err != nil {
					return err
				}
			} else if err := uploadComponentFiles(ctx, c, ws, filepath.Dir(p), comp); err != nil {
				return fmt.Errorf("%s.component: %w", field, err)
			}
			step["component"] = comp
		case !isString && step["component"] != nil:
			if comp, ok := step["component"].(map[string]any); ok {
				if err := uploadComponentFiles(ctx, c, ws, base, comp); err != nil {
					return fmt.Errorf("%s.component: %w", field, err)
				}
			}
		case step["component"] == nil && step["trial"] == nil:
			if err := uploadJobFiles(ctx, c, ws, base, step); err != nil {
				return fmt.Errorf("%s: %w", field, err)
			}
			if err := uploadTaskFiles(ctx, c, ws, base, step); err != nil {
				return fmt.Errorf("%s: %w", field, err)
			}
			continue
		}
		// A component step's own local inputs (relative to the pipeline
		// file, where the step is written) are uploaded as a command
		// job's; remote paths and bindings are sent as written.
		if err := uploadJobFiles(ctx, c, ws, base, map[string]any{"inputs": step["inputs"]}); err != nil {
			return fmt.Errorf("%s: %w", field, err)
		}
	}
	if prefix != "" {
		return nil // a pipeline component's inputs are declarations
	}
	top := map[string]any{"inputs": doc["inputs"]}
	return uploadJobFiles(ctx, c, ws, base, top)
}

// inlineNested inlines the steps of pipeline component comp, read from
// file p, refusing a file that includes itself.
func inlineNested(ctx context.Context, c *client.Client, ws string, comp map[string]any, p, prefix string, files []string) error {
	abs, err := filepath.Abs(p)
	if err != nil {
		abs = p
	}
	for i, f := range files {
		if f == abs {
			chain := append(append([]string(nil), files[i:]...), abs)
			for j := range chain {
				chain[j] = filepath.Base(chain[j])
			}
			return fmt.Errorf("%s: pipeline component %s includes itself (%s): a pipeline component cannot run itself", strings.TrimSuffix(prefix, "."), p, strings.Join(chain, " → "))
		}
	}
	if len(files) >= maxInlineDepth {
		return fmt.Errorf("%s: pipeline components nest more than %d files deep", strings.TrimSuffix(prefix, "."), maxInlineDepth)
	}
	return inlinePipeline(ctx, c, ws, filepath.Dir(p), comp, prefix, append(files, abs))
}

// isLocalRef reports whether a component or trial reference is a local
// file (./train.yml, file:train.yml), not an azureml: reference.
func isLocalRef(ref string) bool {
	return ref != "" && !strings.HasPrefix(strings.ToLower(strings.TrimSpace(ref)), "azureml:")
}

// readLocalComponent reads the component file ref names, relative to
// base, with its version as text.
func readLocalComponent(base, ref string) (map[string]any, string, error) {
	p := strings.TrimPrefix(strings.TrimSpace(ref), "file:")
	if !filepath.IsAbs(p) {
		p = filepath.Join(base, p)
	}
	comp, err := cmdutil.ReadYAMLDocument(p)
	if err != nil {
		return nil, p, err
	}
	if v, ok := comp["version"]; ok && v != nil {
		comp["version"] = fmt.Sprint(v)
	}
	return comp, p, nil
}

// uploadComponentFiles uploads a component's local files relative to
// base: a command component's code and environment files, a parallel
// component's task's.
func uploadComponentFiles(ctx context.Context, c *client.Client, ws, base string, comp map[string]any) error {
	if err := uploadJobFiles(ctx, c, ws, base, comp); err != nil {
		return err
	}
	return uploadTaskFiles(ctx, c, ws, base, comp)
}

// uploadTaskFiles uploads the code folder and environment files a
// parallel step's or component's task names (task.code,
// task.environment.conda_file...), relative to base, as a command job's
// are; a document without a task is left as it is.
func uploadTaskFiles(ctx context.Context, c *client.Client, ws, base string, doc map[string]any) error {
	task, ok := doc["task"].(map[string]any)
	if !ok {
		return nil
	}
	part := map[string]any{}
	for _, k := range []string{"code", "environment"} {
		if v, ok := task[k]; ok {
			part[k] = v
		}
	}
	if err := uploadJobFiles(ctx, c, ws, base, part); err != nil {
		return fmt.Errorf("task.%w", err)
	}
	for k, v := range part {
		task[k] = v
	}
	return nil
}
