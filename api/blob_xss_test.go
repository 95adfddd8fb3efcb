package api_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"

	"github.com/shoal-ml/shoal/domain/identity"
)

// The Blob endpoint answers on the studio's own origin: a blob a
// Contributor stored as text/html, opened by an administrator, must not
// run as a page of that origin (it would read the studio's CSRF token
// with the administrator's cookie and act as them). Every answer of the
// endpoint is a sandboxed document that loads nothing and is never
// sniffed into something else.
func TestBlobEndpointServesNoPageOfTheOrigin(t *testing.T) {
	e := newTestEnv(t)
	carl := addUser(t, e, "carl", identity.RoleContributor)
	sas := blobSAS(t, e, carl, "default")
	c := containerClient(t, e, sas)
	page := []byte(`<script>fetch("/api/v1/users")</script>`)
	if _, err := c.NewBlockBlobClient("LocalUpload/x/page.html").UploadBuffer(context.Background(), page, &blockblob.UploadBufferOptions{
		HTTPHeaders: &blob.HTTPHeaders{BlobContentType: to.Ptr("text/html"), BlobContentDisposition: to.Ptr("inline")}}); err != nil {
		t.Fatal(err)
	}
	for _, u := range []string{"/shoal/workspaceblobstore/LocalUpload/x/page.html?" + sas, "/shoal/workspaceblobstore/LocalUpload/x/nothing.html?" + sas} {
		resp, err := http.Get(e.ts.URL + u)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		csp := resp.Header.Get("Content-Security-Policy")
		if !strings.Contains(csp, "sandbox") || !strings.Contains(csp, "default-src 'none'") || resp.Header.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("GET %s: %d, Content-Security-Policy %q, X-Content-Type-Options %q: want a sandbox that loads nothing", u[:40], resp.StatusCode, csp, resp.Header.Get("X-Content-Type-Options"))
		}
	}
}
