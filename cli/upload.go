package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/shoal-ml/shoal/client"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/job/jobio"
	"github.com/shoal-ml/shoal/internal/archive"
)

// The upload of a document's local files: job create (handed it through
// job.LocalFiles) and component create share it, and it reads an inline
// environment's files with environment.go's prepareEnvironmentFiles. It
// stays beside them in package cli while they are rewritten into one
// versioned-asset mechanism.

// uploadJobFiles packs the local code folder and local input paths
// (relative to the YAML file's folder), uploads them content-addressed and
// replaces them in doc with their artifact IDs.
func uploadJobFiles(ctx context.Context, c *client.Client, ws, base string, doc map[string]any) error {
	resolve := func(p string) string {
		p = strings.TrimPrefix(p, "file:")
		if filepath.IsAbs(p) {
			return p
		}
		return filepath.Join(base, p)
	}
	if code, ok := doc["code"].(string); ok && code != "" && !job.ValidateArtifactRef(code) {
		if err := checkLocalPath("code", "folder ", code, base, resolve(code)); err != nil {
			return err
		}
		id, err := uploadPath(ctx, c, ws, resolve(code), true)
		if err != nil {
			return fmt.Errorf("code: %w", err)
		}
		doc["code"] = id
	}
	if env, ok := doc["environment"].(map[string]any); ok {
		if err := prepareEnvironmentFiles(ctx, c, ws, base, "environment.", env); err != nil {
			return err
		}
	}
	inputs, _ := doc["inputs"].(map[string]any)
	for name, v := range inputs {
		in, ok := v.(map[string]any)
		if !ok {
			continue
		}
		p, _ := in["path"].(string)
		// A pipeline step's ${{parent...}} binding, an asset, a datastore
		// URI and a URL are the server's to resolve, sent as written.
		if p == "" || job.IsPipelineBinding(p) || jobio.PathKind(p) != jobio.Local {
			continue
		}
		if err := checkLocalPath("inputs."+name+".path", "", p, base, resolve(p)); err != nil {
			return err
		}
		id, err := uploadPath(ctx, c, ws, resolve(p), false)
		if err != nil {
			return fmt.Errorf("inputs.%s.path: %w", name, err)
		}
		in["path"] = id
	}
	return nil
}

// checkLocalPath says, in the YAML's words, that a local path a document
// names is missing or unreadable: os.Stat's "stat /abs/path: no such file
// or directory" names neither the key nor where relative paths are read
// from.
func checkLocalPath(field, kind, given, base, resolved string) error {
	_, err := os.Stat(resolved)
	if err == nil {
		return nil
	}
	where := ""
	if !filepath.IsAbs(strings.TrimPrefix(given, "file:")) {
		abs, aerr := filepath.Abs(base)
		if aerr != nil {
			abs = base
		}
		where = fmt.Sprintf(" (relative to the YAML file's folder %s)", abs)
	}
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%s: %s%s not found%s", field, kind, given, where)
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return fmt.Errorf("%s: cannot read %s%s: %v", field, given, where, err)
}

func uploadPath(ctx context.Context, c *client.Client, ws, path string, honourIgnore bool) (string, error) {
	st, err := os.Stat(path)
	if err != nil {
		return "", err
	}
	pr, pw := io.Pipe()
	go func() {
		var err error
		if st.IsDir() {
			_, err = archive.Pack(pw, path, archive.PackOptions{Ignore: honourIgnore})
		} else {
			err = archive.PackFile(pw, path)
		}
		pw.CloseWithError(err)
	}()
	id, err := c.UploadArtifact(ctx, ws, pr)
	pr.Close()
	return id, err
}
