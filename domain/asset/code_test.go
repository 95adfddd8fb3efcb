package asset_test

import (
	"testing"

	"github.com/shoal-ml/shoal/domain/asset"
)

// A code version's path is a folder of workspaceblobstore, however the
// client wrote its URL; any other place, or a path with '..', is
// refused naming path.
func TestCodeFolder(t *testing.T) {
	for in, want := range map[string]string{
		"https://shoal.blob.core.windows.net/workspaceblobstore/LocalUpload/ab/src": "LocalUpload/ab/src",
		"https://10.1.2.3:7420/shoal/workspaceblobstore/LocalUpload/ab/src/":        "LocalUpload/ab/src",
		"azureml://datastores/workspaceblobstore/paths/code/v1/":                    "code/v1",
	} {
		c, f, err := asset.CodeFolder(in)
		if err != nil || c != asset.WorkspaceBlobStore || f != want {
			t.Errorf("CodeFolder(%q) = %q %q %v, want %q", in, c, f, err, want)
		}
	}
	for _, bad := range []string{
		"https://shoal.blob.core.windows.net/other/LocalUpload/ab/src",
		"https://shoal.blob.core.windows.net/workspaceblobstore/",
		"https://shoal.blob.core.windows.net/workspaceblobstore/a/../../x",
		"https://shoal.blob.core.windows.net/workspaceblobstore/a?sig=x",
		"azureml://datastores/workspaceartifactstore/paths/x",
		"azureml://datastores/workspaceblobstore/x",
		"./src", "/etc", "file:///etc",
	} {
		if _, _, err := asset.CodeFolder(bad); err == nil {
			t.Errorf("CodeFolder(%q) accepted", bad)
		}
	}
	if err := asset.NormalizeCode(&asset.Code{Name: "c", Version: "1", Path: "s3://bucket/x"}); err == nil {
		t.Error("NormalizeCode accepted an s3 path")
	}
}
