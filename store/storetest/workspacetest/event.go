package workspacetest

import (
	"testing"
	"time"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/store"
	"github.com/shoal-ml/shoal/store/storetest/stcheck"
)

func testEvents(t *testing.T, s store.Store, clock *stcheck.Clock) {
	var empty []*core.Event
	stcheck.View(t, s, func(tx store.Tx) (err error) {
		empty, err = tx.ListEvents(core.EventFilter{})
		return err
	})
	if len(empty) != 0 {
		t.Errorf("ListEvents of an empty store = %d events", len(empty))
	}

	t1 := stcheck.Now(clock.Now())
	events := []*core.Event{
		{Time: t1, Workspace: "Prod", ResourceType: core.ResourceCompute, ResourceName: "GPU-Cluster", Kind: core.EventCreated, Actor: "alice", Reason: "Standard_NC6s_v3 ×4 — \"quoted\""},
		{Time: t1, Workspace: "Prod", ResourceType: core.ResourceCompute, ResourceName: "cpu", Kind: core.EventCreated, Actor: "alice"},
		{Time: t1, Workspace: "staging", ResourceType: core.ResourceCompute, ResourceName: "gpu-cluster", Kind: core.EventCreated, Actor: "bob"},
	}
	stcheck.Update(t, s, func(tx store.Tx) error {
		for _, e := range events {
			if err := tx.AppendEvent(e); err != nil {
				return err
			}
		}
		return nil
	})
	clock.Advance(time.Minute)
	more := []*core.Event{
		{Workspace: "Prod", ResourceType: core.ResourceJob, ResourceName: "gpu-cluster", Kind: core.EventFailed, Actor: "system", Reason: "job, not compute"},
		{Workspace: "prod", ResourceType: core.ResourceCompute, ResourceName: "gpu-cluster", Kind: core.EventScaled, Actor: "system", Reason: "0→2 nodes"},
		{Workspace: "Prod", ResourceType: core.ResourceCompute, ResourceName: "GPU-CLUSTER", Kind: core.EventDeleting, Actor: "alice"},
	}
	var t2 time.Time
	stcheck.Update(t, s, func(tx store.Tx) error {
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
	all := append(append([]*core.Event{}, events...), more...)
	for i, e := range all {
		if e.ID <= 0 || (i > 0 && e.ID <= all[i-1].ID) {
			t.Errorf("event %d has ID %d after %d; IDs must be positive and increasing", i, e.ID, all[max(i-1, 0)].ID)
		}
	}
	if !more[0].Time.Equal(t2) {
		t.Errorf("event time = %v, want %v", more[0].Time, t2)
	}

	list := func(what string, filter core.EventFilter, want ...*core.Event) {
		t.Helper()
		var got []*core.Event
		stcheck.View(t, s, func(tx store.Tx) (err error) {
			got, err = tx.ListEvents(filter)
			return err
		})
		if len(got) == 0 && len(want) == 0 {
			return
		}
		stcheck.Equal(t, "ListEvents "+what, got, want)
	}
	gpuProd := []*core.Event{all[0], all[4], all[5]}
	list("all", core.EventFilter{}, all...)
	list("by workspace", core.EventFilter{Workspace: "prod"}, all[0], all[1], all[3], all[4], all[5])
	list("by type", core.EventFilter{ResourceType: core.ResourceJob}, all[3])
	list("by name", core.EventFilter{ResourceName: "gpu-cluster"}, all[0], all[2], all[3], all[4], all[5])
	list("by resource", core.EventFilter{Workspace: "PROD", ResourceType: core.ResourceCompute, ResourceName: "Gpu-Cluster"}, gpuProd...)
	list("after id", core.EventFilter{AfterID: all[2].ID}, all[3:]...)
	list("after the last id", core.EventFilter{AfterID: all[5].ID})
	list("with limit", core.EventFilter{Limit: 2}, all[0], all[1])
	list("after id with limit", core.EventFilter{AfterID: all[0].ID, Limit: 3}, all[1], all[2], all[3])
	list("resource after id with limit", core.EventFilter{Workspace: "prod", ResourceType: core.ResourceCompute, ResourceName: "gpu-cluster", AfterID: all[0].ID, Limit: 1}, all[4])
	list("no match", core.EventFilter{Workspace: "nope"})
	list("since a time", core.EventFilter{Since: t2}, all[3:]...)
	list("resource since a time", core.EventFilter{Workspace: "prod", ResourceType: core.ResourceCompute, ResourceName: "gpu-cluster", Since: t2}, all[4], all[5])
	list("since a time in between", core.EventFilter{Since: t1.Add(time.Second)}, all[3:]...)
}
