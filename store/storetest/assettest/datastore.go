package assettest

import (
	"testing"

	"github.com/shoal-ml/shoal/domain/asset"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/store"
	"github.com/shoal-ml/shoal/store/storetest/stcheck"
)

// Datastores read back as written per workspace (names compared
// case-insensitively), the sealed credentials beside the document;
// putting a name again replaces it; getting or deleting one that is not
// there is ENOTFOUND.
func testDatastores(t *testing.T, s store.Store, clock *stcheck.Clock) {
	a := &asset.Datastore{Workspace: "WS", Name: "blob_example", Type: asset.DatastoreAzureBlob, AccountName: "acct", ContainerName: "data",
		Endpoint: "core.windows.net", Protocol: "https", Tags: map[string]string{"team": "a"}, CredentialsType: asset.CredentialsAccountKey,
		SealedCredentials: "sealed:v1:aaa", CreatedBy: "alice"}
	b := &asset.Datastore{Workspace: "WS", Name: "Minio", Type: asset.DatastoreS3, Bucket: "bkt", EndpointURL: "http://10.0.0.5:9000", Region: "us-east-1", CredentialsType: asset.CredentialsNone}
	other := &asset.Datastore{Workspace: "other", Name: "blob_example", Type: asset.DatastoreNFS, Path: "/mnt/d", CredentialsType: asset.CredentialsNone}
	stcheck.Update(t, s, func(tx store.Tx) error {
		for _, d := range []*asset.Datastore{b, a, other} {
			if err := tx.PutDatastore(d); err != nil {
				return err
			}
		}
		return nil
	})
	if want := stcheck.Now(stcheck.Start); !a.CreatedOn.Equal(want) {
		t.Errorf("CreatedOn = %v, want the transaction time %v", a.CreatedOn, want)
	}
	list := func(ws string) []*asset.Datastore {
		t.Helper()
		var out []*asset.Datastore
		if err := s.View(t.Context(), func(tx store.Tx) (err error) {
			out, err = tx.ListDatastores(ws)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return out
	}
	got := list("ws")
	if len(got) != 2 || got[0].Name != "blob_example" || got[1].Name != "Minio" {
		t.Fatalf("ListDatastores(ws) = %+v, want blob_example then Minio", got)
	}
	if g := got[0]; g.Workspace != "WS" || g.AccountName != "acct" || g.SealedCredentials != "sealed:v1:aaa" || g.CredentialsType != asset.CredentialsAccountKey ||
		g.Tags["team"] != "a" || g.CreatedBy != "alice" || !g.CreatedOn.Equal(a.CreatedOn) {
		t.Errorf("read back %+v, want %+v", g, a)
	}
	var one *asset.Datastore
	stcheck.View(t, s, func(tx store.Tx) (err error) {
		one, err = tx.GetDatastore("ws", "MINIO")
		return err
	})
	if one.Bucket != "bkt" || one.EndpointURL != "http://10.0.0.5:9000" || one.SealedCredentials != "" {
		t.Errorf("GetDatastore = %+v", one)
	}
	// The same name again, spelled differently: replaced.
	stcheck.Update(t, s, func(tx store.Tx) error {
		return tx.PutDatastore(&asset.Datastore{Workspace: "ws", Name: "BLOB_EXAMPLE", Type: asset.DatastoreAzureBlob, AccountName: "acct2", ContainerName: "data", SealedCredentials: "sealed:v1:ddd"})
	})
	if got = list("WS"); len(got) != 2 || got[0].AccountName != "acct2" || got[0].SealedCredentials != "sealed:v1:ddd" {
		t.Errorf("after replacing: %+v", got)
	}
	if got = list("other"); len(got) != 1 || got[0].Type != asset.DatastoreNFS {
		t.Errorf("other workspace: %+v", got)
	}
	stcheck.Update(t, s, func(tx store.Tx) error { return tx.DeleteDatastore("ws", "minio") })
	if got = list("WS"); len(got) != 1 || got[0].Name != "BLOB_EXAMPLE" {
		t.Errorf("after delete: %+v", got)
	}
	err := s.Update(t.Context(), func(tx store.Tx) error { return tx.DeleteDatastore("ws", "minio") })
	stcheck.WantCode(t, "DeleteDatastore of a datastore not there", err, core.ENOTFOUND)
	err = s.View(t.Context(), func(tx store.Tx) error { _, err := tx.GetDatastore("ws", "minio"); return err })
	stcheck.WantCode(t, "GetDatastore of a datastore not there", err, core.ENOTFOUND)
	if got = list("nobody"); len(got) != 0 {
		t.Errorf("workspace without datastores: %+v", got)
	}
	// A deleted workspace's datastores go with it: one created again
	// with the name does not inherit them or their credentials.
	stcheck.Update(t, s, func(tx store.Tx) error {
		if err := tx.InsertWorkspace(&core.Workspace{Name: "gone", Location: "local", CreatedOn: tx.Now()}); err != nil {
			return err
		}
		return tx.PutDatastore(&asset.Datastore{Workspace: "gone", Name: "d", Type: asset.DatastoreNFS, Path: "/mnt", SealedCredentials: "sealed:v1:x"})
	})
	stcheck.Update(t, s, func(tx store.Tx) error { return tx.DeleteWorkspace("Gone") })
	if got = list("gone"); len(got) != 0 {
		t.Errorf("datastores of a deleted workspace: %+v", got)
	}
}
