package storetest

import (
	"testing"
	"time"

	"github.com/shoal-ml/shoal"
)

func getServicePrincipal(t *testing.T, s shoal.Store, name string) *shoal.ServicePrincipal {
	t.Helper()
	var sp *shoal.ServicePrincipal
	view(t, s, func(tx shoal.Tx) (err error) {
		sp, err = tx.GetServicePrincipal(name)
		return err
	})
	return sp
}

func testServicePrincipals(t *testing.T, s shoal.Store, clock *Clock) {
	raw := clock.Now()
	later := clock.Advance(time.Minute)
	ci := &shoal.ServicePrincipal{Name: "CI-Bot", Description: "the CI pipeline", ClientID: "7d1e0c3a-0000-4000-8000-000000000001",
		SecretHash: shoal.HashToken("s1"), CreatedOn: raw, CreatedBy: "admin"}
	deploy := &shoal.ServicePrincipal{Name: "deployer", ClientID: "7d1e0c3a-0000-4000-8000-000000000002",
		SecretHash: shoal.HashToken("s2"), CreatedOn: later, SecretCreatedOn: later}
	update(t, s, func(tx shoal.Tx) error {
		if err := tx.InsertServicePrincipal(ci); err != nil {
			return err
		}
		return tx.InsertServicePrincipal(deploy)
	})
	if ci.CreatedOn != now(raw) || ci.SecretCreatedOn != now(raw) {
		t.Errorf("InsertServicePrincipal left times %v/%v, want the stored form %v of both", ci.CreatedOn, ci.SecretCreatedOn, now(raw))
	}
	for _, name := range []string{"CI-Bot", "ci-bot"} {
		equal(t, "GetServicePrincipal("+name+")", getServicePrincipal(t, s, name), ci)
	}
	view(t, s, func(tx shoal.Tx) error {
		got, err := tx.FindServicePrincipalByClientID(deploy.ClientID)
		if err != nil {
			t.Errorf("FindServicePrincipalByClientID: %v", err)
		} else {
			equal(t, "FindServicePrincipalByClientID", got, deploy)
		}
		_, err = tx.FindServicePrincipalByClientID("unknown")
		wantCode(t, "FindServicePrincipalByClientID of an unknown ID", err, shoal.ENOTFOUND)
		_, err = tx.GetServicePrincipal("nobody")
		wantCode(t, "GetServicePrincipal of a missing one", err, shoal.ENOTFOUND)
		list, err := tx.ListServicePrincipals()
		if err != nil {
			return err
		}
		equal(t, "ListServicePrincipals", list, []*shoal.ServicePrincipal{ci, deploy})
		return nil
	})
	err := s.Update(t.Context(), func(tx shoal.Tx) error {
		return tx.InsertServicePrincipal(&shoal.ServicePrincipal{Name: "ci-bot", ClientID: "fresh", SecretHash: "x"})
	})
	wantCode(t, "InsertServicePrincipal of an existing name", err, shoal.ECONFLICT)
	err = s.Update(t.Context(), func(tx shoal.Tx) error {
		return tx.InsertServicePrincipal(&shoal.ServicePrincipal{Name: "copycat", ClientID: ci.ClientID, SecretHash: "x"})
	})
	wantCode(t, "InsertServicePrincipal of an existing client ID", err, shoal.ECONFLICT)

	// A new secret replaces the old one.
	reset := *ci
	reset.SecretHash, reset.SecretCreatedOn = shoal.HashToken("s3"), now(clock.Advance(time.Hour))
	update(t, s, func(tx shoal.Tx) error { return tx.UpdateServicePrincipal(&reset) })
	equal(t, "GetServicePrincipal after a new secret", getServicePrincipal(t, s, "ci-bot"), &reset)
	err = s.Update(t.Context(), func(tx shoal.Tx) error {
		return tx.UpdateServicePrincipal(&shoal.ServicePrincipal{Name: "nobody"})
	})
	wantCode(t, "UpdateServicePrincipal of a missing one", err, shoal.ENOTFOUND)

	update(t, s, func(tx shoal.Tx) error { return tx.DeleteServicePrincipal("CI-BOT") })
	err = s.Update(t.Context(), func(tx shoal.Tx) error { return tx.DeleteServicePrincipal("ci-bot") })
	wantCode(t, "DeleteServicePrincipal of a deleted one", err, shoal.ENOTFOUND)
	view(t, s, func(tx shoal.Tx) error {
		_, err := tx.FindServicePrincipalByClientID(ci.ClientID)
		wantCode(t, "FindServicePrincipalByClientID after delete", err, shoal.ENOTFOUND)
		return nil
	})
}
