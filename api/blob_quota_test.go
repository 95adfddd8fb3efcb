package api_test

import (
	"bytes"
	"context"
	"net/http"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"

	"github.com/shoal-ml/shoal/domain/identity"
)

// TestBlobBlocksCountAgainstTheQuota, written first: staged blocks are
// stored content, within the workspace's storage quota as any upload:
// a Put Block past the quota is refused with Azure's error
// (AccountLimitExceeded, 403) and stages nothing, so that committing it
// fails too; a Put Blob past it likewise.
func TestBlobBlocksCountAgainstTheQuota(t *testing.T) {
	e := newTestEnv(t)
	carl := addUser(t, e, "carl", identity.RoleContributor)
	ctx := context.Background()
	mustSend(t, e, e.admin, "PATCH", "/api/v1/workspaces/default/limits", `{"storage_quota_bytes":1048576}`, http.StatusOK)
	c := containerClient(t, e, blobSAS(t, e, carl, "default"))
	bb := c.NewBlockBlobClient("big.bin")
	if _, err := bb.StageBlock(ctx, "QUFB", streaming(bytes.Repeat([]byte("a"), 600<<10)), nil); err != nil {
		t.Fatalf("a block within the quota: %v", err)
	}
	if _, err := bb.StageBlock(ctx, "QkJC", streaming(bytes.Repeat([]byte("b"), 600<<10)), nil); !bloberror.HasCode(err, "AccountLimitExceeded") || !bytes.Contains([]byte(err.Error()), []byte("403")) {
		t.Fatalf("a block past the quota (the first one staged counts): %v, want 403 AccountLimitExceeded", err)
	}
	if _, err := bb.CommitBlockList(ctx, []string{"QUFB", "QkJC"}, nil); !bloberror.HasCode(err, bloberror.InvalidBlockList) {
		t.Errorf("committing the refused block: %v, want InvalidBlockList", err)
	}
	if _, err := c.NewBlockBlobClient("other.bin").UploadBuffer(ctx, bytes.Repeat([]byte("c"), 600<<10), nil); !bloberror.HasCode(err, "AccountLimitExceeded") {
		t.Errorf("a Put Blob past the quota: %v, want AccountLimitExceeded", err)
	}
	if _, err := c.NewBlobClient("other.bin").GetProperties(ctx, nil); !bloberror.HasCode(err, bloberror.BlobNotFound) {
		t.Errorf("the refused blob: %v, want BlobNotFound", err)
	}
	// The staged block alone commits: its content is stored once.
	if _, err := bb.CommitBlockList(ctx, []string{"QUFB"}, nil); err != nil {
		t.Errorf("committing the staged block: %v", err)
	}
}
