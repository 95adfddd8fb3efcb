package workspacetest

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/notify"
	"github.com/shoal-ml/shoal/store"
	"github.com/shoal-ml/shoal/store/storetest/stcheck"
)

// Webhooks read back as written (names compared case-insensitively) with
// their sealed secret in a column of its own: a put without a secret
// keeps the stored one; the dropped count adds up; deleting one deletes
// its deliveries, and deleting a workspace deletes both.
func testWebhooks(t *testing.T, s store.Store, clock *stcheck.Clock) {
	hook := &notify.Webhook{Workspace: "WS", Name: "Ops-Hook", Description: "d", URL: "https://example.com/h",
		Events: []string{notify.JobFailed, notify.NodeLost}, CreatedBy: "alice", SecretHint: "ab12"}
	stcheck.Update(t, s, func(tx store.Tx) error {
		if err := tx.PutWebhook(hook, []byte("sealed-1")); err != nil {
			return err
		}
		return tx.PutWebhook(&notify.Webhook{Workspace: "ws", Name: "mail", Emails: []string{"a@example.com"}, Events: []string{notify.JobCompleted}}, []byte("sealed-2"))
	})
	if want := stcheck.Now(stcheck.Start); !hook.CreatedOn.Equal(want) {
		t.Errorf("CreatedOn = %v, want the transaction time %v", hook.CreatedOn, want)
	}
	stcheck.View(t, s, func(tx store.Tx) error {
		w, err := tx.GetWebhook("ws", "OPS-HOOK")
		if err != nil {
			return err
		}
		if w.Workspace != "WS" || w.Name != "Ops-Hook" || w.URL != hook.URL || len(w.Events) != 2 || w.Events[1] != notify.NodeLost ||
			w.CreatedBy != "alice" || w.SecretHint != "ab12" || !w.CreatedOn.Equal(hook.CreatedOn) {
			t.Errorf("GetWebhook = %+v", w)
		}
		sec, err := tx.WebhookSecret("Ws", "ops-hook")
		if err != nil {
			return err
		}
		if string(sec) != "sealed-1" {
			t.Errorf("WebhookSecret = %q, want sealed-1", sec)
		}
		list, err := tx.ListWebhooks("ws")
		if err != nil {
			return err
		}
		if len(list) != 2 || list[0].Name != "mail" || list[1].Name != "Ops-Hook" {
			t.Errorf("ListWebhooks = %+v, want mail, Ops-Hook", list)
		}
		return nil
	})
	// Replaced without a secret: the secret stays; with one: it changes.
	stcheck.Update(t, s, func(tx store.Tx) error {
		if err := tx.PutWebhook(&notify.Webhook{Workspace: "ws", Name: "ops-hook", URL: "https://example.com/2", Events: []string{notify.JobFailed}, Disabled: true}, nil); err != nil {
			return err
		}
		if err := tx.PutWebhook(&notify.Webhook{Workspace: "ws", Name: "mail", Emails: []string{"b@example.com"}, Events: []string{notify.JobCompleted}}, []byte("sealed-3")); err != nil {
			return err
		}
		if err := tx.AddWebhookDropped("ws", "OPS-hook", 3); err != nil {
			return err
		}
		return tx.AddWebhookDropped("ws", "ops-hook", 4)
	})
	stcheck.View(t, s, func(tx store.Tx) error {
		w, err := tx.GetWebhook("ws", "ops-hook")
		if err != nil {
			return err
		}
		if w.URL != "https://example.com/2" || !w.Disabled || w.Dropped != 7 {
			t.Errorf("after replacing and dropping 3+4: %+v", w)
		}
		for name, want := range map[string]string{"ops-hook": "sealed-1", "mail": "sealed-3"} {
			sec, err := tx.WebhookSecret("ws", name)
			if err != nil {
				return err
			}
			if string(sec) != want {
				t.Errorf("WebhookSecret(%s) = %q, want %q", name, sec, want)
			}
		}
		return nil
	})
	// Every workspace's, for the notifier.
	stcheck.Update(t, s, func(tx store.Tx) error {
		return tx.PutWebhook(&notify.Webhook{Workspace: "Another", Name: "a", URL: "https://example.com/a", Events: []string{notify.JobFailed}}, []byte("s"))
	})
	stcheck.View(t, s, func(tx store.Tx) error {
		all, err := tx.ListWebhooks("")
		if err != nil {
			return err
		}
		if len(all) != 3 || all[0].Workspace != "Another" {
			t.Errorf("ListWebhooks(\"\") = %+v, want Another's then WS's two", all)
		}
		return nil
	})
	for what, fn := range map[string]func(tx store.Tx) error{
		"GetWebhook":        func(tx store.Tx) error { _, err := tx.GetWebhook("ws", "none"); return err },
		"WebhookSecret":     func(tx store.Tx) error { _, err := tx.WebhookSecret("other", "ops-hook"); return err },
		"DeleteWebhook":     func(tx store.Tx) error { return tx.DeleteWebhook("ws", "none") },
		"AddWebhookDropped": func(tx store.Tx) error { return tx.AddWebhookDropped("ws", "none", 1) },
	} {
		stcheck.WantCode(t, what+" of a webhook not there", s.Update(t.Context(), fn), core.ENOTFOUND)
	}

	// Deleting a webhook deletes its deliveries, not another's.
	stcheck.Update(t, s, func(tx store.Tx) error {
		for _, d := range []*notify.Delivery{delivery("ws", "ops-hook", "e1"), delivery("ws", "mail", "e1")} {
			if _, err := tx.InsertDelivery(d); err != nil {
				return err
			}
		}
		return tx.DeleteWebhook("WS", "Ops-Hook")
	})
	stcheck.View(t, s, func(tx store.Tx) error {
		if _, err := tx.GetWebhook("ws", "ops-hook"); core.ErrorCode(err) != core.ENOTFOUND {
			t.Errorf("a deleted webhook: %v", err)
		}
		gone, err := tx.ListDeliveries("ws", "ops-hook", 0)
		if err != nil {
			return err
		}
		kept, err := tx.ListDeliveries("ws", "mail", 0)
		if err != nil {
			return err
		}
		if len(gone) != 0 || len(kept) != 1 {
			t.Errorf("after deleting ops-hook: its deliveries %+v (want none), mail's %+v (want one)", gone, kept)
		}
		return nil
	})

	// A deleted workspace's webhooks and deliveries go with it.
	stcheck.Update(t, s, func(tx store.Tx) error {
		if err := tx.InsertWorkspace(&core.Workspace{Name: "gone-w", Location: "local", CreatedOn: tx.Now()}); err != nil {
			return err
		}
		if err := tx.PutWebhook(&notify.Webhook{Workspace: "gone-w", Name: "h", URL: "https://example.com", Events: []string{notify.JobFailed}}, []byte("s")); err != nil {
			return err
		}
		_, err := tx.InsertDelivery(delivery("gone-w", "h", "e1"))
		return err
	})
	stcheck.Update(t, s, func(tx store.Tx) error { return tx.DeleteWorkspace("gone-w") })
	stcheck.View(t, s, func(tx store.Tx) error {
		hooks, err := tx.ListWebhooks("gone-w")
		if err != nil {
			return err
		}
		ds, err := tx.ListDeliveries("gone-w", "", 0)
		if err != nil {
			return err
		}
		if len(hooks)+len(ds) != 0 {
			t.Errorf("a deleted workspace's webhooks %+v and deliveries %+v remain", hooks, ds)
		}
		return nil
	})
}

// delivery is a webhook's delivery of event key to https://example.com/<webhook>.
func delivery(ws, webhook, key string) *notify.Delivery {
	return &notify.Delivery{Workspace: ws, Webhook: webhook, Channel: notify.ChannelWebhook, Target: "https://example.com/" + webhook,
		Event: notify.JobFailed, Key: key, Payload: json.RawMessage(`{"id":"` + key + `","event":"job_failed"}`)}
}

// Deliveries are inserted once per receiver and key; due ones come
// oldest first, at most limit; an update records a try's outcome and
// nothing else; lists are newest first; pending ones are counted per
// receiver; prune removes only finished ones updated long enough ago.
func testDeliveries(t *testing.T, s store.Store, clock *stcheck.Clock) {
	first := delivery("WS", "Hook", "job:j1:failed")
	stcheck.Update(t, s, func(tx store.Tx) error {
		ok, err := tx.InsertDelivery(first)
		if err != nil || !ok {
			t.Errorf("first InsertDelivery = %v, %v, want inserted", ok, err)
		}
		return err
	})
	if first.ID == 0 || first.Status != notify.DeliveryPending || !first.NextAttempt.Equal(stcheck.Now(stcheck.Start)) || !first.CreatedOn.Equal(stcheck.Now(stcheck.Start)) {
		t.Errorf("inserted: %+v, want an ID, pending, due and created now", first)
	}
	// Again, in any spelling of the workspace and webhook: not inserted.
	again := delivery("ws", "HOOK", "job:j1:failed")
	again.Target = first.Target
	stcheck.Update(t, s, func(tx store.Tx) error {
		ok, err := tx.InsertDelivery(again)
		if ok || err != nil {
			t.Errorf("InsertDelivery of the same key again = %v, %v, want not inserted and no error", ok, err)
		}
		return err
	})
	if again.ID != 0 {
		t.Errorf("a delivery not inserted got ID %d", again.ID)
	}
	// The same key to another receiver (a mail to a target) is another delivery.
	mail := &notify.Delivery{Workspace: "ws", Channel: notify.ChannelEmail, Target: "a@example.com", Event: notify.JobFailed, Key: "job:j1:failed", Payload: json.RawMessage(`{}`)}
	clock.Advance(time.Second)
	later, future := delivery("ws", "hook", "job:j2:failed"), delivery("ws", "hook", "job:j3:failed")
	future.NextAttempt = stcheck.Start.Add(time.Hour)
	stcheck.Update(t, s, func(tx store.Tx) error {
		for _, d := range []*notify.Delivery{mail, later, future} {
			if ok, err := tx.InsertDelivery(d); err != nil || !ok {
				t.Errorf("InsertDelivery(%s to %q) = %v, %v", d.Key, d.Target, ok, err)
			}
		}
		return nil
	})
	stcheck.View(t, s, func(tx store.Tx) error {
		due, err := tx.DueDeliveries(clock.Now(), 10)
		if err != nil {
			return err
		}
		if len(due) != 3 || due[0].ID != first.ID || due[1].ID != mail.ID || due[2].ID != later.ID {
			t.Errorf("DueDeliveries = %+v, want first, mail, later (future is not due)", due)
		} else if string(due[0].Payload) != string(first.Payload) || due[0].Target != first.Target || due[0].Workspace != "WS" || due[0].Webhook != "Hook" {
			t.Errorf("a due delivery reads back as %+v, want %+v", due[0], first)
		}
		two, err := tx.DueDeliveries(clock.Now(), 2)
		if err != nil {
			return err
		}
		if len(two) != 2 {
			t.Errorf("DueDeliveries(limit 2) = %d", len(two))
		}
		for who, want := range map[string]int{"hook": 3, "": 1, "other": 0} {
			n, err := tx.CountPendingDeliveries("ws", who)
			if err != nil {
				return err
			}
			if n != want {
				t.Errorf("CountPendingDeliveries(%q) = %d, want %d", who, n, want)
			}
		}
		return nil
	})

	// A failed try is retried later; a delivered one is done.
	clock.Advance(time.Minute)
	delivered := clock.Now()
	stcheck.Update(t, s, func(tx store.Tx) error {
		if err := tx.UpdateDelivery(&notify.Delivery{ID: first.ID, Status: notify.DeliveryPending, Attempts: 1,
			NextAttempt: delivered.Add(10 * time.Second), LastError: "500 Internal Server Error: boom", StatusCode: 500,
			Payload: json.RawMessage(`{"changed":true}`), Target: "https://evil.example"}); err != nil {
			return err
		}
		return tx.UpdateDelivery(&notify.Delivery{ID: later.ID, Status: notify.DeliveryDelivered, Attempts: 1, Delivered: &delivered, StatusCode: 204})
	})
	stcheck.View(t, s, func(tx store.Tx) error {
		due, err := tx.DueDeliveries(clock.Now(), 10)
		if err != nil {
			return err
		}
		if len(due) != 1 || due[0].ID != mail.ID {
			t.Errorf("DueDeliveries after a retry and a delivery = %+v, want mail alone", due)
		}
		due, err = tx.DueDeliveries(clock.Now().Add(10*time.Second), 10)
		if err != nil {
			return err
		}
		if len(due) != 2 || due[0].ID != mail.ID || due[1].ID != first.ID {
			t.Errorf("DueDeliveries 10 s later = %+v, want mail (due longest) then first (due at its retry)", due)
		}
		list, err := tx.ListDeliveries("ws", "hook", 0)
		if err != nil {
			return err
		}
		if len(list) != 3 || list[0].ID != future.ID || list[1].ID != later.ID || list[2].ID != first.ID {
			t.Fatalf("ListDeliveries = %+v, want future, later, first (newest first)", list)
		}
		f := list[2]
		if f.Attempts != 1 || f.LastError != "500 Internal Server Error: boom" || f.StatusCode != 500 || !f.UpdatedOn.Equal(stcheck.Now(delivered)) ||
			!f.NextAttempt.Equal(stcheck.Now(delivered.Add(10*time.Second))) || string(f.Payload) != string(first.Payload) || f.Target != first.Target {
			t.Errorf("after a failed try: %+v (the payload and target stay as inserted)", f)
		}
		if l := list[1]; l.Status != notify.DeliveryDelivered || l.Delivered == nil || !l.Delivered.Equal(stcheck.Now(delivered)) {
			t.Errorf("after delivery: %+v", l)
		}
		one, err := tx.ListDeliveries("WS", "", 1)
		if err != nil {
			return err
		}
		if len(one) != 1 || one[0].ID != future.ID {
			t.Errorf("ListDeliveries(all, limit 1) = %+v, want the newest", one)
		}
		return nil
	})
	err := s.Update(t.Context(), func(tx store.Tx) error {
		return tx.UpdateDelivery(&notify.Delivery{ID: 987654, Status: notify.DeliveryFailed})
	})
	stcheck.WantCode(t, "UpdateDelivery of a delivery not there", err, core.ENOTFOUND)

	// Prune: finished ones updated before the cut, never pending ones.
	stcheck.Update(t, s, func(tx store.Tx) error {
		return tx.UpdateDelivery(&notify.Delivery{ID: mail.ID, Status: notify.DeliveryFailed, Attempts: 12, LastError: "550 no such user"})
	})
	clock.Advance(7 * 24 * time.Hour)
	stcheck.Update(t, s, func(tx store.Tx) error {
		n, err := tx.PruneDeliveries(delivered.Add(time.Second))
		if n != 2 {
			t.Errorf("PruneDeliveries = %d, want 2 (the delivered and the failed)", n)
		}
		return err
	})
	stcheck.View(t, s, func(tx store.Tx) error {
		list, err := tx.ListDeliveries("ws", "", 0)
		if err != nil {
			return err
		}
		if len(list) != 2 || list[0].ID != future.ID || list[1].ID != first.ID {
			t.Errorf("after pruning: %+v, want the two pending", list)
		}
		return nil
	})
}

// A cursor reads 0 until set, then what was set last; cursors are
// independent by name.
func testNotifyCursors(t *testing.T, s store.Store, clock *stcheck.Clock) {
	stcheck.View(t, s, func(tx store.Tx) error {
		v, err := tx.NotifyCursor("notify")
		if v != 0 || err != nil {
			t.Errorf("a cursor never set = %d, %v, want 0", v, err)
		}
		return nil
	})
	stcheck.Update(t, s, func(tx store.Tx) error {
		if err := tx.SetNotifyCursor("notify", 42); err != nil {
			return err
		}
		if err := tx.SetNotifyCursor("notify", 1042); err != nil {
			return err
		}
		return tx.SetNotifyCursor("other", 7)
	})
	stcheck.View(t, s, func(tx store.Tx) error {
		for name, want := range map[string]int64{"notify": 1042, "other": 7} {
			v, err := tx.NotifyCursor(name)
			if err != nil {
				return err
			}
			if v != want {
				t.Errorf("NotifyCursor(%s) = %d, want %d", name, v, want)
			}
		}
		return nil
	})
	// A read-only transaction cannot move it.
	err := s.View(t.Context(), func(tx store.Tx) error { return tx.SetNotifyCursor("notify", 1) })
	if err == nil {
		t.Error("SetNotifyCursor in a View succeeded")
	}
}

// Trimming keeps each receiver's newest finished deliveries, never a
// pending one, and counts receivers apart (a webhook, another webhook, a
// mail target).
func testTrimDeliveries(t *testing.T, s store.Store, clock *stcheck.Clock) {
	var hook, other []*notify.Delivery
	stcheck.Update(t, s, func(tx store.Tx) error {
		for i := range 5 {
			d, o := delivery("ws", "hook", fmt.Sprintf("e%d", i)), delivery("ws", "other", fmt.Sprintf("e%d", i))
			for _, x := range []*notify.Delivery{d, o} {
				if _, err := tx.InsertDelivery(x); err != nil {
					return err
				}
			}
			hook, other = append(hook, d), append(other, o)
		}
		return nil
	})
	stcheck.Update(t, s, func(tx store.Tx) error {
		// hook: four finished (e0..e3), e4 pending; other: e0 finished.
		for i, d := range hook[:4] {
			d.Status = []string{notify.DeliveryDelivered, notify.DeliveryFailed, notify.DeliveryDropped, notify.DeliveryDelivered}[i]
			if err := tx.UpdateDelivery(d); err != nil {
				return err
			}
		}
		other[0].Status = notify.DeliveryDelivered
		return tx.UpdateDelivery(other[0])
	})
	stcheck.Update(t, s, func(tx store.Tx) error {
		n, err := tx.TrimDeliveries(2)
		if n != 2 {
			t.Errorf("TrimDeliveries(2) = %d, want 2 (hook's two oldest finished)", n)
		}
		return err
	})
	stcheck.View(t, s, func(tx store.Tx) error {
		for who, want := range map[string][]int64{"hook": {hook[4].ID, hook[3].ID, hook[2].ID}, "other": {other[4].ID, other[3].ID, other[2].ID, other[1].ID, other[0].ID}} {
			list, err := tx.ListDeliveries("ws", who, 0)
			if err != nil {
				return err
			}
			var got []int64
			for _, d := range list {
				got = append(got, d.ID)
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("%s after trimming: %v, want %v", who, got, want)
			}
		}
		return nil
	})
}
