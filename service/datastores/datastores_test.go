package datastores_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/domain/asset"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/identity"
	"github.com/shoal-ml/shoal/internal/sealing"
	"github.com/shoal-ml/shoal/internal/teststore"
	"github.com/shoal-ml/shoal/service/datastores"
	"github.com/shoal-ml/shoal/store"
)

const secret = "ACCOUNTKEY-SECRET-42"

func setup(t *testing.T) (*datastores.Service, store.Store, *sealing.Key, context.Context) {
	t.Helper()
	db, _ := teststore.Open(t)
	key, err := sealing.LoadOrCreate(filepath.Join(t.TempDir(), "a.key"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := identity.WithPrincipal(context.Background(), &identity.Principal{ID: "user:alice", Name: "alice"})
	return datastores.New(datastores.Config{Store: db, SecretsKey: key}), db, key, ctx
}

func spec(t *testing.T, doc string) *asset.DatastoreSpec {
	t.Helper()
	s, err := asset.DecodeDatastore([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// Create seals the credentials before they are stored: the row holds no
// clear secret, the answer none, and Resolve opens them again.
func TestCreateSealsAndResolveOpens(t *testing.T) {
	svc, db, _, ctx := setup(t)
	d, created, err := svc.Create(ctx, "ws", spec(t, `{"name":"blob","type":"azure_blob","account_name":"acct","container_name":"data","credentials":{"account_key":"`+secret+`"}}`))
	if err != nil || !created {
		t.Fatalf("create: %v %v", created, err)
	}
	if d.SealedCredentials != "" || d.CredentialsType != asset.CredentialsAccountKey || d.CreatedBy != "alice" {
		t.Errorf("answer %+v", d)
	}
	var row *asset.Datastore
	if err := db.View(ctx, func(tx store.Tx) (err error) { row, err = tx.GetDatastore("ws", "blob"); return err }); err != nil {
		t.Fatal(err)
	}
	if !sealing.IsSealed(row.SealedCredentials) || strings.Contains(row.SealedCredentials, secret) {
		t.Errorf("stored credentials are not sealed: %q", row.SealedCredentials)
	}
	got, sec, err := svc.Resolve(ctx, "ws", "BLOB")
	if err != nil || sec.AccountKey != secret || got.AccountName != "acct" || got.SealedCredentials != "" {
		t.Errorf("Resolve = %+v, %v, %v", got, sec.Type(), err)
	}
	// Replacing keeps who created it; a second create is not "created".
	_, created, err = svc.Create(identity.WithPrincipal(ctx, &identity.Principal{ID: "user:bob", Name: "bob"}), "ws",
		spec(t, `{"name":"blob","type":"azure_blob","account_name":"acct2","container_name":"data"}`))
	if err != nil || created {
		t.Fatalf("replace: %v %v", created, err)
	}
	got, sec, err = svc.Resolve(ctx, "ws", "blob")
	if err != nil || !sec.IsZero() || got.AccountName != "acct2" || got.CreatedBy != "alice" || got.CredentialsType != asset.CredentialsNone {
		t.Errorf("after replace: %+v, %v, %v", got, sec, err)
	}
}

// A sealed value moved to another datastore's row does not open there.
func TestSealedCredentialsBoundToTheirDatastore(t *testing.T) {
	svc, db, _, ctx := setup(t)
	if _, _, err := svc.Create(ctx, "ws", spec(t, `{"name":"a","type":"s3","bucket":"bkt","credentials":{"access_key_id":"AK","secret_access_key":"`+secret+`"}}`)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := svc.Create(ctx, "ws", spec(t, `{"name":"b","type":"s3","bucket":"bkt2"}`)); err != nil {
		t.Fatal(err)
	}
	if err := db.Update(ctx, func(tx store.Tx) error {
		a, err := tx.GetDatastore("ws", "a")
		if err != nil {
			return err
		}
		b, err := tx.GetDatastore("ws", "b")
		if err != nil {
			return err
		}
		b.SealedCredentials = a.SealedCredentials
		return tx.PutDatastore(b)
	}); err != nil {
		t.Fatal(err)
	}
	_, _, err := svc.Resolve(ctx, "ws", "b")
	if err == nil || strings.Contains(err.Error(), secret) {
		t.Errorf("a moved sealed value: %v", err)
	}
	// and a server without the key says so
	noKey := datastores.New(datastores.Config{Store: db})
	if _, _, err := noKey.Resolve(ctx, "ws", "a"); core.ErrorCode(err) != core.EINVALID {
		t.Errorf("resolve without the key: %v", err)
	}
	if _, _, err := noKey.Create(ctx, "ws", spec(t, `{"name":"c","type":"s3","bucket":"bkt","credentials":{"access_key_id":"AK","secret_access_key":"x"}}`)); err == nil || !strings.Contains(err.Error(), "secrets key") {
		t.Errorf("create with credentials without a key: %v", err)
	}
}

// List holds the built-ins and the stored ones by name; Get finds
// either; Delete refuses the built-ins and removes the others.
func TestListGetDelete(t *testing.T) {
	svc, _, _, ctx := setup(t)
	if _, _, err := svc.Create(ctx, "ws", spec(t, `{"name":"nfs1","type":"nfs","path":"/mnt/data"}`)); err != nil {
		t.Fatal(err)
	}
	list, err := svc.List(ctx, "ws")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, d := range list {
		names = append(names, d.Name)
	}
	if strings.Join(names, ",") != "nfs1,workspaceartifactstore,workspaceblobstore" {
		t.Errorf("list %v", names)
	}
	if d, err := svc.Get(ctx, "ws", "workspaceblobstore"); err != nil || !d.IsDefault || d.AccountName != "shoal" {
		t.Errorf("get built-in: %+v %v", d, err)
	}
	if err := svc.Delete(ctx, "ws", "workspaceBlobStore"); core.ErrorField(err) != "name" || !strings.Contains(err.Error(), "built-in") {
		t.Errorf("delete built-in: %v", err)
	}
	if _, _, err := svc.Create(ctx, "ws", &asset.DatastoreSpec{Datastore: asset.Datastore{Name: "workspaceblobstore", Type: asset.DatastoreNFS, Path: "/x"}}); core.ErrorField(err) != "name" {
		t.Errorf("create over a built-in: %v", err)
	}
	if err := svc.Delete(ctx, "ws", "nfs1"); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Get(ctx, "ws", "nfs1"); core.ErrorCode(err) != core.ENOTFOUND {
		t.Errorf("get after delete: %v", err)
	}
	if err := svc.Delete(ctx, "ws", "nfs1"); core.ErrorCode(err) != core.ENOTFOUND {
		t.Errorf("delete twice: %v", err)
	}
	if _, err := svc.List(ctx, "nows"); core.ErrorCode(err) != core.ENOTFOUND {
		t.Errorf("list of no workspace: %v", err)
	}
	if _, _, err := svc.Create(ctx, "nows", spec(t, `{"name":"n","type":"nfs","path":"/mnt/data"}`)); core.ErrorCode(err) != core.ENOTFOUND {
		t.Errorf("create in no workspace: %v", err)
	}
}

// ForURI gives a URL the credentials of the datastore owning its
// account and container; no owner is anonymous; an unknown datastore
// named by an azureml:// URI is ENOTFOUND.
func TestForURI(t *testing.T) {
	svc, db, key, ctx := setup(t)
	if _, _, err := svc.Create(ctx, "ws", spec(t, `{"name":"blob","type":"azure_blob","account_name":"acct","container_name":"data","credentials":{"sas_token":"`+secret+`"}}`)); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		uri, owner string
		sas        string
		code       string
	}{
		{"https://acct.blob.core.windows.net/data/x.csv", "blob", secret, ""},
		{"https://other.blob.core.windows.net/data/x.csv", "", "", ""},
		{"azureml://datastores/workspaceblobstore/paths/a/", "workspaceblobstore", "", ""},
		{"azureml://datastores/missing/paths/a/", "", "", core.ENOTFOUND},
	} {
		u, err := asset.ParseDataURI(tc.uri)
		if err != nil {
			t.Fatal(err)
		}
		if err := db.View(ctx, func(tx store.Tx) error {
			d, sec, ok, err := datastores.ForURI(tx, key, "ws", u)
			if core.ErrorCode(err) != tc.code {
				t.Errorf("%s: %v", tc.uri, err)
			}
			if ok != (tc.owner != "") || d.Name != tc.owner || sec.SASToken != tc.sas {
				t.Errorf("%s: owner %q ok %v", tc.uri, d.Name, ok)
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
}
