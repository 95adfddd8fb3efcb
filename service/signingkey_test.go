package service_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/identity"
	"github.com/shoal-ml/shoal/internal/sealing"
	"github.com/shoal-ml/shoal/internal/workload"
	"github.com/shoal-ml/shoal/store"
)

// rawStoreHolds reports whether the harness's database files (the WAL
// included) contain s.
func (h *harness) rawStoreHolds(s string) bool {
	h.t.Helper()
	files, _ := filepath.Glob(h.store.Path() + "*")
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			h.t.Fatal(err)
		}
		if bytes.Contains(b, []byte(s)) {
			return true
		}
	}
	return false
}

// The workload signing keys are stored encrypted with the secrets key,
// which lives outside the database; a server without that key cannot sign.
func TestWorkloadSigningKeysAreEncryptedAtRest(t *testing.T) {
	h := newHarness(t, "")
	h.withWorkload()
	if err := h.svc.Workload().Rotate(h.ctx); err != nil {
		t.Fatal(err)
	}
	var keys []*identity.SigningKey
	if err := h.store.View(h.ctx, func(tx store.Tx) (err error) { keys, err = tx.ListSigningKeys(); return err }); err != nil {
		t.Fatal(err)
	}
	if len(keys) != 1 || strings.Contains(keys[0].PrivatePEM, "PRIVATE KEY") || !sealing.IsSealed(keys[0].PrivatePEM) {
		t.Fatalf("the stored signing key is not sealed: %.60q", keys[0].PrivatePEM)
	}
	if h.rawStoreHolds("PRIVATE KEY") {
		t.Fatal("the database files hold a private key in the clear")
	}
	if _, _, err := h.svc.Workload().Mint(h.ctx, workload.Claims{Subject: "identity:x", Audience: "shoal"}, 0); err != nil {
		t.Fatalf("signing with the sealed key: %v", err)
	}

	// Another server over the same store, with another secrets key or
	// none: it cannot sign, and says why.
	other, err := sealing.New(bytes.Repeat([]byte{7}, sealing.KeySize))
	if err != nil {
		t.Fatal(err)
	}
	for name, key := range map[string]*sealing.Key{"another secrets key": other, "no secrets key": nil} {
		h.bootWith(key)
		h.withWorkload()
		_, _, err := h.svc.Workload().Mint(h.ctx, workload.Claims{Subject: "identity:x", Audience: "shoal"}, 0)
		if err == nil || !strings.Contains(core.ErrorMessage(err), "secrets_key_file") {
			t.Errorf("%s: signing gave %v, want an error naming secrets_key_file", name, err)
		}
	}
}

// Keys stored in the clear by an older server are sealed on start.
func TestClearSigningKeysAreSealedOnStart(t *testing.T) {
	h := newHarness(t, "")
	h.bootWith(nil)
	// An older server: its keys went to the store as they are.
	h.svc.SetWorkload(workload.New(workload.Config{Keys: clearKeys{h}, Clock: h.clock, Issuer: "http://shoal.test"}))
	if err := h.svc.Workload().Rotate(h.ctx); err != nil {
		t.Fatal(err)
	}
	tok, _, err := h.svc.Workload().Mint(h.ctx, workload.Claims{Subject: "identity:x", Audience: "shoal"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !h.rawStoreHolds("PRIVATE KEY") {
		t.Fatal("the test's older server did not store its key in the clear")
	}
	// ...and its clusters' admin passwords too.
	const password = "Sup3r-Secret-Pass!"
	minN, maxN, idle, on := 0, 1, 120, true
	if _, _, err := h.svc.CreateOrApplyCompute(h.ctx, ws, &compute.ComputeSpec{Name: "ssh", Type: "amlcompute", Size: "Standard_DS3_v2",
		MinInstances: &minN, MaxInstances: &maxN, IdleTimeBeforeScaleDown: &idle, SSHPublicAccessEnabled: &on,
		SSHSettings: &compute.SSHSettings{AdminUsername: "azureuser", AdminPassword: password}}, ""); err != nil {
		t.Fatal(err)
	}
	if err := h.store.Update(h.ctx, func(tx store.Tx) error {
		c, err := tx.GetCompute(ws, "ssh")
		if err != nil {
			return err
		}
		c.SSHSettings.AdminPassword, c.SSHSettings.AdminPasswordHash = password, ""
		return tx.UpdateCompute(c)
	}); err != nil {
		t.Fatal(err)
	}
	h.bootWith(h.secretsKey)
	if err := h.svc.SealStoredSecrets(h.ctx); err != nil {
		t.Fatal(err)
	}
	h.withWorkload()
	var keys []*identity.SigningKey
	if err := h.store.View(h.ctx, func(tx store.Tx) (err error) { keys, err = tx.ListSigningKeys(); return err }); err != nil {
		t.Fatal(err)
	}
	if len(keys) != 1 || !sealing.IsSealed(keys[0].PrivatePEM) {
		t.Fatalf("the older server's key was not sealed: %.60q", keys[0].PrivatePEM)
	}
	if _, err := h.svc.Workload().Verify(h.ctx, tok, []string{"shoal"}); err != nil {
		t.Fatalf("a token signed before the key was sealed: %v", err)
	}
	var c *compute.Compute
	if err := h.store.View(h.ctx, func(tx store.Tx) (err error) { c, err = tx.GetCompute(ws, "ssh"); return err }); err != nil {
		t.Fatal(err)
	}
	if s := c.SSHSettings; s.AdminPassword != "" || !s.PasswordMatches(password) {
		t.Fatalf("the older server's clear admin password was not hashed: %+v", s)
	}
}

// clearKeys is workload.KeyStore as older servers kept keys: in the clear.
type clearKeys struct{ h *harness }

func (k clearKeys) ListKeys(ctx context.Context) (out []*identity.SigningKey, err error) {
	err = k.h.store.View(ctx, func(tx store.Tx) error { out, err = tx.ListSigningKeys(); return err })
	return out, err
}

func (k clearKeys) InsertKey(ctx context.Context, key *identity.SigningKey) error {
	return k.h.store.Update(ctx, func(tx store.Tx) error { return tx.InsertSigningKey(key) })
}

func (k clearKeys) UpdateKey(ctx context.Context, key *identity.SigningKey) error {
	return k.h.store.Update(ctx, func(tx store.Tx) error { return tx.UpdateSigningKey(key) })
}
