package notify_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	ctlnotify "github.com/shoal-ml/shoal/control/notify"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/notify"
	"github.com/shoal-ml/shoal/internal/teststore"
	"github.com/shoal-ml/shoal/store"
	"github.com/shoal-ml/shoal/store/sqlite"
)

type fixture struct {
	t   *testing.T
	db  *sqlite.DB
	n   *ctlnotify.Notifier
	now time.Time
}

func newFixture(t *testing.T, cfg ctlnotify.Config) *fixture {
	db, clk := teststore.Open(t)
	cfg.Store = db
	return &fixture{t: t, db: db, n: ctlnotify.New(cfg), now: clk.Now()}
}

func (f *fixture) update(fn func(tx store.Tx) error) {
	f.t.Helper()
	if err := f.db.Update(context.Background(), fn); err != nil {
		f.t.Fatal(err)
	}
}

func (f *fixture) hook(name, url string, events ...string) {
	f.update(func(tx store.Tx) error {
		return tx.PutWebhook(&notify.Webhook{Workspace: "ws", Name: name, URL: url, Events: events}, []byte("sealed"))
	})
}

// ended stores a job in status with setting and records kind on it.
func (f *fixture) ended(name, status, kind string, s *notify.NotificationSetting) {
	f.update(func(tx store.Tx) error {
		j := &job.Job{Workspace: "ws", Status: status, Error: "exit code 3", CreatedOn: tx.Now()}
		j.Name, j.Compute, j.NotificationSetting = name, "cpu", s
		if err := tx.InsertJob(j); err != nil {
			return err
		}
		return tx.AppendEvent(&core.Event{Time: tx.Now(), Workspace: "ws", ResourceType: core.ResourceJob, ResourceName: name, Kind: kind, Reason: "rank 0 exited with 3"})
	})
}

func (f *fixture) run() int {
	f.t.Helper()
	n, err := f.n.RunOnce(context.Background(), f.now)
	if err != nil {
		f.t.Fatal(err)
	}
	return n
}

func (f *fixture) deliveries(webhook string) []*notify.Delivery {
	f.t.Helper()
	var out []*notify.Delivery
	f.db.View(context.Background(), func(tx store.Tx) (err error) {
		out, err = tx.ListDeliveries("ws", webhook, 0)
		return err
	})
	return out
}

// A failed job is one delivery to each webhook subscribed to job_failed
// (not to others), and one mail to its notification_setting; the
// payload says what failed and links the studio.
func TestJobFailedQueued(t *testing.T) {
	f := newFixture(t, ctlnotify.Config{PublicURL: "https://shoal.example/"})
	f.hook("ops", "https://hooks.example/ops", notify.JobFailed, notify.JobQueuedTooLong)
	f.hook("done", "https://hooks.example/done", notify.JobCompleted)
	f.ended("train-1", job.JobFailed, core.EventJobFailed, &notify.NotificationSetting{Emails: []string{"a@example.com", "b@example.com"}, EmailOn: []string{notify.JobFailed}})
	if n := f.run(); n != 2 {
		t.Fatalf("queued %d, want 2", n)
	}
	ops := f.deliveries("ops")
	if len(ops) != 1 || ops[0].Channel != notify.ChannelWebhook || ops[0].Target != "https://hooks.example/ops" || ops[0].Status != notify.DeliveryPending {
		t.Fatalf("ops: %+v", ops)
	}
	var p notify.Payload
	json.Unmarshal(ops[0].Payload, &p)
	if p.Event != notify.JobFailed || p.Summary != "Job train-1 failed" || p.Reason != "rank 0 exited with 3" || p.Details["error"] != "exit code 3" ||
		p.Details["compute"] != "cpu" || p.URL != "https://shoal.example/jobs/train-1?workspace=ws" {
		t.Errorf("payload %+v", p)
	}
	if d := f.deliveries("done"); len(d) != 0 {
		t.Errorf("a webhook not subscribed got %+v", d)
	}
	all := f.deliveries("")
	var mails []*notify.Delivery
	for _, d := range all {
		if d.Webhook == "" {
			mails = append(mails, d)
		}
	}
	if len(mails) != 1 || mails[0].Channel != notify.ChannelEmail || mails[0].Target != "a@example.com,b@example.com" {
		t.Errorf("mails: %+v", mails)
	}
	// The cursor moved: a second pass queues nothing again.
	if n := f.run(); n != 0 {
		t.Errorf("second pass queued %d", n)
	}
}

// A job's end is told from its real status: a canceled pipeline whose
// path recorded "failed" is a job_canceled; two events of one end are
// one delivery; a job whose email_on does not list the event is not
// mailed.
func TestJobEndFromRealStatus(t *testing.T) {
	f := newFixture(t, ctlnotify.Config{})
	f.hook("ops", "https://hooks.example/ops", notify.JobCanceled, notify.JobFailed, notify.JobCompleted)
	f.ended("pipe", job.JobCanceled, core.EventJobFailed, &notify.NotificationSetting{Emails: []string{"a@example.com"}, EmailOn: []string{notify.JobFailed}})
	f.update(func(tx store.Tx) error {
		return tx.AppendEvent(&core.Event{Time: tx.Now(), Workspace: "ws", ResourceType: core.ResourceJob, ResourceName: "pipe", Kind: core.EventJobCanceled})
	})
	f.run()
	all := f.deliveries("")
	if len(all) != 1 || all[0].Event != notify.JobCanceled || all[0].Webhook != "ops" {
		t.Errorf("deliveries %+v", all)
	}
}

// Events of every kind the watchers record reach the webhooks
// subscribed to them; events no one is told of (a job created, a
// compute scaled) queue nothing.
func TestEveryNotifiedKind(t *testing.T) {
	f := newFixture(t, ctlnotify.Config{})
	f.hook("all", "https://hooks.example/all", notify.Events...)
	f.ended("q", job.JobQueued, core.EventQueuedTooLong, nil)
	for _, e := range []struct{ typ, name, kind string }{
		{core.ResourceCompute, "cpu", core.EventNodeLost}, {core.ResourceCompute, "cpu", core.EventProvisioningStuck},
		{core.ResourceCompute, "nb", core.EventIdleShutdownSoon}, {core.ResourceBudget, "team", core.EventBudget},
		{core.ResourceSchedule, "nightly", core.EventScheduleFired}, {core.ResourceCompute, "cpu", core.EventScaled},
		{core.ResourceJob, "q", core.EventCreated}, {core.ResourceCompute, "cpu", core.EventFailed},
	} {
		f.update(func(tx store.Tx) error {
			return tx.AppendEvent(&core.Event{Time: tx.Now(), Workspace: "ws", ResourceType: e.typ, ResourceName: e.name, Kind: e.kind, Reason: "80 %"})
		})
	}
	f.run()
	got := map[string]bool{}
	for _, d := range f.deliveries("all") {
		got[d.Event] = true
	}
	want := []string{notify.JobQueuedTooLong, notify.NodeLost, notify.ProvisioningStuck, notify.InstanceIdleShutdown, notify.BudgetThreshold, notify.ScheduleFired}
	if len(got) != len(want) {
		t.Errorf("events delivered %v, want %v", got, want)
	}
	for _, w := range want {
		if !got[w] {
			t.Errorf("%s not delivered", w)
		}
	}
}

// 10,000 events in a minute for a receiver that takes none: at most
// MaxPending deliveries pend, the rest are dropped and counted on the
// webhook and in the metric; the notifier reads them in bounded batches.
func TestFloodBoundedAndDropsCounted(t *testing.T) {
	metric := 0
	f := newFixture(t, ctlnotify.Config{MaxPending: 1000, Dropped: func(ws string) { metric++ }})
	f.hook("ops", "https://hooks.example/ops", notify.NodeLost)
	f.update(func(tx store.Tx) error {
		for i := range 10000 {
			if err := tx.AppendEvent(&core.Event{Time: tx.Now(), Workspace: "ws", ResourceType: core.ResourceCompute, ResourceName: fmt.Sprint("c", i), Kind: core.EventNodeLost}); err != nil {
				return err
			}
		}
		return nil
	})
	// One pass reads up to 20 batches of 500: two read them all.
	f.run()
	f.run()
	var w *notify.Webhook
	f.db.View(context.Background(), func(tx store.Tx) (err error) {
		w, err = tx.GetWebhook("ws", "ops")
		return err
	})
	if n := len(f.deliveries("ops")); n != 1000 || w.Dropped != 9000 || metric != 9000 {
		t.Errorf("pending %d, dropped on the webhook %d, metric %d", n, w.Dropped, metric)
	}
}

// A disabled webhook receives nothing; a job deleted before the
// notifier read its event is skipped.
func TestDisabledAndDeleted(t *testing.T) {
	f := newFixture(t, ctlnotify.Config{})
	f.update(func(tx store.Tx) error {
		return tx.PutWebhook(&notify.Webhook{Workspace: "ws", Name: "off", URL: "https://x.example", Events: []string{notify.JobFailed}, Disabled: true}, []byte("s"))
	})
	f.ended("gone", job.JobFailed, core.EventJobFailed, nil)
	f.update(func(tx store.Tx) error {
		return tx.AppendEvent(&core.Event{Time: tx.Now(), Workspace: "ws", ResourceType: core.ResourceJob, ResourceName: "never-was", Kind: core.EventJobFailed})
	})
	if n := f.run(); n != 0 || len(f.deliveries("")) != 0 {
		t.Errorf("queued %d: %v", n, f.deliveries(""))
	}
}

// An event older than MaxEventAge when read (a log from before
// notifications existed, read once after an upgrade) is passed over; a
// younger one is delivered.
func TestOldEventsPassedOver(t *testing.T) {
	f := newFixture(t, ctlnotify.Config{})
	f.hook("ops", "https://hooks.example/ops", notify.NodeLost)
	f.update(func(tx store.Tx) error {
		for i, age := range []time.Duration{ctlnotify.MaxEventAge + time.Minute, ctlnotify.MaxEventAge - time.Minute} {
			if err := tx.AppendEvent(&core.Event{Time: f.now.Add(-age), Workspace: "ws", ResourceType: core.ResourceCompute, ResourceName: fmt.Sprint("c", i), Kind: core.EventNodeLost}); err != nil {
				return err
			}
		}
		return nil
	})
	f.run()
	ds := f.deliveries("ops")
	var p notify.Payload
	if len(ds) == 1 {
		json.Unmarshal(ds[0].Payload, &p)
	}
	if len(ds) != 1 || p.ResourceName != "c1" {
		t.Errorf("deliveries %d (%+v), want the younger event's alone", len(ds), p)
	}
}

// Two notifiers over one store at once (a restart's new loop beside the
// old, a new leader beside a fenced one): each event is queued once —
// the cursor is re-read in the transaction that moves it, and a
// delivery is inserted once per receiver and key.
func TestTwoNotifiersQueueOnce(t *testing.T) {
	f := newFixture(t, ctlnotify.Config{Batch: 7})
	other := ctlnotify.New(ctlnotify.Config{Store: f.db, Batch: 5})
	f.hook("ops", "https://hooks.example/ops", notify.NodeLost)
	f.update(func(tx store.Tx) error {
		for i := range 100 {
			if err := tx.AppendEvent(&core.Event{Time: tx.Now(), Workspace: "ws", ResourceType: core.ResourceCompute, ResourceName: fmt.Sprint("c", i), Kind: core.EventNodeLost}); err != nil {
				return err
			}
		}
		return nil
	})
	done := make(chan error)
	for _, n := range []*ctlnotify.Notifier{other, other} {
		go func() { _, err := n.RunOnce(context.Background(), f.now); done <- err }()
	}
	f.run()
	for range 2 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	f.run()
	if ds := f.deliveries("ops"); len(ds) != 100 {
		t.Errorf("%d deliveries for 100 events", len(ds))
	}
}

// A webhook with addresses instead of a URL gets the event as mail.
func TestEmailWebhook(t *testing.T) {
	f := newFixture(t, ctlnotify.Config{})
	f.update(func(tx store.Tx) error {
		return tx.PutWebhook(&notify.Webhook{Workspace: "ws", Name: "oncall", Emails: []string{"a@example.com", "b@example.com"}, Events: []string{notify.BudgetThreshold}}, []byte("s"))
	})
	f.update(func(tx store.Tx) error {
		return tx.AppendEvent(&core.Event{Time: tx.Now(), Workspace: "ws", ResourceType: core.ResourceBudget, ResourceName: "team", Kind: core.EventBudget, Reason: "spend reached 80 %"})
	})
	f.run()
	ds := f.deliveries("oncall")
	if len(ds) != 1 || ds[0].Channel != notify.ChannelEmail || ds[0].Target != "a@example.com,b@example.com" || ds[0].Event != notify.BudgetThreshold {
		t.Errorf("deliveries %+v", ds)
	}
}

// A job whose error text and event reason are a megabyte each is queued
// with a bounded payload (the head of each text, said to be cut): every
// subscribed receiver and every retry would otherwise carry the whole,
// and the mail built from it too.
func TestHugeErrorTextBounded(t *testing.T) {
	f := newFixture(t, ctlnotify.Config{})
	f.hook("ops", "https://hooks.example/ops", notify.JobFailed)
	huge := strings.Repeat("traceback line\n", 70_000) // ~1 MB
	f.update(func(tx store.Tx) error {
		j := &job.Job{Workspace: "ws", Status: job.JobFailed, Error: huge, StatusReason: huge, CreatedOn: tx.Now()}
		j.Name, j.DisplayName, j.NotificationSetting = "big", huge, &notify.NotificationSetting{Emails: []string{"a@example.com"}, EmailOn: []string{notify.JobFailed}}
		if err := tx.InsertJob(j); err != nil {
			return err
		}
		return tx.AppendEvent(&core.Event{Time: tx.Now(), Workspace: "ws", ResourceType: core.ResourceJob, ResourceName: "big", Kind: core.EventJobFailed, Reason: huge})
	})
	if n := f.run(); n != 2 {
		t.Fatalf("queued %d, want 2", n)
	}
	for _, d := range f.deliveries("") {
		if len(d.Payload) > 32<<10 {
			t.Errorf("%s delivery: payload of %d bytes", d.Channel, len(d.Payload))
		}
		var p notify.Payload
		if err := json.Unmarshal(d.Payload, &p); err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(p.Reason, "traceback line\n") || !strings.Contains(p.Reason, "(cut:") {
			t.Errorf("reason: %.80q…", p.Reason)
		}
		if e, _ := p.Details["error"].(string); !strings.HasPrefix(e, "traceback line\n") || !strings.Contains(e, "(cut:") {
			t.Errorf("error detail: %.80q…", e)
		}
	}
}

// jobReads counts the jobs read in the store's write transactions.
type jobReads struct {
	store.Store
	n       int
	updates int
}

func (s *jobReads) Update(ctx context.Context, fn func(tx store.Tx) error) error {
	s.updates++
	return s.Store.Update(ctx, func(tx store.Tx) error { return fn(countingTx{tx, &s.n}) })
}

type countingTx struct {
	store.Tx
	n *int
}

func (tx countingTx) GetJob(workspace, name string) (*job.Job, error) {
	*tx.n++
	return tx.Tx.GetJob(workspace, name)
}

// The jobs a batch's events are about are read before its write
// transaction, which on PostgreSQL holds the store's write lock: 50 ended
// jobs are 50 deliveries and no job read under the lock; an event of a
// job the store does not hold is passed over, as before; and a pass that
// finds no new event writes nothing.
func TestJobsReadBeforeTheWriteTransaction(t *testing.T) {
	db, clk := teststore.Open(t)
	counted := &jobReads{Store: db}
	f := &fixture{t: t, db: db, n: ctlnotify.New(ctlnotify.Config{Store: counted}), now: clk.Now()}
	f.hook("ops", "https://ops.example/hook", notify.JobFailed)
	for i := range 50 {
		f.ended(fmt.Sprint("job-", i), job.JobFailed, core.EventJobFailed, nil)
	}
	f.update(func(tx store.Tx) error {
		return tx.AppendEvent(&core.Event{Time: tx.Now(), Workspace: "ws", ResourceType: core.ResourceJob, ResourceName: "never-stored", Kind: core.EventJobFailed})
	})
	if n := f.run(); n != 50 {
		t.Fatalf("queued %d deliveries, want 50", n)
	}
	if counted.n != 0 {
		t.Errorf("the write transactions read %d jobs, want none (read before them)", counted.n)
	}
	if got := len(f.deliveries("ops")); got != 50 {
		t.Errorf("deliveries to ops: %d, want 50", got)
	}
	// Nothing new: no write transaction at all.
	counted.updates = 0
	if n := f.run(); n != 0 || counted.updates != 0 {
		t.Errorf("a pass with no new event queued %d and ran %d write transactions, want none", n, counted.updates)
	}
}
