package registries_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/shoal-ml/shoal/domain/asset"
	"github.com/shoal-ml/shoal/domain/identity"
	"github.com/shoal-ml/shoal/internal/sealing"
	"github.com/shoal-ml/shoal/internal/teststore"
	"github.com/shoal-ml/shoal/service/registries"
	"github.com/shoal-ml/shoal/store"
)

// ForImages picks the logins of the registries images come from, as
// Docker names them (a first component with '.', ':' or localhost; else
// Docker Hub), opens their passwords, and leaves out a login whose
// password this server's key cannot open.
func TestForImages(t *testing.T) {
	db, _ := teststore.Open(t)
	ctx := identity.WithPrincipal(context.Background(), &identity.Principal{ID: "user:alice", Name: "alice"})
	key, err := sealing.LoadOrCreate(filepath.Join(t.TempDir(), "a.key"))
	if err != nil {
		t.Fatal(err)
	}
	other, err := sealing.LoadOrCreate(filepath.Join(t.TempDir(), "b.key"))
	if err != nil {
		t.Fatal(err)
	}
	svc := registries.New(registries.Config{Store: db, SecretsKey: key})
	for _, r := range []*asset.RegistryAdd{
		{Server: "localhost:5000", Username: "a", Password: "pa"},
		{Server: "docker.io", Username: "hub", Password: "ph"},
		{Server: "ghcr.io", Username: "g", Password: "pg"},
	} {
		if _, err := svc.AddRegistry(ctx, "ws", r); err != nil {
			t.Fatal(err)
		}
	}
	get := func(k *sealing.Key, images ...string) map[string]string {
		t.Helper()
		out := map[string]string{}
		if err := db.View(ctx, func(tx store.Tx) error {
			creds, err := registries.ForImages(tx, k, "ws", images...)
			for _, c := range creds {
				out[c.Registry] = c.Username + ":" + c.Password
			}
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return out
	}
	got := get(key, "localhost:5000/team/train:3", "python:3.11", "localhost:5000/other:1")
	if len(got) != 2 || got["localhost:5000"] != "a:pa" || got["docker.io"] != "hub:ph" {
		t.Errorf("logins %v, want localhost:5000's and Docker Hub's", got)
	}
	if got := get(key, "team/train"); len(got) != 1 || got["docker.io"] != "hub:ph" {
		t.Errorf("team/train (Docker Hub): %v", got)
	}
	if got := get(key, "registry.example.com/x"); len(got) != 0 {
		t.Errorf("an image from a registry without a login got %v", got)
	}
	if got := get(other, "localhost:5000/team/train:3"); len(got) != 0 {
		t.Errorf("a key that did not seal them opened %v", got)
	}
}
