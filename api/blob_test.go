package api_test

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"

	"github.com/shoal-ml/shoal/domain/identity"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/internal/archive"
	"github.com/shoal-ml/shoal/service/blobs"
	"github.com/shoal-ml/shoal/store"
)

const armQ = "?api-version=2023-04-01-preview"

// blobSAS asks listSecrets of workspaceblobstore for its SAS, as
// azure-ai-ml does.
func blobSAS(t *testing.T, e *testEnv, token, ws string) string {
	t.Helper()
	sec := mustSend(t, e, token, "POST", "/subscriptions/s/resourceGroups/rg/providers/Microsoft.MachineLearningServices/workspaces/"+ws+"/datastores/workspaceblobstore/listSecrets"+armQ, "", http.StatusOK)
	var s struct {
		SecretsType string `json:"secretsType"`
		SASToken    string `json:"sasToken"`
	}
	if err := json.Unmarshal(sec.body, &s); err != nil || s.SecretsType != "Sas" || s.SASToken == "" {
		t.Fatalf("listSecrets: %s", sec)
	}
	return s.SASToken
}

// containerClient is azblob's client of workspaceblobstore at the
// path-style account URL, with sas; no retries, so that a refusal is
// seen as it comes.
func containerClient(t *testing.T, e *testEnv, sas string) *container.Client {
	t.Helper()
	c, err := container.NewClientWithNoCredential(e.ts.URL+"/shoal/workspaceblobstore?"+sas,
		&container.ClientOptions{ClientOptions: policy.ClientOptions{Retry: policy.RetryOptions{MaxRetries: -1}}})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestBlobEndpointWithAzblob: Azure's Go storage client uploads to
// workspaceblobstore with the SAS of listSecrets (whole, and in blocks),
// reads back whole and by range, reads properties and metadata, and
// lists by prefix, in pages and by folder.
func TestBlobEndpointWithAzblob(t *testing.T) {
	e := newTestEnv(t)
	carl := addUser(t, e, "carl", identity.RoleContributor)
	ctx := context.Background()
	c := containerClient(t, e, blobSAS(t, e, carl, "default"))

	data := []byte("print('hello from shoal')\n")
	if _, err := c.NewBlockBlobClient("LocalUpload/abc/src/main.py").UploadBuffer(ctx, data, &blockblob.UploadBufferOptions{
		Metadata: map[string]*string{"name": to.Ptr("code-1")}, HTTPHeaders: &blob.HTTPHeaders{BlobContentType: to.Ptr("text/x-python")}}); err != nil {
		t.Fatalf("UploadBuffer: %v", err)
	}
	// Blocks, staged out of order and committed in order.
	bb := c.NewBlockBlobClient("LocalUpload/abc/src/data/big.bin")
	parts := [][]byte{bytes.Repeat([]byte("a"), 1000), bytes.Repeat([]byte("b"), 10), []byte("c")}
	ids := []string{"QUFB", "QkJC", "Q0ND"}
	for _, i := range []int{2, 0, 1} {
		if _, err := bb.StageBlock(ctx, ids[i], streaming(parts[i]), nil); err != nil {
			t.Fatalf("StageBlock %d: %v", i, err)
		}
	}
	if _, err := bb.CommitBlockList(ctx, ids, nil); err != nil {
		t.Fatalf("CommitBlockList: %v", err)
	}
	whole := bytes.Join(parts, nil)

	got := download(t, c.NewBlobClient("LocalUpload/abc/src/data/big.bin"), blob.HTTPRange{})
	if !bytes.Equal(got, whole) {
		t.Errorf("downloaded %d bytes, want the %d committed", len(got), len(whole))
	}
	if got := download(t, c.NewBlobClient("LocalUpload/abc/src/data/big.bin"), blob.HTTPRange{Offset: 995, Count: 10}); string(got) != "aaaaabbbbb" {
		t.Errorf("range 995+10 = %q", got)
	}
	props, err := c.NewBlobClient("LocalUpload/abc/src/main.py").GetProperties(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	sum := md5.Sum(data)
	if *props.ContentLength != int64(len(data)) || *props.ContentType != "text/x-python" || *props.Metadata["Name"] != "code-1" ||
		!bytes.Equal(props.ContentMD5, sum[:]) || *props.BlobType != blob.BlobTypeBlockBlob {
		t.Errorf("properties: length %d type %s metadata %v md5 %x", *props.ContentLength, *props.ContentType, props.Metadata, props.ContentMD5)
	}
	if _, err := c.NewBlobClient("LocalUpload/abc/src/main.py").SetMetadata(ctx, map[string]*string{"upload_status": to.Ptr("completed")}, nil); err != nil {
		t.Fatalf("SetMetadata: %v", err)
	}

	for i := 0; i < 5; i++ {
		if _, err := c.NewBlockBlobClient(fmt.Sprintf("many/%02d.txt", i)).UploadBuffer(ctx, []byte{byte('0' + i)}, nil); err != nil {
			t.Fatal(err)
		}
	}
	var names []string
	pages := 0
	pager := c.NewListBlobsFlatPager(&container.ListBlobsFlatOptions{Prefix: to.Ptr("many/"), MaxResults: to.Ptr(int32(2)), Include: container.ListBlobsInclude{Metadata: true}})
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		pages++
		for _, b := range page.Segment.BlobItems {
			names = append(names, *b.Name)
		}
	}
	if strings.Join(names, ",") != "many/00.txt,many/01.txt,many/02.txt,many/03.txt,many/04.txt" || pages != 3 {
		t.Errorf("flat list by prefix in pages of 2: %d pages %v", pages, names)
	}
	var folders, files []string
	hp := c.NewListBlobsHierarchyPager("/", &container.ListBlobsHierarchyOptions{Prefix: to.Ptr("LocalUpload/abc/src/"), Include: container.ListBlobsInclude{Metadata: true}})
	for hp.More() {
		page, err := hp.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range page.Segment.BlobPrefixes {
			folders = append(folders, *p.Name)
		}
		for _, b := range page.Segment.BlobItems {
			files = append(files, *b.Name)
			if *b.Name == "LocalUpload/abc/src/main.py" && (b.Metadata["upload_status"] == nil || *b.Metadata["upload_status"] != "completed") {
				t.Errorf("listed metadata of main.py: %v", b.Metadata)
			}
		}
	}
	if strings.Join(folders, ",") != "LocalUpload/abc/src/data/" || strings.Join(files, ",") != "LocalUpload/abc/src/main.py" {
		t.Errorf("hierarchy under src/: folders %v files %v", folders, files)
	}
	if _, err := c.NewBlobClient("nothing/here").GetProperties(ctx, nil); !bloberror.HasCode(err, bloberror.BlobNotFound) {
		t.Errorf("a blob never put: %v, want BlobNotFound", err)
	}
	// overwrite=False in Azure's clients: If-None-Match: *.
	_, err = c.NewBlockBlobClient("LocalUpload/abc/src/main.py").UploadBuffer(ctx, []byte("x"), &blockblob.UploadBufferOptions{
		AccessConditions: &blob.AccessConditions{ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfNoneMatch: to.Ptr(azcore.ETagAny)}}})
	if !bloberror.HasCode(err, bloberror.BlobAlreadyExists) {
		t.Errorf("a put with If-None-Match * over a blob: %v, want BlobAlreadyExists", err)
	}
}

// streaming wraps b as the ReadSeekCloser StageBlock takes.
func streaming(b []byte) interface {
	io.ReadSeeker
	io.Closer
} {
	return nopCloser{bytes.NewReader(b)}
}

type nopCloser struct{ *bytes.Reader }

func (nopCloser) Close() error { return nil }

// download reads a blob (a range when r's Count is set) with azblob.
func download(t *testing.T, c *blob.Client, r blob.HTTPRange) []byte {
	t.Helper()
	resp, err := c.DownloadStream(context.Background(), &blob.DownloadStreamOptions{Range: r})
	if err != nil {
		t.Fatalf("DownloadStream: %v", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestBlobEndpointRefusesBadInput: a forged SAS, an expired one, one of
// another workspace, one for another folder, a block list naming a
// block never uploaded, a single put of 5 GiB, a name with '..' and a
// body whose MD5 differs are refused with Azure's codes, and nothing of
// them is stored.
func TestBlobEndpointRefusesBadInput(t *testing.T) {
	e := newTestEnv(t)
	carl := addUser(t, e, "carl", identity.RoleContributor)
	mustSend(t, e, e.admin, "POST", "/api/v1/workspaces", `{"name":"other"}`, http.StatusCreated)
	ctx := context.Background()
	sas := blobSAS(t, e, carl, "default")
	c := containerClient(t, e, sas)
	if _, err := c.NewBlockBlobClient("secret/plan.txt").UploadBuffer(ctx, []byte("default's"), nil); err != nil {
		t.Fatal(err)
	}
	absent := func(name string) {
		t.Helper()
		if _, err := c.NewBlobClient(name).GetProperties(ctx, nil); !bloberror.HasCode(err, bloberror.BlobNotFound) {
			t.Errorf("%s after a refused write: %v, want BlobNotFound", name, err)
		}
	}

	q, _ := url.ParseQuery(sas)
	forged := url.Values{}
	for k, v := range q {
		forged[k] = v
	}
	sig := []byte(q.Get("sig"))
	sig[3] ^= 1
	forged.Set("sig", string(sig))
	other := url.Values{}
	for k, v := range q {
		other[k] = v
	}
	other.Set("sktid", "other") // default's signature over another workspace
	longer := url.Values{}
	for k, v := range q {
		longer[k] = v
	}
	longer.Set("se", time.Now().Add(365*24*time.Hour).UTC().Format(time.RFC3339))
	def, err := e.svc.FindWorkspace(ctx, "default")
	if err != nil {
		t.Fatal(err)
	}
	expired := e.srv.Blobs().SignString(blobs.SAS{Workspace: "default", Created: def.CreatedOn, Container: "workspaceblobstore", Perms: "racwl", Expiry: time.Now().Add(-time.Minute)})
	for name, bad := range map[string]string{"forged": forged.Encode(), "another workspace": other.Encode(), "a later expiry": longer.Encode(), "expired": expired, "none": ""} {
		bc := containerClient(t, e, bad)
		if _, err := bc.NewBlobClient("secret/plan.txt").DownloadStream(ctx, nil); !bloberror.HasCode(err, bloberror.AuthenticationFailed) {
			t.Errorf("%s SAS read: %v, want AuthenticationFailed", name, err)
		}
		if _, err := bc.NewBlockBlobClient("planted.txt").UploadBuffer(ctx, []byte("x"), nil); !bloberror.HasCode(err, bloberror.AuthenticationFailed) {
			t.Errorf("%s SAS write: %v, want AuthenticationFailed", name, err)
		}
	}
	absent("planted.txt")
	// The same SAS, unexpired, is good until its workspace is gone.
	gone := blobSAS(t, e, e.admin, "other")
	gc := containerClient(t, e, gone)
	if _, err := gc.NewBlockBlobClient("first.txt").UploadBuffer(ctx, []byte("first"), nil); err != nil {
		t.Fatal(err)
	}
	mustSend(t, e, e.admin, "DELETE", "/api/v1/workspaces/other", "", http.StatusNoContent)
	mustSend(t, e, e.admin, "POST", "/api/v1/workspaces", `{"name":"other"}`, http.StatusCreated)
	if _, err := gc.NewBlockBlobClient("planted.txt").UploadBuffer(ctx, []byte("x"), nil); !bloberror.HasCode(err, bloberror.AuthenticationFailed) {
		t.Errorf("a deleted workspace's SAS writing into the one created again under its name: %v, want AuthenticationFailed", err)
	}
	if _, err := gc.NewBlobClient("first.txt").GetProperties(ctx, nil); err == nil || !strings.Contains(err.Error(), "403") {
		t.Errorf("a deleted workspace's SAS reading the new one: %v, want 403", err)
	}
	if _, err := containerClient(t, e, blobSAS(t, e, e.admin, "other")).NewBlobClient("first.txt").GetProperties(ctx, nil); !bloberror.HasCode(err, bloberror.BlobNotFound) {
		t.Errorf("the deleted workspace's blob in the one created again under its name: %v, want BlobNotFound", err)
	}
	// Another workspace's own SAS reaches its own blobs only.
	oc := containerClient(t, e, blobSAS(t, e, e.admin, "other"))
	if _, err := oc.NewBlobClient("secret/plan.txt").GetProperties(ctx, nil); !bloberror.HasCode(err, bloberror.BlobNotFound) {
		t.Errorf("other's SAS reading default's blob: %v, want BlobNotFound (its own store has none)", err)
	}
	// A Reader may not ask for the SAS.
	rita := addUser(t, e, "rita", identity.RoleReader)
	if got := send(t, e, rita, "POST", "/subscriptions/s/resourceGroups/rg/providers/Microsoft.MachineLearningServices/workspaces/default/datastores/workspaceblobstore/listSecrets"+armQ, "", nil); got.status != http.StatusForbidden {
		t.Errorf("a Reader's listSecrets: %s", got)
	}
	// A SAS for one folder (startPendingUpload's) writes there only.
	pending := mustSend(t, e, carl, "POST", "/subscriptions/s/resourceGroups/rg/providers/Microsoft.MachineLearningServices/workspaces/default/codes/c/versions/1/startPendingUpload"+armQ, `{"pendingUploadType":"TemporaryBlobReference"}`, http.StatusOK)
	var pr struct {
		Ref struct {
			BlobURI    string `json:"blobUri"`
			Credential struct {
				SASURI string `json:"sasUri"`
			} `json:"credential"`
		} `json:"blobReferenceForConsumption"`
	}
	json.Unmarshal(pending.body, &pr)
	_, folderSAS, _ := strings.Cut(pr.Ref.Credential.SASURI, "?")
	fc := containerClient(t, e, folderSAS)
	if _, err := fc.NewBlockBlobClient("escaped.txt").UploadBuffer(ctx, []byte("x"), nil); !bloberror.HasCode(err, bloberror.AuthorizationPermissionMismatch) {
		t.Errorf("a folder's SAS writing outside it: %v, want AuthorizationPermissionMismatch", err)
	}
	if _, err := fc.NewBlobClient("secret/plan.txt").GetProperties(ctx, nil); err == nil {
		t.Errorf("a folder's SAS read another blob")
	}
	absent("escaped.txt")

	// A block list naming a block never uploaded: nothing committed.
	bb := c.NewBlockBlobClient("half.bin")
	if _, err := bb.StageBlock(ctx, "QUFB", streaming([]byte("aaa")), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := bb.CommitBlockList(ctx, []string{"QUFB", "WldaWg=="}, nil); !bloberror.HasCode(err, bloberror.InvalidBlockList) {
		t.Errorf("a block list naming an unknown block: %v, want InvalidBlockList", err)
	}
	absent("half.bin")
	// Another blob's block is not this blob's.
	if _, err := c.NewBlockBlobClient("other.bin").CommitBlockList(ctx, []string{"QUFB"}, nil); !bloberror.HasCode(err, bloberror.InvalidBlockList) {
		t.Errorf("committing another blob's block: %v, want InvalidBlockList", err)
	}
	absent("other.bin")

	// 5 GiB in one put: refused by its Content-Length before the body.
	body := &countingBody{limit: 64 << 20}
	req, _ := http.NewRequest("PUT", e.ts.URL+"/shoal/workspaceblobstore/huge.bin?"+sas, body)
	req.ContentLength = 5 << 30
	req.Header.Set("x-ms-blob-type", "BlockBlob")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("5 GiB put: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge || resp.Header.Get("x-ms-error-code") != "RequestBodyTooLarge" {
		t.Errorf("5 GiB put: %d %s, want 413 RequestBodyTooLarge", resp.StatusCode, resp.Header.Get("x-ms-error-code"))
	}
	// The client stops sending once the answer comes: what it sent is
	// what the sockets' buffers took, far short of the body.
	if r := body.read.Load(); r >= body.limit {
		t.Errorf("the client sent %d bytes before the refusal came", r)
	}
	absent("huge.bin")

	// '..' and other names that are no path inside the container.
	for _, name := range []string{"a/../secret/plan.txt", "../x", "a//b", "./a"} {
		req, _ := http.NewRequest("PUT", e.ts.URL+"/shoal/workspaceblobstore/"+name+"?"+sas, strings.NewReader("x"))
		req.Header.Set("x-ms-blob-type", "BlockBlob")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		msg, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest || resp.Header.Get("x-ms-error-code") != "InvalidResourceName" || !strings.Contains(string(msg), "<Code>InvalidResourceName</Code>") {
			t.Errorf("PUT %s: %d %s %s, want 400 InvalidResourceName", name, resp.StatusCode, resp.Header.Get("x-ms-error-code"), msg)
		}
	}
	// A body whose MD5 is not Content-MD5's: not stored.
	_, err = c.NewBlockBlobClient("corrupt.bin").Upload(ctx, streaming([]byte("what was sent")), &blockblob.UploadOptions{TransactionalValidation: blob.TransferValidationTypeMD5(md5Of("something else"))})
	if !bloberror.HasCode(err, bloberror.MD5Mismatch) {
		t.Errorf("a body with another MD5: %v, want Md5Mismatch", err)
	}
	absent("corrupt.bin")
	// Another container of the account.
	cc, _ := container.NewClientWithNoCredential(e.ts.URL+"/shoal/elsewhere?"+sas, nil)
	if _, err := cc.NewBlockBlobClient("x").UploadBuffer(ctx, []byte("x"), nil); !bloberror.HasCode(err, bloberror.ContainerNotFound) {
		t.Errorf("another container: %v, want ContainerNotFound", err)
	}
}

// listBlobNames lists a container's blob names under prefix, every
// page.
func listBlobNames(t *testing.T, c *container.Client, prefix string) []string {
	t.Helper()
	var names []string
	pager := c.NewListBlobsFlatPager(&container.ListBlobsFlatOptions{Prefix: to.Ptr(prefix)})
	for pager.More() {
		page, err := pager.NextPage(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range page.Segment.BlobItems {
			names = append(names, *it.Name)
		}
	}
	return names
}

// keepModelOutput keeps archive as rank 0's outputs of job name's first
// attempt, with an output named model and the job's artifacts.
func keepModelOutput(t *testing.T, e *testEnv, name string, archive io.Reader) {
	t.Helper()
	if err := e.files.PutOutputs("default", name, 1, 0, archive, 1<<20); err != nil {
		t.Fatal(err)
	}
	if err := e.store.Update(context.Background(), func(tx store.Tx) error {
		j, err := tx.GetJob("default", name)
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
}

func md5Of(s string) []byte {
	h := md5.Sum([]byte(s))
	return h[:]
}

// countingBody is an endless body that counts what was read of it and
// stops at limit. The count is atomic: the transport's writer may still
// be reading it when the refusal has come back.
type countingBody struct {
	read  atomic.Int64
	limit int64
}

func (b *countingBody) Read(p []byte) (int, error) {
	r := b.read.Load()
	if r >= b.limit {
		return 0, errors.New("read past the limit")
	}
	n := min(int64(len(p)), b.limit-r)
	b.read.Add(n)
	return int(n), nil
}

// TestCodeAssetsUploadAndResolve: a code version's files go up through
// startPendingUpload's SAS URI (as Azure's clients read it: a container
// URL), the version is registered with its hash, found by it, and
// resolves to an artifact that unpacks to the files; a version naming a
// folder with no file is refused naming codeUri.
func TestCodeAssetsUploadAndResolve(t *testing.T) {
	e := newTestEnv(t)
	carl := addUser(t, e, "carl", identity.RoleContributor)
	ctx := context.Background()
	const codes = "/subscriptions/s/resourceGroups/rg/providers/Microsoft.MachineLearningServices/workspaces/default/codes"
	rita := addUser(t, e, "rita", identity.RoleReader)
	if got := send(t, e, rita, "POST", codes+"/train/versions/1/startPendingUpload"+armQ, `{}`, nil); got.status != http.StatusForbidden {
		t.Errorf("a Reader's startPendingUpload: %s, want 403", got)
	}
	// The client's pendingUploadId names no folder: the server's does.
	pending := mustSend(t, e, carl, "POST", codes+"/train/versions/1/startPendingUpload"+armQ, `{"pendingUploadId":"../../x","pendingUploadType":"TemporaryBlobReference"}`, http.StatusOK)
	var pr struct {
		Ref struct {
			BlobURI    string `json:"blobUri"`
			Credential struct {
				Type   string `json:"credentialType"`
				SASURI string `json:"sasUri"`
			} `json:"credential"`
		} `json:"blobReferenceForConsumption"`
		ID string `json:"pendingUploadId"`
	}
	if err := json.Unmarshal(pending.body, &pr); err != nil || pr.Ref.Credential.Type != "SAS" || strings.Contains(pr.ID, "..") {
		t.Fatalf("startPendingUpload: %s", pending)
	}
	// The test server's public URL is shoal.test's; its address is the
	// test server's.
	sasURI := strings.Replace(pr.Ref.Credential.SASURI, "http://shoal.test", e.ts.URL, 1)
	fc, err := container.NewClientWithNoCredential(sasURI, nil)
	if err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{"src/train.py": "print(1)\n", "src/lib/util.py": "X = 2\n"} {
		if _, err := fc.NewBlockBlobClient(name).UploadBuffer(ctx, []byte(text), nil); err != nil {
			t.Fatalf("upload %s: %v", name, err)
		}
	}
	body := `{"properties":{"codeUri":"` + pr.Ref.BlobURI + `/src","isAnonymous":true,"properties":{"hash_sha256":"feed","hash_version":"202208"}}}`
	mustSend(t, e, carl, "PUT", codes+"/train/versions/1"+armQ, body, http.StatusCreated)
	mustSend(t, e, carl, "PUT", codes+"/train/versions/1"+armQ, body, http.StatusOK)
	// A registered version never changes: another Contributor holding the
	// workspace's SAS may not replace its files (azure-ai-ml reuses a
	// version by its hash without uploading again, so carl's next job
	// would run them), nor add one.
	mallory := addUser(t, e, "mallory", identity.RoleContributor)
	folder := strings.TrimPrefix(pr.Ref.BlobURI[strings.Index(pr.Ref.BlobURI, "/workspaceblobstore/")+len("/workspaceblobstore/"):], "/")
	mc := containerClient(t, e, blobSAS(t, e, mallory, "default"))
	for _, name := range []string{folder + "/src/train.py", folder + "/src/new.py"} {
		_, err := mc.NewBlockBlobClient(name).UploadBuffer(ctx, []byte("print('mallory')\n"), nil)
		if err == nil || !strings.Contains(err.Error(), "BlobImmutableDueToPolicy") {
			t.Errorf("writing %s of a registered code version: %v, want BlobImmutableDueToPolicy", name, err)
		}
	}
	byHash := mustSend(t, e, carl, "GET", codes+"/train/versions"+armQ+"&hash=feed&hashVersion=202208", "", http.StatusOK)
	none := mustSend(t, e, carl, "GET", codes+"/train/versions"+armQ+"&hash=beef", "", http.StatusOK)
	if !strings.Contains(string(byHash.body), `"codeUri":"`+pr.Ref.BlobURI+`/src"`) || strings.Contains(string(none.body), "codeUri") {
		t.Errorf("by hash: %s; another hash: %s", byHash.body, none.body)
	}
	got := send(t, e, carl, "PUT", codes+"/empty/versions/1"+armQ, `{"properties":{"codeUri":"`+pr.Ref.BlobURI+`/nothing"}}`, nil)
	if got.status != http.StatusBadRequest || !strings.Contains(string(got.body), "properties.codeUri") {
		t.Errorf("a version of a folder with no file: %s", got)
	}

	if got := send(t, e, rita, "GET", codes+"/train/versions/1"+armQ, "", nil); got.status != http.StatusOK {
		t.Errorf("a Reader's GET of a code version: %s", got)
	}
	if got := send(t, e, rita, "PUT", codes+"/train/versions/2"+armQ, body, nil); got.status != http.StatusForbidden {
		t.Errorf("a Reader's PUT of a code version: %s, want 403", got)
	}
	res := e.srv.CodeResolver()
	id, err := res.CodeArtifact(ctx, "default", "/subscriptions/s/resourceGroups/rg/providers/Microsoft.MachineLearningServices/workspaces/default/codes/train/versions/1")
	if err != nil {
		t.Fatalf("CodeArtifact: %v", err)
	}
	again, err := res.CodeArtifact(ctx, "default", "azureml:train:1")
	if err != nil || again != id {
		t.Errorf("azureml:train:1 = %s %v, want the same artifact %s", again, err, id)
	}
	rc, err := e.files.OpenArtifact("default", id)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := archive.Unpack(rc, dir, archive.Limits{MaxFiles: 100, MaxBytes: 1 << 20}); err != nil {
		t.Fatal(err)
	}
	rc.Close()
	for name, want := range map[string]string{"train.py": "print(1)\n", "lib/util.py": "X = 2\n"} {
		if b, err := os.ReadFile(filepath.Join(dir, name)); err != nil || string(b) != want {
			t.Errorf("%s in the code artifact: %q %v", name, b, err)
		}
	}
	mustSend(t, e, e.admin, "POST", "/api/v1/workspaces", `{"name":"other"}`, http.StatusCreated)
	if _, err := res.CodeArtifact(ctx, "other", "azureml:train:1"); err == nil {
		t.Errorf("another workspace resolved default's code")
	}
	if _, err := res.CodeArtifact(ctx, "other", "/subscriptions/s/resourceGroups/rg/providers/Microsoft.MachineLearningServices/workspaces/default/codes/train/versions/1"); err == nil {
		t.Errorf("another workspace resolved default's code by its ARM id")
	}
}

// TestBlobViewsOfJobOutputs: what Shoal keeps of a job reads as blobs
// where Azure keeps them: a named output under azureml/<job>/<output>/
// of workspaceblobstore, the artifacts under ExperimentRun/dcid.<job>/
// of workspaceartifactstore (its SAS read only); a view is never
// written.
func TestBlobViewsOfJobOutputs(t *testing.T) {
	e := newTestEnv(t)
	carl := addUser(t, e, "carl", identity.RoleContributor)
	ctx := context.Background()
	runJob(t, e, "x")
	dir := t.TempDir()
	for rel, content := range map[string]string{"artifacts/outputs/helloworld.txt": "hello", "artifacts/user_logs/std_log.txt": "log", "model/m.txt": "weights"} {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(content), 0o644)
	}
	var b bytes.Buffer
	if _, err := archive.Pack(&b, dir, archive.PackOptions{}); err != nil {
		t.Fatal(err)
	}
	keepModelOutput(t, e, "x", &b)
	blobC := containerClient(t, e, blobSAS(t, e, carl, "default"))
	if got := download(t, blobC.NewBlobClient("azureml/x/model/m.txt"), blob.HTTPRange{}); string(got) != "weights" {
		t.Errorf("azureml/x/model/m.txt = %q", got)
	}
	if got := download(t, blobC.NewBlobClient("azureml/x/model/m.txt"), blob.HTTPRange{Offset: 2, Count: 3}); string(got) != "igh" {
		t.Errorf("range of azureml/x/model/m.txt = %q", got)
	}
	if _, err := blobC.NewBlobClient("azureml/x/model/none.txt").GetProperties(ctx, nil); !bloberror.HasCode(err, bloberror.BlobNotFound) {
		t.Errorf("a file the output lacks: %v", err)
	}
	if _, err := blobC.NewBlockBlobClient("azureml/x/model/m.txt").UploadBuffer(ctx, []byte("forged"), nil); !bloberror.HasCode(err, bloberror.AuthorizationPermissionMismatch) {
		t.Errorf("writing into a job's output: %v, want AuthorizationPermissionMismatch", err)
	}
	sec := mustSend(t, e, carl, "POST", "/subscriptions/s/resourceGroups/rg/providers/Microsoft.MachineLearningServices/workspaces/default/datastores/workspaceartifactstore/listSecrets"+armQ, "", http.StatusOK)
	var s struct {
		SASToken string `json:"sasToken"`
	}
	json.Unmarshal(sec.body, &s)
	artC, _ := container.NewClientWithNoCredential(e.ts.URL+"/shoal/workspaceartifactstore?"+s.SASToken, nil)
	names := listBlobNames(t, artC, "ExperimentRun/dcid.x/")
	if strings.Join(names, ",") != "ExperimentRun/dcid.x/outputs/helloworld.txt,ExperimentRun/dcid.x/user_logs/std_log.txt" {
		t.Errorf("artifacts listed: %v", names)
	}
	if got := download(t, artC.NewBlobClient("ExperimentRun/dcid.x/user_logs/std_log.txt"), blob.HTTPRange{}); string(got) != "log" {
		t.Errorf("std_log.txt = %q", got)
	}
	if _, err := artC.NewBlockBlobClient("ExperimentRun/dcid.x/outputs/planted.txt").UploadBuffer(ctx, []byte("x"), nil); !bloberror.HasCode(err, bloberror.AuthorizationPermissionMismatch) {
		t.Errorf("writing workspaceartifactstore: %v, want AuthorizationPermissionMismatch", err)
	}
	// Another job's output, or one this job lacks: nothing.
	if _, err := blobC.NewBlobClient("azureml/y/model/m.txt").GetProperties(ctx, nil); !bloberror.HasCode(err, bloberror.BlobNotFound) {
		t.Errorf("a job that does not exist: %v", err)
	}
}

// TestBlobFolderNameIsNotFound: azure-ai-ml's jobs.download(output_name=)
// asks whether azureml/<job>/<output>/ exists (Get Blob Properties of a
// folder's name) before it lists the folder: the answer is 404
// BlobNotFound, as on Azure, so the SDK goes on to list it; writing a
// blob under such a name stays refused.
func TestBlobFolderNameIsNotFound(t *testing.T) {
	e := newTestEnv(t)
	carl := addUser(t, e, "carl", identity.RoleContributor)
	ctx := context.Background()
	c := containerClient(t, e, blobSAS(t, e, carl, "default"))
	if _, err := c.NewBlockBlobClient("folder/a.txt").UploadBuffer(ctx, []byte("a"), nil); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"folder/", "folder//", "absent/"} {
		_, err := c.NewBlobClient(name).GetProperties(ctx, nil)
		if !bloberror.HasCode(err, bloberror.BlobNotFound) {
			t.Errorf("properties of %q: %v, want BlobNotFound", name, err)
		}
	}
	if _, err := c.NewBlockBlobClient("folder/").UploadBuffer(ctx, []byte("x"), nil); !bloberror.HasCode(err, bloberror.InvalidResourceName) {
		t.Errorf("a blob named folder/: %v, want InvalidResourceName", err)
	}
	if _, err := c.NewBlobClient("../").GetProperties(ctx, nil); !bloberror.HasCode(err, bloberror.InvalidResourceName) {
		t.Errorf("properties of ../: %v, want InvalidResourceName", err)
	}
}
