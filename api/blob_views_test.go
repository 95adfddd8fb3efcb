package api_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"

	"github.com/shoal-ml/shoal/domain/identity"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/store"
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
	ctx := context.Background()
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
	if err := e.files.PutOutputs("default", "x", 1, 0, &b, 1<<20); err != nil {
		t.Fatal(err)
	}
	if err := e.store.Update(ctx, func(tx store.Tx) error {
		j, err := tx.GetJob("default", "x")
		if err != nil {
			return err
		}
		job.KeepArtifacts(j)
		j.Outputs["model"] = &job.JobOutput{}
		j.Version++
		return tx.UpdateJob(j)
	}); err != nil {
		t.Fatal(err)
	}
	c := containerClient(t, e, blobSAS(t, e, carl, "default"))
	var names []string
	pager := c.NewListBlobsFlatPager(&container.ListBlobsFlatOptions{Prefix: to.Ptr("azureml/x/model/")})
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range page.Segment.BlobItems {
			names = append(names, *it.Name)
		}
	}
	if len(names) != 2 || names[0] != "azureml/x/model/good.txt" || names[1] != "azureml/x/model/sub/fine.txt" {
		t.Errorf("listed %q, want good.txt and sub/fine.txt only", names)
	}
	if got := download(t, c.NewBlobClient("azureml/x/model/good.txt"), blob.HTTPRange{}); string(got) != "data" {
		t.Errorf("good.txt = %q", got)
	}
}
