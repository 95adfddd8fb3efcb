package asset

import (
	"path"
	"strings"

	"github.com/shoal-ml/shoal/domain/core"
)

// A local file or folder that a data asset or model names is uploaded by
// the CLI to the workspace's file store, content-addressed (an artifact,
// sha256:<hex>: a gzipped tar of the folder, or of the one file under its
// base name), and registered at its place on the default datastore, as
// Azure registers a local path under LocalUpload/ on
// workspaceblobstore. These two functions map an artifact to that
// datastore path and back, so that whoever resolves the path (a job's
// input) finds the artifact it stands for.

// uploadPathPrefix is the datastore URI of every uploaded artifact; the
// artifact's hex digest and, for one file, its name follow.
const uploadPathPrefix = "azureml://datastores/workspaceblobstore/paths/LocalUpload/"

// ArtifactDataPath is the datastore URI of an uploaded artifact id: its
// folder (file "", ending in "/"), or the file of that name inside it (a
// uri_file's upload holds the one file under its base name).
func ArtifactDataPath(id, file string) (string, error) {
	hex, ok := strings.CutPrefix(id, "sha256:")
	if !ok || !isArtifactHex(hex) {
		return "", core.FieldErrorf("path", "artifact id %q must look like sha256:<64 hex digits>", core.Short(id))
	}
	if file == "" {
		return uploadPathPrefix + hex + "/", nil
	}
	if file != path.Base(file) || file == "." || file == ".." || strings.ContainsAny(file, "\\\x00") {
		return "", core.FieldErrorf("path", "%q must be a file name, without a folder", core.Short(file))
	}
	return uploadPathPrefix + hex + "/" + file, nil
}

// DataPathArtifact reads ArtifactDataPath's URI back: the artifact id and
// the file in it ("" for the whole folder). ok is false for any other
// URI, which is then not an upload.
func DataPathArtifact(uri string) (id, file string, ok bool) {
	rest, found := strings.CutPrefix(uri, uploadPathPrefix)
	if !found {
		return "", "", false
	}
	hex, file, _ := strings.Cut(rest, "/")
	if !isArtifactHex(hex) || strings.Contains(file, "/") || file == "." || file == ".." || strings.ContainsAny(file, "\\\x00") {
		return "", "", false
	}
	return "sha256:" + hex, file, true
}

// isArtifactHex reports whether h is an artifact's digest: 64 lower-case
// hex digits.
func isArtifactHex(h string) bool {
	if len(h) != 64 {
		return false
	}
	for i := 0; i < len(h); i++ {
		if c := h[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}
