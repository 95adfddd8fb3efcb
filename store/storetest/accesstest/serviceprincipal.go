package accesstest

import (
	"testing"
	"time"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/identity"
	"github.com/shoal-ml/shoal/store"
	"github.com/shoal-ml/shoal/store/storetest/stcheck"
)

func getServicePrincipal(t *testing.T, s store.Store, name string) *identity.ServicePrincipal {
	t.Helper()
	var sp *identity.ServicePrincipal
	stcheck.View(t, s, func(tx store.Tx) (err error) {
		sp, err = tx.GetServicePrincipal(name)
		return err
	})
	return sp
}

func testServicePrincipals(t *testing.T, s store.Store, clock *stcheck.Clock) {
	raw := clock.Now()
	later := clock.Advance(time.Minute)
	ci := &identity.ServicePrincipal{Name: "CI-Bot", Description: "the CI pipeline", ClientID: "7d1e0c3a-0000-4000-8000-000000000001",
		SecretHash: identity.HashToken("s1"), CreatedOn: raw, CreatedBy: "admin"}
	deploy := &identity.ServicePrincipal{Name: "deployer", ClientID: "7d1e0c3a-0000-4000-8000-000000000002",
		SecretHash: identity.HashToken("s2"), CreatedOn: later, SecretCreatedOn: later}
	stcheck.Update(t, s, func(tx store.Tx) error {
		if err := tx.InsertServicePrincipal(ci); err != nil {
			return err
		}
		return tx.InsertServicePrincipal(deploy)
	})
	if ci.CreatedOn != stcheck.Now(raw) || ci.SecretCreatedOn != stcheck.Now(raw) {
		t.Errorf("InsertServicePrincipal left times %v/%v, want the stored form %v of both", ci.CreatedOn, ci.SecretCreatedOn, stcheck.Now(raw))
	}
	for _, name := range []string{"CI-Bot", "ci-bot"} {
		stcheck.Equal(t, "GetServicePrincipal("+name+")", getServicePrincipal(t, s, name), ci)
	}
	stcheck.View(t, s, func(tx store.Tx) error {
		got, err := tx.FindServicePrincipalByClientID(deploy.ClientID)
		if err != nil {
			t.Errorf("FindServicePrincipalByClientID: %v", err)
		} else {
			stcheck.Equal(t, "FindServicePrincipalByClientID", got, deploy)
		}
		_, err = tx.FindServicePrincipalByClientID("unknown")
		stcheck.WantCode(t, "FindServicePrincipalByClientID of an unknown ID", err, core.ENOTFOUND)
		_, err = tx.GetServicePrincipal("nobody")
		stcheck.WantCode(t, "GetServicePrincipal of a missing one", err, core.ENOTFOUND)
		list, err := tx.ListServicePrincipals()
		if err != nil {
			return err
		}
		stcheck.Equal(t, "ListServicePrincipals", list, []*identity.ServicePrincipal{ci, deploy})
		return nil
	})
	err := s.Update(t.Context(), func(tx store.Tx) error {
		return tx.InsertServicePrincipal(&identity.ServicePrincipal{Name: "ci-bot", ClientID: "fresh", SecretHash: "x"})
	})
	stcheck.WantCode(t, "InsertServicePrincipal of an existing name", err, core.ECONFLICT)
	err = s.Update(t.Context(), func(tx store.Tx) error {
		return tx.InsertServicePrincipal(&identity.ServicePrincipal{Name: "copycat", ClientID: ci.ClientID, SecretHash: "x"})
	})
	stcheck.WantCode(t, "InsertServicePrincipal of an existing client ID", err, core.ECONFLICT)

	// A new secret replaces the old one.
	reset := *ci
	reset.SecretHash, reset.SecretCreatedOn = identity.HashToken("s3"), stcheck.Now(clock.Advance(time.Hour))
	stcheck.Update(t, s, func(tx store.Tx) error { return tx.UpdateServicePrincipal(&reset) })
	stcheck.Equal(t, "GetServicePrincipal after a new secret", getServicePrincipal(t, s, "ci-bot"), &reset)
	err = s.Update(t.Context(), func(tx store.Tx) error {
		return tx.UpdateServicePrincipal(&identity.ServicePrincipal{Name: "nobody"})
	})
	stcheck.WantCode(t, "UpdateServicePrincipal of a missing one", err, core.ENOTFOUND)

	stcheck.Update(t, s, func(tx store.Tx) error { return tx.DeleteServicePrincipal("CI-BOT") })
	err = s.Update(t.Context(), func(tx store.Tx) error { return tx.DeleteServicePrincipal("ci-bot") })
	stcheck.WantCode(t, "DeleteServicePrincipal of a deleted one", err, core.ENOTFOUND)
	stcheck.View(t, s, func(tx store.Tx) error {
		_, err := tx.FindServicePrincipalByClientID(ci.ClientID)
		stcheck.WantCode(t, "FindServicePrincipalByClientID after delete", err, core.ENOTFOUND)
		return nil
	})
}
