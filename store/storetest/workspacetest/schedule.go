package workspacetest

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/schedule"
	"github.com/shoal-ml/shoal/store"
	"github.com/shoal-ml/shoal/store/storetest/stcheck"
)

// Job schedules read back as written, status included, per workspace
// (names compared case-insensitively); putting a name again replaces it;
// the next fire time is never stored; a deleted workspace's schedules go
// with it; what is not there is ENOTFOUND.
func testJobSchedules(t *testing.T, s store.Store, clock *stcheck.Clock) {
	fired := time.Date(2026, 1, 2, 3, 4, 0, 0, time.UTC)
	next := fired.Add(time.Hour)
	sc := &schedule.JobSchedule{Workspace: "WS", Name: "Nightly", Description: "d", Tags: map[string]string{"a": "b"},
		Trigger:   &schedule.Trigger{Type: schedule.Cron, Expression: "0 2 * * *", TimeZone: "UTC"},
		CreateJob: &schedule.CreateJob{Job: json.RawMessage(`{"type":"command","command":"echo"}`), Type: "command"},
		IsEnabled: true, CreatedBy: "alice", UpdatedBy: "bob",
		Status: schedule.ScheduleStatus{LastFireTime: &fired, LastJob: "nightly-20260102t0304", Fires: 3, LastMessage: "fired", NextFireTime: &next}}
	stcheck.Update(t, s, func(tx store.Tx) error {
		if err := tx.PutJobSchedule(sc); err != nil {
			return err
		}
		return tx.PutJobSchedule(&schedule.JobSchedule{Workspace: "WS", Name: "hourly", Trigger: &schedule.Trigger{Type: schedule.Recurrence, Frequency: "hour", Interval: 1}})
	})
	if want := stcheck.Now(stcheck.Start); !sc.CreatedOn.Equal(want) {
		t.Errorf("CreatedOn = %v, want the transaction time %v", sc.CreatedOn, want)
	}
	stcheck.View(t, s, func(tx store.Tx) error {
		g, err := tx.GetJobSchedule("ws", "NIGHTLY")
		if err != nil {
			return err
		}
		if g.Workspace != "WS" || g.Name != "Nightly" || g.Tags["a"] != "b" || g.Trigger.Expression != "0 2 * * *" || !g.IsEnabled ||
			g.CreatedBy != "alice" || g.UpdatedBy != "bob" || string(g.CreateJob.Job) != `{"type":"command","command":"echo"}` ||
			g.Status.LastFireTime == nil || !g.Status.LastFireTime.Equal(fired) || g.Status.Fires != 3 || g.Status.LastJob != "nightly-20260102t0304" {
			t.Errorf("GetJobSchedule = %+v", g)
		}
		if g.Status.NextFireTime != nil {
			t.Errorf("NextFireTime was stored (%v): it is computed on read", g.Status.NextFireTime)
		}
		list, err := tx.ListJobSchedules("ws")
		if err != nil {
			return err
		}
		if len(list) != 2 || list[0].Name != "hourly" || list[1].Name != "Nightly" {
			t.Errorf("ListJobSchedules = %+v, want hourly, Nightly", list)
		}
		return nil
	})
	// Replaced, spelled differently; another workspace's appear in the
	// list of all.
	stcheck.Update(t, s, func(tx store.Tx) error {
		if err := tx.InsertWorkspace(&core.Workspace{Name: "gone-s", Location: "local", CreatedOn: tx.Now()}); err != nil {
			return err
		}
		if err := tx.PutJobSchedule(&schedule.JobSchedule{Workspace: "gone-s", Name: "x", Trigger: &schedule.Trigger{Type: schedule.Cron, Expression: "* * * * *"}}); err != nil {
			return err
		}
		return tx.PutJobSchedule(&schedule.JobSchedule{Workspace: "ws", Name: "NIGHTLY", Description: "new", Trigger: sc.Trigger})
	})
	stcheck.View(t, s, func(tx store.Tx) error {
		list, err := tx.ListJobSchedules("")
		if err != nil {
			return err
		}
		var names []string
		for _, x := range list {
			names = append(names, x.Workspace+"/"+x.Name)
		}
		if len(list) != 3 || names[0] != "gone-s/x" || names[2] != "ws/NIGHTLY" || list[2].Description != "new" || list[2].IsEnabled {
			t.Errorf("ListJobSchedules(\"\") = %v (%+v)", names, list)
		}
		return nil
	})
	stcheck.Update(t, s, func(tx store.Tx) error { return tx.DeleteJobSchedule("WS", "nightly") })
	err := s.View(t.Context(), func(tx store.Tx) error { _, err := tx.GetJobSchedule("ws", "nightly"); return err })
	stcheck.WantCode(t, "GetJobSchedule of a deleted schedule", err, core.ENOTFOUND)
	err = s.Update(t.Context(), func(tx store.Tx) error { return tx.DeleteJobSchedule("ws", "nightly") })
	stcheck.WantCode(t, "DeleteJobSchedule of a schedule not there", err, core.ENOTFOUND)
	stcheck.Update(t, s, func(tx store.Tx) error { return tx.DeleteWorkspace("gone-s") })
	stcheck.View(t, s, func(tx store.Tx) error {
		list, err := tx.ListJobSchedules("gone-s")
		if err != nil {
			return err
		}
		if len(list) != 0 {
			t.Errorf("a deleted workspace's schedules remain: %+v", list)
		}
		return nil
	})
}
