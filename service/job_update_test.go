package service_test

import (
	"testing"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/store"
)

// A job stored with a hash of another form (before the description, tags
// and display name left it) is still the job its document describes: the
// same document with other tags updates them; another command is a
// conflict naming command.
func TestJobOfAnOlderHashIsUpdatedByItsDocument(t *testing.T) {
	h := newHarness(t, "")
	h.identityCompute("cpu", 1)
	doc := `{"name":"old","command":"true","compute":"cpu","tags":{"a":"1"}}`
	if _, _, err := h.svc.SubmitJobDocument(h.ctx, ws, "", []byte(doc)); err != nil {
		t.Fatal(err)
	}
	if err := h.svc.Store().Update(h.ctx, func(tx store.Tx) error {
		j, err := tx.GetJob(ws, "old")
		if err != nil {
			return err
		}
		j.SpecHash = "an-older-form"
		return tx.UpdateJob(j)
	}); err != nil {
		t.Fatal(err)
	}
	j, created, err := h.svc.SubmitJobDocument(h.ctx, ws, "", []byte(`{"name":"old","command":"true","compute":"cpu","tags":{"b":"2"},"description":"d"}`))
	if err != nil || created || j.Tags["b"] != "2" || j.Tags["a"] != "" || j.Description != "d" {
		t.Fatalf("the same document with other tags: %+v created %v, %v", j, created, err)
	}
	_, _, err = h.svc.SubmitJobDocument(h.ctx, ws, "", []byte(`{"name":"old","command":"false","compute":"cpu"}`))
	if core.ErrorCode(err) != core.ECONFLICT || core.ErrorField(err) != "command" {
		t.Errorf("another command: %v, want ECONFLICT on command", err)
	}
}
