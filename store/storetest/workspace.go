package storetest

import (
	"testing"
	"time"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/store"
)

func testWorkspaces(t *testing.T, s store.Store, clock *Clock) {
	var prod *core.Workspace
	update(t, s, func(tx store.Tx) error {
		prod = &core.Workspace{Name: "Prod-EU", Location: "westeurope", Description: "production ✓", ResourceGroup: "rg-prod", CreatedOn: tx.Now()}
		return tx.InsertWorkspace(prod)
	})
	for _, name := range []string{"Prod-EU", "prod-eu", "PROD-EU"} {
		var got *core.Workspace
		view(t, s, func(tx store.Tx) (err error) {
			got, err = tx.GetWorkspace(name)
			return err
		})
		equal(t, "GetWorkspace("+name+")", got, prod)
	}

	err := s.Update(t.Context(), func(tx store.Tx) error {
		return tx.InsertWorkspace(&core.Workspace{Name: "prod-eu", Location: "eastus", CreatedOn: tx.Now()})
	})
	wantCode(t, "InsertWorkspace of an existing name", err, core.ECONFLICT)

	err = s.View(t.Context(), func(tx store.Tx) error {
		_, err := tx.GetWorkspace("nope")
		return err
	})
	wantCode(t, "GetWorkspace of a missing workspace", err, core.ENOTFOUND)

	later := now(clock.Advance(time.Hour))
	want := map[string]*core.Workspace{"Prod-EU": prod}
	for _, name := range []string{"gamma", "Alpha", "beta_2"} {
		ws := &core.Workspace{Name: name, Location: "eastus", CreatedOn: later}
		update(t, s, func(tx store.Tx) error { return tx.InsertWorkspace(ws) })
		want[name] = ws
	}
	var got []*core.Workspace
	view(t, s, func(tx store.Tx) (err error) {
		got, err = tx.ListWorkspaces()
		return err
	})
	equal(t, "ListWorkspaces", got, []*core.Workspace{want["Alpha"], want["beta_2"], want["gamma"], want["Prod-EU"]})
}
