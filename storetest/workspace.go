package storetest

import (
	"testing"
	"time"

	"github.com/shoal-ml/shoal"
)

func testWorkspaces(t *testing.T, s shoal.Store, clock *Clock) {
	var prod *shoal.Workspace
	update(t, s, func(tx shoal.Tx) error {
		prod = &shoal.Workspace{Name: "Prod-EU", Location: "westeurope", Description: "production ✓", ResourceGroup: "rg-prod", CreatedOn: tx.Now()}
		return tx.InsertWorkspace(prod)
	})
	for _, name := range []string{"Prod-EU", "prod-eu", "PROD-EU"} {
		var got *shoal.Workspace
		view(t, s, func(tx shoal.Tx) (err error) {
			got, err = tx.GetWorkspace(name)
			return err
		})
		equal(t, "GetWorkspace("+name+")", got, prod)
	}

	err := s.Update(t.Context(), func(tx shoal.Tx) error {
		return tx.InsertWorkspace(&shoal.Workspace{Name: "prod-eu", Location: "eastus", CreatedOn: tx.Now()})
	})
	wantCode(t, "InsertWorkspace of an existing name", err, shoal.ECONFLICT)

	err = s.View(t.Context(), func(tx shoal.Tx) error {
		_, err := tx.GetWorkspace("nope")
		return err
	})
	wantCode(t, "GetWorkspace of a missing workspace", err, shoal.ENOTFOUND)

	later := now(clock.Advance(time.Hour))
	want := map[string]*shoal.Workspace{"Prod-EU": prod}
	for _, name := range []string{"gamma", "Alpha", "beta_2"} {
		ws := &shoal.Workspace{Name: name, Location: "eastus", CreatedOn: later}
		update(t, s, func(tx shoal.Tx) error { return tx.InsertWorkspace(ws) })
		want[name] = ws
	}
	var got []*shoal.Workspace
	view(t, s, func(tx shoal.Tx) (err error) {
		got, err = tx.ListWorkspaces()
		return err
	})
	equal(t, "ListWorkspaces", got, []*shoal.Workspace{want["Alpha"], want["beta_2"], want["gamma"], want["Prod-EU"]})
}
