package assettest

import (
	"testing"
	"time"

	"github.com/shoal-ml/shoal/domain/asset"
	"github.com/shoal-ml/shoal/domain/blobs"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/store"
	"github.com/shoal-ml/shoal/store/storetest/stcheck"
)

// Blobs read back as written per workspace and container; names are
// exact and list in byte order, by prefix, after a marker, up to a
// limit; putting a name again replaces it; blocks are staged per blob
// and removed together.
func testBlobs(t *testing.T, s store.Store, clock *stcheck.Clock) {
	names := []string{"b/2.txt", "a/x", "B/1", "a/é", "a/y/z", "a"}
	stcheck.Update(t, s, func(tx store.Tx) error {
		for i, n := range names {
			b := &blobs.Blob{Workspace: "WS", Container: "workspaceblobstore", Name: n, Artifact: "sha256:aa", Size: int64(i),
				ContentType: "text/plain", Metadata: map[string]string{"name": "x"}, ETag: "e1"}
			if err := tx.PutBlob(b); err != nil {
				return err
			}
		}
		// Another workspace's blob of the same name is its own.
		return tx.PutBlob(&blobs.Blob{Workspace: "other", Container: "workspaceblobstore", Name: "a/x", Artifact: "sha256:bb"})
	})
	list := func(prefix, marker string, limit int) []string {
		t.Helper()
		var out []string
		stcheck.View(t, s, func(tx store.Tx) error {
			l, err := tx.ListBlobs("ws", "workspaceblobstore", prefix, marker, limit)
			for _, b := range l {
				out = append(out, b.Name)
			}
			return err
		})
		return out
	}
	eq := func(got []string, want ...string) {
		t.Helper()
		if len(got) != len(want) {
			t.Fatalf("got %q, want %q", got, want)
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("got %q, want %q", got, want)
			}
		}
	}
	eq(list("", "", 100), "B/1", "a", "a/x", "a/y/z", "a/é", "b/2.txt")
	eq(list("a/", "", 100), "a/x", "a/y/z", "a/é")
	eq(list("a/", "a/x", 1), "a/y/z")
	eq(list("", "", 2), "B/1", "a")
	eq(list("zz", "", 10))
	var got *blobs.Blob
	stcheck.View(t, s, func(tx store.Tx) (err error) {
		got, err = tx.GetBlob("ws", "workspaceblobstore", "a/x")
		return err
	})
	if got.Workspace != "WS" || got.Artifact != "sha256:aa" || got.Size != 1 || got.ContentType != "text/plain" || got.Metadata["name"] != "x" || got.ETag != "e1" || got.Created.IsZero() {
		t.Errorf("GetBlob = %+v", got)
	}
	err := s.View(t.Context(), func(tx store.Tx) error {
		_, err := tx.GetBlob("ws", "workspaceblobstore", "A/X")
		return err
	})
	if core.ErrorCode(err) != core.ENOTFOUND {
		t.Errorf("GetBlob of another case = %v, want ENOTFOUND (names are exact)", err)
	}
	stcheck.Update(t, s, func(tx store.Tx) error {
		return tx.PutBlob(&blobs.Blob{Workspace: "ws", Container: "workspaceblobstore", Name: "a/x", Artifact: "sha256:cc", Created: got.Created})
	})
	stcheck.View(t, s, func(tx store.Tx) (err error) {
		got, err = tx.GetBlob("ws", "workspaceblobstore", "a/x")
		return err
	})
	if got.Artifact != "sha256:cc" || len(got.Metadata) != 0 {
		t.Errorf("replaced blob = %+v", got)
	}

	stcheck.Update(t, s, func(tx store.Tx) error {
		for _, id := range []string{"QUE=", "QUI=", "QUE="} {
			if err := tx.PutBlobBlock(&blobs.Block{Workspace: "WS", Container: "workspaceblobstore", Blob: "big", ID: id, Artifact: "sha256:" + id, Size: 3}); err != nil {
				return err
			}
		}
		return tx.PutBlobBlock(&blobs.Block{Workspace: "WS", Container: "workspaceblobstore", Blob: "other", ID: "QUE=", Artifact: "sha256:x", Size: 1})
	})
	var blocks []*blobs.Block
	stcheck.View(t, s, func(tx store.Tx) (err error) {
		blocks, err = tx.ListBlobBlocks("ws", "workspaceblobstore", "big")
		return err
	})
	if len(blocks) != 2 || blocks[0].ID != "QUE=" || blocks[1].ID != "QUI=" || blocks[1].Artifact != "sha256:QUI=" || blocks[1].Size != 3 {
		t.Fatalf("ListBlobBlocks = %+v", blocks)
	}
	stcheck.Update(t, s, func(tx store.Tx) error { return tx.DeleteBlobBlocks("ws", "workspaceblobstore", "big") })
	stcheck.View(t, s, func(tx store.Tx) (err error) {
		blocks, err = tx.ListBlobBlocks("ws", "workspaceblobstore", "big")
		if err == nil && len(blocks) != 0 {
			t.Errorf("blocks after DeleteBlobBlocks: %+v", blocks)
		}
		blocks, err = tx.ListBlobBlocks("ws", "workspaceblobstore", "other")
		if err == nil && len(blocks) != 1 {
			t.Errorf("another blob's blocks went too: %+v", blocks)
		}
		return err
	})
}

// Code versions are a versioned kind like the others: they read back as
// written.
func testCodes(t *testing.T, s store.Store, clock *stcheck.Clock) {
	stcheck.Update(t, s, func(tx store.Tx) error {
		return tx.InsertAsset(&asset.Code{Workspace: "codews", Name: "c1", Version: "1", Path: "azureml://datastores/workspaceblobstore/paths/LocalUpload/ab/src",
			Properties: map[string]string{"hash_sha256": "ab"}, Anonymous: true, CreatedBy: "alice"})
	})
	var c *asset.Code
	stcheck.View(t, s, func(tx store.Tx) (err error) {
		c, err = asset.GetAssetVersion[*asset.Code](tx, "CODEWS", "c1", "1")
		return err
	})
	if c.Path != "azureml://datastores/workspaceblobstore/paths/LocalUpload/ab/src" || !c.Anonymous || c.Properties["hash_sha256"] != "ab" || c.Workspace != "codews" {
		t.Errorf("code read back = %+v", c)
	}
}

// Blocks staged before a time and never committed are removed by
// DeleteBlobBlocksStagedBefore, every workspace's, and only those: a
// block staged again later is as young as its last staging.
func testStaleBlobBlocks(t *testing.T, s store.Store, clock *stcheck.Clock) {
	stage := func(blob, id string) {
		t.Helper()
		stcheck.Update(t, s, func(tx store.Tx) error {
			return tx.PutBlobBlock(&blobs.Block{Workspace: "ws", Container: "workspaceblobstore", Blob: blob, ID: id, Artifact: "sha256:" + id, Size: 1})
		})
	}
	t0 := clock.Now()
	stage("old", "QUE=")
	stage("again", "QUE=")
	clock.Advance(time.Hour)
	stage("young", "QUE=")
	stage("again", "QUE=") // staged again: its time is now
	var n int64
	stcheck.Update(t, s, func(tx store.Tx) (err error) {
		n, err = tx.DeleteBlobBlocksStagedBefore(t0.Add(time.Minute))
		return err
	})
	if n != 1 {
		t.Errorf("DeleteBlobBlocksStagedBefore removed %d blocks, want the 1 staged before and not since", n)
	}
	for blob, want := range map[string]int{"old": 0, "again": 1, "young": 1} {
		stcheck.View(t, s, func(tx store.Tx) error {
			blocks, err := tx.ListBlobBlocks("ws", "workspaceblobstore", blob)
			if err == nil && len(blocks) != want {
				t.Errorf("%s's blocks after the sweep: %+v, want %d", blob, blocks, want)
			}
			return err
		})
	}
}
