package assettest

import (
	"testing"

	"github.com/shoal-ml/shoal/domain/asset"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/store"
	"github.com/shoal-ml/shoal/store/storetest/stcheck"
)

// Registry logins read back as written per workspace (names compared
// case-insensitively), the sealed password beside the document; adding a
// server again replaces its login; deleting one that is not there is
// ENOTFOUND.
func testRegistries(t *testing.T, s store.Store, clock *stcheck.Clock) {
	a := &asset.Registry{Workspace: "WS", Server: "localhost:5000", Username: "alice", SealedPassword: "sealed:v1:aaa", CreatedBy: "alice"}
	b := &asset.Registry{Workspace: "WS", Server: "Registry.Example.com", Username: "bob", Insecure: true, SealedPassword: "sealed:v1:bbb"}
	other := &asset.Registry{Workspace: "other", Server: "localhost:5000", Username: "carol", SealedPassword: "sealed:v1:ccc"}
	stcheck.Update(t, s, func(tx store.Tx) error {
		for _, r := range []*asset.Registry{b, a, other} {
			if err := tx.PutRegistry(r); err != nil {
				return err
			}
		}
		return nil
	})
	if want := stcheck.Now(stcheck.Start); !a.CreatedOn.Equal(want) {
		t.Errorf("CreatedOn = %v, want the transaction time %v", a.CreatedOn, want)
	}
	list := func(ws string) []*asset.Registry {
		t.Helper()
		var out []*asset.Registry
		if err := s.View(t.Context(), func(tx store.Tx) (err error) {
			out, err = tx.ListRegistries(ws)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return out
	}
	got := list("ws")
	if len(got) != 2 || got[0].Server != "localhost:5000" || got[1].Server != "Registry.Example.com" {
		t.Fatalf("ListRegistries(ws) = %+v, want localhost:5000 then Registry.Example.com", got)
	}
	if g := got[0]; g.Workspace != "WS" || g.Username != "alice" || g.SealedPassword != "sealed:v1:aaa" || g.Insecure || g.CreatedBy != "alice" || !g.CreatedOn.Equal(a.CreatedOn) {
		t.Errorf("read back %+v, want %+v", g, a)
	}
	if g := got[1]; !g.Insecure || g.SealedPassword != "sealed:v1:bbb" {
		t.Errorf("read back %+v, want insecure with its own sealed password", g)
	}
	// The same server again, spelled differently: replaced.
	stcheck.Update(t, s, func(tx store.Tx) error {
		return tx.PutRegistry(&asset.Registry{Workspace: "ws", Server: "LOCALHOST:5000", Username: "alice2", SealedPassword: "sealed:v1:ddd"})
	})
	if got = list("WS"); len(got) != 2 || got[0].Username != "alice2" || got[0].SealedPassword != "sealed:v1:ddd" {
		t.Errorf("after replacing: %+v", got)
	}
	if got = list("other"); len(got) != 1 || got[0].Username != "carol" {
		t.Errorf("other workspace: %+v", got)
	}
	stcheck.Update(t, s, func(tx store.Tx) error { return tx.DeleteRegistry("ws", "registry.example.com") })
	if got = list("WS"); len(got) != 1 || got[0].Server != "LOCALHOST:5000" {
		t.Errorf("after delete: %+v", got)
	}
	err := s.Update(t.Context(), func(tx store.Tx) error { return tx.DeleteRegistry("ws", "registry.example.com") })
	stcheck.WantCode(t, "DeleteRegistry of a registry not there", err, core.ENOTFOUND)
	if got = list("nobody"); len(got) != 0 {
		t.Errorf("workspace without registries: %+v", got)
	}
}
