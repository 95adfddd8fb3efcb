package storetest

import (
	"testing"
	"time"

	"github.com/shoal-ml/shoal"
)

func testEvents(t *testing.T, s shoal.Store, clock *Clock) {
	var empty []*shoal.Event
	view(t, s, func(tx shoal.Tx) (err error) {
		empty, err = tx.ListEvents(shoal.EventFilter{})
		return err
	})
	if len(empty) != 0 {
		t.Errorf("ListEvents of an empty store = %d events", len(empty))
	}

	t1 := now(clock.Now())
	events := []*shoal.Event{
		{Time: t1, Workspace: "Prod", ResourceType: shoal.ResourceCompute, ResourceName: "GPU-Cluster", Kind: shoal.EventCreated, Actor: "alice", Reason: "Standard_NC6s_v3 ×4 — \"quoted\""},
		{Time: t1, Workspace: "Prod", ResourceType: shoal.ResourceCompute, ResourceName: "cpu", Kind: shoal.EventCreated, Actor: "alice"},
		{Time: t1, Workspace: "staging", ResourceType: shoal.ResourceCompute, ResourceName: "gpu-cluster", Kind: shoal.EventCreated, Actor: "bob"},
	}
	update(t, s, func(tx shoal.Tx) error {
		for _, e := range events {
			if err := tx.AppendEvent(e); err != nil {
				return err
			}
		}
		return nil
	})
	clock.Advance(time.Minute)
	more := []*shoal.Event{
		{Workspace: "Prod", ResourceType: shoal.ResourceJob, ResourceName: "gpu-cluster", Kind: shoal.EventFailed, Actor: "system", Reason: "job, not compute"},
		{Workspace: "prod", ResourceType: shoal.ResourceCompute, ResourceName: "gpu-cluster", Kind: shoal.EventScaled, Actor: "system", Reason: "0→2 nodes"},
		{Workspace: "Prod", ResourceType: shoal.ResourceCompute, ResourceName: "GPU-CLUSTER", Kind: shoal.EventDeleting, Actor: "alice"},
	}
	var t2 time.Time
	update(t, s, func(tx shoal.Tx) error {
		t2 = tx.Now()
		for _, e := range more {
			// Time left zero: the store may fill in tx.Now(); the suite
			// sets it as the service does.
			e.Time = tx.Now()
			if err := tx.AppendEvent(e); err != nil {
				return err
			}
		}
		return nil
	})
	all := append(append([]*shoal.Event{}, events...), more...)
	for i, e := range all {
		if e.ID <= 0 || (i > 0 && e.ID <= all[i-1].ID) {
			t.Errorf("event %d has ID %d after %d; IDs must be positive and increasing", i, e.ID, all[max(i-1, 0)].ID)
		}
	}
	if !more[0].Time.Equal(t2) {
		t.Errorf("event time = %v, want %v", more[0].Time, t2)
	}

	list := func(what string, filter shoal.EventFilter, want ...*shoal.Event) {
		t.Helper()
		var got []*shoal.Event
		view(t, s, func(tx shoal.Tx) (err error) {
			got, err = tx.ListEvents(filter)
			return err
		})
		if len(got) == 0 && len(want) == 0 {
			return
		}
		equal(t, "ListEvents "+what, got, want)
	}
	gpuProd := []*shoal.Event{all[0], all[4], all[5]}
	list("all", shoal.EventFilter{}, all...)
	list("by workspace", shoal.EventFilter{Workspace: "prod"}, all[0], all[1], all[3], all[4], all[5])
	list("by type", shoal.EventFilter{ResourceType: shoal.ResourceJob}, all[3])
	list("by name", shoal.EventFilter{ResourceName: "gpu-cluster"}, all[0], all[2], all[3], all[4], all[5])
	list("by resource", shoal.EventFilter{Workspace: "PROD", ResourceType: shoal.ResourceCompute, ResourceName: "Gpu-Cluster"}, gpuProd...)
	list("after id", shoal.EventFilter{AfterID: all[2].ID}, all[3:]...)
	list("after the last id", shoal.EventFilter{AfterID: all[5].ID})
	list("with limit", shoal.EventFilter{Limit: 2}, all[0], all[1])
	list("after id with limit", shoal.EventFilter{AfterID: all[0].ID, Limit: 3}, all[1], all[2], all[3])
	list("resource after id with limit", shoal.EventFilter{Workspace: "prod", ResourceType: shoal.ResourceCompute, ResourceName: "gpu-cluster", AfterID: all[0].ID, Limit: 1}, all[4])
	list("no match", shoal.EventFilter{Workspace: "nope"})
}
