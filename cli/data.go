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
	"github.com/shoal-ml/shoal/domain/asset"
	"github.com/shoal-ml/shoal/domain/core"
)

// Data assets and models (`shoal data`, `shoal model`, Azure's `az ml
// data` and `az ml model`): the shared verbs, and a create that uploads a
// local path before it registers the version.

var dataColumns = []string{"name", "version", "type", "path", "archived", "created_on", "created_by"}

// dataVerbs are the shared verbs over data assets.
var dataVerbs = assetVerbs[asset.Data]{
	noun: "data", a: "a data asset", runners: "jobs", columns: dataColumns,
	list: (*client.Client).ListData, get: (*client.Client).GetData, archive: (*client.Client).ArchiveData,
}

func newDataCommand(g *cmdutil.Globals) *cobra.Command {
	create := newFileAssetCreateCommand(g, fileAssetKind{
		noun: "data", a: "a data asset", defaultType: asset.DataURIFolder, columns: dataColumns,
		example: "  shoal data create -f data.yml\n  shoal data create --name iris --type uri_file --path ./iris.csv\n  shoal data create --name logs --path azureml://datastores/team_blob/paths/logs/",
		create: func(ctx context.Context, c *client.Client, ws string, raw []byte, name, version string) (any, error) {
			out, _, err := c.CreateData(ctx, ws, raw, name, version)
			return out, err
		},
	})
	return dataVerbs.command(g, "Register data assets: files, folders and MLTables on datastores or at URLs (az ml data)", create)
}

var modelColumns = []string{"name", "version", "type", "path", "archived", "created_on", "created_by"}

// modelVerbs are the shared verbs over models.
var modelVerbs = assetVerbs[asset.Model]{
	noun: "model", a: "a model", runners: "jobs", columns: modelColumns,
	list: (*client.Client).ListModels, get: (*client.Client).GetModel, archive: (*client.Client).ArchiveModel,
}

func newModelCommand(g *cmdutil.Globals) *cobra.Command {
	create := newFileAssetCreateCommand(g, fileAssetKind{
		noun: "model", a: "a model", defaultType: asset.ModelCustom, columns: modelColumns,
		example: "  shoal model create -f model.yml\n  shoal model create --name clf --type mlflow_model --path ./model",
		create: func(ctx context.Context, c *client.Client, ws string, raw []byte, name, version string) (any, error) {
			out, _, err := c.CreateModel(ctx, ws, raw, name, version)
			return out, err
		},
	})
	return modelVerbs.command(g, "Register models: custom, MLflow and Triton models' files (az ml model)", create)
}

// fileAssetKind is what `create` of a kind whose versions name files (a
// path) needs: its noun, its default type and how to register it.
type fileAssetKind struct {
	noun, a, defaultType, example string
	columns                       []string
	create                        func(ctx context.Context, c *client.Client, ws string, raw []byte, name, version string) (any, error)
}

func newFileAssetCreateCommand(g *cmdutil.Globals, k fileAssetKind) *cobra.Command {
	var file, name, version, path, typ, description string
	cmd := &cobra.Command{
		Use:   "create",
		Short: fmt.Sprintf("Register a version of %s from Azure ML YAML or flags", k.a),
		Long: fmt.Sprintf(`Register a version of %s. Without a version (in the file or --version),
the next one is given (1 for a new name, else one more than the largest).
A local path (relative to the YAML file) is uploaded to the workspace's
default datastore first and registered as its
azureml://datastores/workspaceblobstore/paths/LocalUpload/... URI; a
version is registered only once its upload is complete.`, k.a),
		Example: k.example,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			doc, err := assetDocument(file, name, version)
			if err != nil {
				return err
			}
			base := "."
			if file != "" {
				base = filepath.Dir(file)
			}
			for key, v := range map[string]string{"path": path, "type": typ, "description": description} {
				if v != "" {
					doc[key] = v
				}
			}
			if s, _ := doc["name"].(string); s == "" {
				return &core.Error{Code: core.EINVALID, Field: "name", Message: "name: is required (in the file or --name)"}
			}
			c, ws, err := g.Client()
			if err != nil {
				return err
			}
			if err := uploadAssetPath(cmd.Context(), c, ws, base, k.defaultType, doc); err != nil {
				return err
			}
			raw, err := cmdutil.ToJSON(doc)
			if err != nil {
				return err
			}
			n, _ := doc["name"].(string)
			v, _ := doc["version"].(string)
			// Unknown keys are the server's to refuse, naming them.
			out, err := k.create(cmd.Context(), c, ws, raw, n, v)
			if err != nil {
				return err
			}
			return g.Render(out, k.columns)
		},
	}
	createFlags(cmd, k.noun, &file, &name, &version)
	cmd.Flags().StringVar(&path, "path", "", "where the files are: a local file or folder (uploaded), or a URI (overrides the file's)")
	cmd.Flags().StringVarP(&typ, "type", "t", "", "type (overrides the file's; default "+k.defaultType+")")
	cmd.Flags().StringVarP(&description, "description", "d", "", "description (overrides the file's)")
	return cmd
}

// isRemotePath reports whether a data asset's or model's path is a URI the
// server reads (a datastore, asset or storage URI) rather than a local
// path for the CLI to upload.
func isRemotePath(p string) bool {
	return strings.Contains(p, "://") || strings.HasPrefix(strings.ToLower(p), "azureml:")
}

// uploadAssetPath uploads doc's local path (relative to base, the YAML
// file's folder) and puts the datastore URI of the upload in its place: a
// folder as itself, a file as the file in its upload. A uri_file must be
// a file and a uri_folder or mltable a folder, as Azure checks them. A
// URI is left for the server.
func uploadAssetPath(ctx context.Context, c *client.Client, ws, base, defaultType string, doc map[string]any) error {
	p, ok := doc["path"].(string)
	if !ok || strings.TrimSpace(p) == "" || isRemotePath(p) {
		return nil // the server names a missing or malformed path
	}
	local := strings.TrimPrefix(p, "file:")
	if !filepath.IsAbs(local) {
		local = filepath.Join(base, local)
	}
	if err := checkLocalPath("path", "", p, base, local); err != nil {
		return err
	}
	st, err := os.Stat(local)
	if err != nil {
		return fmt.Errorf("path: %w", err)
	}
	typ, _ := doc["type"].(string)
	if typ == "" {
		typ = defaultType
	}
	switch typ = strings.ToLower(strings.TrimSpace(typ)); {
	case typ == asset.DataURIFile && st.IsDir():
		return &core.Error{Code: core.EINVALID, Field: "path", Message: fmt.Sprintf("path: %s is a folder, and a uri_file is one file (use type: uri_folder for a folder)", p)}
	case (typ == asset.DataURIFolder || typ == asset.DataMLTable) && !st.IsDir():
		return &core.Error{Code: core.EINVALID, Field: "path", Message: fmt.Sprintf("path: %s is a file, and a %s is a folder (use type: uri_file for one file)", p, typ)}
	case !st.IsDir() && !st.Mode().IsRegular():
		return &core.Error{Code: core.EINVALID, Field: "path", Message: fmt.Sprintf("path: %s is neither a file nor a folder", p)}
	}
	id, err := uploadPath(ctx, c, ws, local, false)
	if err != nil {
		return fmt.Errorf("path: uploading %s: %w", p, err)
	}
	inner := ""
	if !st.IsDir() {
		inner = filepath.Base(local)
	}
	uri, err := asset.ArtifactDataPath(id, inner)
	if err != nil {
		return err
	}
	doc["path"] = uri
	return nil
}
