package workspacetest

import (
	"testing"
	"time"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/store"
	"github.com/shoal-ml/shoal/store/storetest/stcheck"
)

func testWorkspaces(t *testing.T, s store.Store, clock *stcheck.Clock) {
	var prod *core.Workspace
	stcheck.Update(t, s, func(tx store.Tx) error {
		prod = &core.Workspace{Name: "Prod-EU", Location: "westeurope", Description: "production ✓", ResourceGroup: "rg-prod", CreatedOn: tx.Now()}
		return tx.InsertWorkspace(prod)
	})
	for _, name := range []string{"Prod-EU", "prod-eu", "PROD-EU"} {
		var got *core.Workspace
		stcheck.View(t, s, func(tx store.Tx) (err error) {
			got, err = tx.GetWorkspace(name)
			return err
		})
		stcheck.Equal(t, "GetWorkspace("+name+")", got, prod)
	}

	err := s.Update(t.Context(), func(tx store.Tx) error {
		return tx.InsertWorkspace(&core.Workspace{Name: "prod-eu", Location: "eastus", CreatedOn: tx.Now()})
	})
	stcheck.WantCode(t, "InsertWorkspace of an existing name", err, core.ECONFLICT)

	err = s.View(t.Context(), func(tx store.Tx) error {
		_, err := tx.GetWorkspace("nope")
		return err
	})
	stcheck.WantCode(t, "GetWorkspace of a missing workspace", err, core.ENOTFOUND)

	later := stcheck.Now(clock.Advance(time.Hour))
	want := map[string]*core.Workspace{"Prod-EU": prod}
	for _, name := range []string{"gamma", "Alpha", "beta_2"} {
		ws := &core.Workspace{Name: name, Location: "eastus", CreatedOn: later}
		stcheck.Update(t, s, func(tx store.Tx) error { return tx.InsertWorkspace(ws) })
		want[name] = ws
	}
	var got []*core.Workspace
	stcheck.View(t, s, func(tx store.Tx) (err error) {
		got, err = tx.ListWorkspaces()
		return err
	})
	stcheck.Equal(t, "ListWorkspaces", got, []*core.Workspace{want["Alpha"], want["beta_2"], want["gamma"], want["Prod-EU"]})
}
