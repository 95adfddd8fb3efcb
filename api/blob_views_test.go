package api_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"

	"github.com/shoal-ml/shoal/domain/identity"
)

// TestBlobViewsRefuseHostileNames, written first: a job's kept output
// is the job's own archive, which its program wrote; an entry whose
// name is no path inside the container ('..', empty or '.' segments, a
// backslash) is not listed or read as a blob, so that a client
// downloading the folder (azure-ai-ml's jobs.download) never writes
// outside its destination.
func TestBlobViewsRefuseHostileNames(t *testing.T) {
	e := newTestEnv(t)
	carl := addUser(t, e, "carl", identity.RoleContributor)
	runJob(t, e, "x")
	var b bytes.Buffer
	gz := gzip.NewWriter(&b)
	tw := tar.NewWriter(gz)
	for _, name := range []string{"model/good.txt", "model/../../escape.txt", "model/sub/../../up.txt", "model/a//b.txt", "model/a/./c.txt", "model/x\\..\\y.txt", "model/sub/fine.txt"} {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: 4, Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		tw.Write([]byte("data"))
	}
	tw.Close()
	gz.Close()
	keepModelOutput(t, e, "x", &b)
	c := containerClient(t, e, blobSAS(t, e, carl, "default"))
	names := listBlobNames(t, c, "azureml/x/model/")
	if len(names) != 2 || names[0] != "azureml/x/model/good.txt" || names[1] != "azureml/x/model/sub/fine.txt" {
		t.Errorf("listed %q, want good.txt and sub/fine.txt only", names)
	}
	if got := download(t, c.NewBlobClient("azureml/x/model/good.txt"), blob.HTTPRange{}); string(got) != "data" {
		t.Errorf("good.txt = %q", got)
	}
}
