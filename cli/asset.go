package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/shoal-ml/shoal/cli/cmdutil"
	"github.com/shoal-ml/shoal/client"
	"github.com/shoal-ml/shoal/domain/asset"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job"
)

// The kinds of versioned assets the CLI registers.

var environmentColumns = []string{"name", "version", "image", "os_type", "archived", "created_on", "created_by"}

// environmentVerbs are the shared verbs over environments.
var environmentVerbs = assetVerbs[asset.Environment]{
	noun: "environment", a: "an environment", runners: "jobs", columns: environmentColumns,
	list: (*client.Client).ListEnvironments, get: (*client.Client).GetEnvironment, archive: (*client.Client).ArchiveEnvironment,
}

func newEnvironmentCommand(g *cmdutil.Globals) *cobra.Command {
	return environmentVerbs.command(g, "Register job environments: images, Docker build contexts, conda files (az ml environment)", newEnvironmentCreateCommand(g))
}

var componentColumns = []string{"name", "version", "display_name", "type", "archived", "created_on", "created_by"}

// componentVerbs are the shared verbs over components.
var componentVerbs = assetVerbs[job.Component]{
	noun: "component", a: "a component", runners: "pipelines", columns: componentColumns,
	list: (*client.Client).ListComponents, get: (*client.Client).GetComponent, archive: (*client.Client).ArchiveComponent,
}

func newComponentCommand(g *cmdutil.Globals) *cobra.Command {
	return componentVerbs.command(g, "Register command and parallel components that pipeline steps run (az ml component)", newComponentCreateCommand(g))
}

// assetVerbs is what the verbs shared by every kind of versioned asset
// (`list`, `show`, `archive`, `restore`) need of a kind; `create` reads
// each kind's own document and flags, and is the kind's.
type assetVerbs[T any] struct {
	// noun is the kind's name ("environment"), a is it with its article
	// ("an environment"), runners what runs a version named by version
	// ("jobs").
	noun, a, runners string
	columns          []string
	list             func(c *client.Client, ctx context.Context, ws, name string, archived bool) ([]*T, error)
	get              func(c *client.Client, ctx context.Context, ws, name, version, label string) (*T, error)
	archive          func(c *client.Client, ctx context.Context, ws, name, version string, archived bool) ([]*T, error)
}

// command returns the kind's command: create and the shared verbs.
func (v assetVerbs[T]) command(g *cmdutil.Globals, short string, create *cobra.Command) *cobra.Command {
	cmd := &cobra.Command{Use: v.noun, Short: short}
	cmd.AddCommand(create, v.listCommand(g), v.showCommand(g), v.archiveCommand(g, true), v.archiveCommand(g, false))
	return cmd
}

func (v assetVerbs[T]) listCommand(g *cmdutil.Globals) *cobra.Command {
	var name string
	var archived bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: fmt.Sprintf("List %s versions, by name, newest first", v.noun),
		Args:  cobra.NoArgs,
		RunE: g.CallAndRender(v.columns, func(ctx context.Context, c *client.Client, ws string) (any, error) {
			return v.list(c, ctx, ws, name, archived)
		}),
	}
	cmd.Flags().StringVarP(&name, "name", "n", "", fmt.Sprintf("only this %s's versions", v.noun))
	cmd.Flags().BoolVar(&archived, "include-archived", false, "list archived versions too")
	return cmd
}

func (v assetVerbs[T]) showCommand(g *cmdutil.Globals) *cobra.Command {
	var name, version, label string
	cmd := &cobra.Command{
		Use:     "show",
		Short:   fmt.Sprintf("Show a version of %s (--version) or its latest (--label latest)", v.a),
		Example: fmt.Sprintf("  shoal %[1]s show --name train --version 3\n  shoal %[1]s show --name train --label latest", v.noun),
		Args:    cobra.NoArgs,
		RunE: g.CallAndRender(v.columns, func(ctx context.Context, c *client.Client, ws string) (any, error) {
			if version == "" && label == "" {
				return nil, &core.Error{Code: core.EINVALID, Field: "version", Message: "--version or --label latest: one is required"}
			}
			return v.get(c, ctx, ws, name, version, label)
		}),
	}
	cmd.Flags().StringVarP(&name, "name", "n", "", v.noun+" name")
	cmd.Flags().StringVarP(&version, "version", "v", "", "version")
	cmd.Flags().StringVarP(&label, "label", "l", "", "label (latest)")
	_ = cmd.MarkFlagRequired("name")
	cmd.MarkFlagsMutuallyExclusive("version", "label")
	return cmd
}

func (v assetVerbs[T]) archiveCommand(g *cmdutil.Globals, archived bool) *cobra.Command {
	var name, version string
	use, short := "restore", "Restore an archived version, or every version"
	if archived {
		use, short = "archive", "Archive a version, or every version: archived versions leave lists and @latest; "+v.runners+" naming one by version still run"
	}
	cmd := &cobra.Command{
		Use:   use,
		Short: short,
		Args:  cobra.NoArgs,
		RunE: g.CallAndRender(v.columns, func(ctx context.Context, c *client.Client, ws string) (any, error) {
			return v.archive(c, ctx, ws, name, version, archived)
		}),
	}
	cmd.Flags().StringVarP(&name, "name", "n", "", v.noun+" name")
	cmd.Flags().StringVarP(&version, "version", "v", "", "only this version (default: every version)")
	_ = cmd.MarkFlagRequired("name")
	return cmd
}

// assetDocument reads a create's document: file's YAML (none: empty),
// with --name and --version over its own, and the version as text (YAML
// reads version: 1 as a number; a version is text).
func assetDocument(file, name, version string) (map[string]any, error) {
	doc := map[string]any{}
	if file != "" {
		var err error
		if doc, err = cmdutil.ReadYAMLDocument(file); err != nil {
			return nil, err
		}
	}
	if name != "" {
		doc["name"] = name
	}
	if version != "" {
		doc["version"] = version
	}
	if v, ok := doc["version"]; ok && v != nil {
		doc["version"] = fmt.Sprint(v)
	}
	return doc, nil
}

// createFlags adds the flags every kind's create has.
func createFlags(cmd *cobra.Command, noun string, file, name, version *string) {
	cmd.Flags().StringVarP(file, "file", "f", "", noun+" YAML file")
	cmd.Flags().StringVarP(name, "name", "n", "", noun+" name (overrides the file's)")
	cmd.Flags().StringVarP(version, "version", "v", "", "version (overrides the file's; default the next)")
}
