package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/shoal-ml/shoal/cli/cmdutil"
	"github.com/shoal-ml/shoal/client"
	"github.com/shoal-ml/shoal/domain/asset"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/internal/archive"
)

func newEnvironmentCreateCommand(g *cmdutil.Globals) *cobra.Command {
	var file, name, version, image, conda, buildContext, dockerfile, description string
	cmd := &cobra.Command{
		Use:   "create",
		Short: "Register a version of an environment from Azure ML environment YAML or flags",
		Long: `Register a version of an environment. Without a version, the next one is
given (1 for a new name, else one more than the largest). A build context
folder is uploaded like a job's code; a conda file is read and sent.`,
		Example: `  shoal environment create -f env.yml
  shoal environment create --name train --image localhost:5000/team/train:3
  shoal environment create --name sk --image python:3.11 --conda-file conda.yml --version 2
  shoal environment create --name built --build-context ./docker --dockerfile-path Dockerfile`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			doc, err := assetDocument(file, name, version)
			if err != nil {
				return err
			}
			base := "."
			if file != "" {
				base = filepath.Dir(file)
			}
			delete(doc, "$schema")
			for k, v := range map[string]string{"image": image, "conda_file": conda, "description": description} {
				if v != "" {
					doc[k] = v
				}
			}
			if buildContext != "" || dockerfile != "" {
				b, _ := doc["build"].(map[string]any)
				if b == nil {
					b = map[string]any{}
				}
				if buildContext != "" {
					b["path"] = buildContext
				}
				if dockerfile != "" {
					b["dockerfile_path"] = dockerfile
				}
				doc["build"] = b
			}
			if s, _ := doc["name"].(string); s == "" {
				return &core.Error{Code: core.EINVALID, Field: "name", Message: "name: is required (in the file or --name)"}
			}
			c, ws, err := g.Client()
			if err != nil {
				return err
			}
			if err := prepareEnvironmentFiles(cmd.Context(), c, ws, base, "", doc); err != nil {
				return err
			}
			raw, err := cmdutil.ToJSON(doc)
			if err != nil {
				return err
			}
			var e asset.Environment
			if err := json.Unmarshal(raw, &e); err != nil {
				return fmt.Errorf("--file: %w", err)
			}
			// Unknown keys are the server's to refuse, naming them.
			out, _, err := c.CreateEnvironment(cmd.Context(), ws, &e)
			if err != nil {
				return err
			}
			return g.Render(out, environmentColumns)
		},
	}
	createFlags(cmd, "environment", &file, &name, &version)
	cmd.Flags().StringVarP(&image, "image", "i", "", "Docker image")
	cmd.Flags().StringVar(&conda, "conda-file", "", "conda file applied on the image")
	cmd.Flags().StringVarP(&buildContext, "build-context", "b", "", "Docker build context folder")
	cmd.Flags().StringVarP(&dockerfile, "dockerfile-path", "d", "", "Dockerfile inside the build context (default Dockerfile)")
	cmd.Flags().StringVar(&description, "description", "", "description")
	return cmd
}

// prepareEnvironmentFiles replaces, in an environment mapping (a job's
// inline environment when prefix is "environment."), a local conda file
// by its content and a local build context folder by its uploaded
// artifact, after checking that the Dockerfile is in it. Paths are
// relative to base, the YAML file's folder.
func prepareEnvironmentFiles(ctx context.Context, c *client.Client, ws, base, prefix string, doc map[string]any) error {
	resolve := func(p string) string {
		p = strings.TrimPrefix(p, "file:")
		if filepath.IsAbs(p) {
			return p
		}
		return filepath.Join(base, p)
	}
	if p, ok := doc["conda_file"].(string); ok && p != "" && !strings.Contains(p, "\n") {
		data, err := os.ReadFile(resolve(p))
		if err != nil {
			return fmt.Errorf("%sconda_file: %w", prefix, err)
		}
		doc["conda_file"] = string(data)
	}
	b, _ := doc["build"].(map[string]any)
	p, _ := b["path"].(string)
	if p == "" || job.ValidateArtifactRef(p) {
		return nil
	}
	dir := resolve(p)
	st, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("%sbuild.path: %w", prefix, err)
	}
	if !st.IsDir() {
		return &core.Error{Code: core.EINVALID, Field: prefix + "build.path", Message: fmt.Sprintf("%sbuild.path: %s is not a folder (the Docker build context)", prefix, dir)}
	}
	dockerfile, _ := b["dockerfile_path"].(string)
	if dockerfile == "" {
		dockerfile = asset.DefaultDockerfilePath
	}
	if err := asset.ValidateDockerfilePath(prefix+"build.dockerfile_path", dockerfile); err != nil {
		return err
	}
	if st, err := os.Stat(filepath.Join(dir, filepath.FromSlash(dockerfile))); err != nil || !st.Mode().IsRegular() {
		return &core.Error{Code: core.EINVALID, Field: prefix + "build.dockerfile_path", Message: fmt.Sprintf("%sbuild.dockerfile_path: %s is not a file in the build context %s", prefix, dockerfile, dir)}
	}
	// The whole context, as Docker sees it: its .dockerignore is applied
	// by the build, not here.
	pr, pw := io.Pipe()
	go func() {
		_, err := archive.Pack(pw, dir, archive.PackOptions{})
		pw.CloseWithError(err)
	}()
	id, err := c.UploadArtifact(ctx, ws, pr)
	pr.Close()
	if err != nil {
		return fmt.Errorf("%sbuild.path: %w", prefix, err)
	}
	b["path"] = id
	return nil
}
