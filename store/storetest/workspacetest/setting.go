package workspacetest

import (
	"testing"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/store"
	"github.com/shoal-ml/shoal/store/storetest/stcheck"
)

func testSettings(t *testing.T, s store.Store, clock *stcheck.Clock) {
	get := func(key string) (string, error) {
		var v string
		err := s.View(t.Context(), func(tx store.Tx) (err error) {
			v, err = tx.GetSetting(key)
			return err
		})
		return v, err
	}
	_, err := get("missing")
	stcheck.WantCode(t, "GetSetting of a missing key", err, core.ENOTFOUND)

	stcheck.Update(t, s, func(tx store.Tx) error {
		if err := tx.PutSetting("bootstrap.done", "true"); err != nil {
			return err
		}
		if err := tx.PutSetting("empty", ""); err != nil {
			return err
		}
		// Overwrite within the same transaction.
		return tx.PutSetting("bootstrap.done", "yes")
	})
	for key, want := range map[string]string{"bootstrap.done": "yes", "empty": ""} {
		if v, err := get(key); err != nil || v != want {
			t.Errorf("GetSetting(%q) = %q, %v; want %q", key, v, err, want)
		}
	}

	stcheck.Update(t, s, func(tx store.Tx) error { return tx.PutSetting("bootstrap.done", "multi\nline ✓") })
	if v, err := get("bootstrap.done"); err != nil || v != "multi\nline ✓" {
		t.Errorf("GetSetting after overwrite = %q, %v", v, err)
	}
	if v, err := get("empty"); err != nil || v != "" {
		t.Errorf("GetSetting of another key after overwrite = %q, %v", v, err)
	}
}
