// Package notify is the notifier: it follows the event log from a cursor
// kept in the store and turns the events people want to hear about (a
// job's end, a long queue wait, a budget crossing, idle GPUs, a node
// lost, a compute stuck provisioning, an instance about to stop, a
// schedule's firing) into deliveries — one per subscribed webhook of the
// workspace, and for a job's events one mail per its
// notification_setting — inserted in the same transaction that moves the
// cursor, so that an event is queued once whatever restarts or fails
// over. Sending is control/delivery's.
package notify

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/notify"
	"github.com/shoal-ml/shoal/store"
)

// Cursor is the name of the notifier's position in the event log
// (NotifyTx.NotifyCursor).
const Cursor = "notify"

// Defaults of Config.
const (
	// DefaultBatch events are read per transaction.
	DefaultBatch = 500
	// DefaultMaxPending bounds a receiver's pending deliveries: beyond
	// it new ones are dropped and counted, so that a receiver that hangs
	// or fails for long fills neither the disk nor the memory.
	DefaultMaxPending = 1000
	// maxBatchesPerPass bounds one RunOnce's work.
	maxBatchesPerPass = 20
	// MaxEventAge: an event older than this when the notifier reads it
	// is passed over. The log holds events from before notifications
	// existed (a server upgraded reads it from the start once): a
	// webhook created then must not receive months-old news.
	MaxEventAge = 24 * time.Hour
)

// Config is what the notifier needs.
type Config struct {
	Store store.Store
	// PublicURL is the studio's address (payloads link the resource's
	// page); empty: no link.
	PublicURL string
	// Batch and MaxPending default to DefaultBatch and DefaultMaxPending.
	Batch, MaxPending int
	// Dropped is called for each delivery dropped for a full receiver
	// (a metric: shoal_notifications_dropped_total).
	Dropped func(workspace string)
}

// Notifier queues deliveries for new events (RunOnce).
type Notifier struct{ cfg Config }

// New returns a Notifier with Config's defaults filled in.
func New(cfg Config) *Notifier {
	if cfg.Batch <= 0 {
		cfg.Batch = DefaultBatch
	}
	if cfg.MaxPending <= 0 {
		cfg.MaxPending = DefaultMaxPending
	}
	return &Notifier{cfg: cfg}
}

// RunOnce reads the events after the cursor, batch by batch, queueing
// their deliveries at now; it returns how many deliveries it queued.
func (n *Notifier) RunOnce(ctx context.Context, now time.Time) (int, error) {
	total := 0
	for range maxBatchesPerPass {
		jobs, events, err := n.prefetch(ctx, now)
		if err != nil {
			return total, err
		}
		if events == 0 {
			// Nothing new: no write transaction, which on one server's
			// PostgreSQL store would wait its turn among the writes only
			// to read the cursor.
			break
		}
		var read int
		var p *pass
		err = n.cfg.Store.Update(ctx, func(tx store.Tx) (err error) {
			read, p, err = n.batch(tx, now, jobs)
			return err
		})
		if err != nil {
			return total, err
		}
		if p != nil {
			total += p.queued
			// Counted once committed (a transaction retried would
			// count twice).
			if n.cfg.Dropped != nil {
				for _, ws := range p.droppedIn {
					n.cfg.Dropped(ws)
				}
			}
		}
		if read < n.cfg.Batch {
			break
		}
	}
	return total, nil
}

// prefetch reads, in a read-only transaction, the jobs that the next
// batch's events are about, keyed by jobKey (nil: the job is gone). The
// batch's write transaction then reads none of them: on PostgreSQL each
// read is a round trip, and a server's write transactions run one after
// another, so its other writes wait for them (a batch of 500 jobs' ends
// read 500 jobs one after another in it). A
// job read a moment before the write is as good as one read in it: the
// notification is of an event already in the log, and a job changed
// since says the same of how it ended (its status read now would be no
// truer a moment later). An event whose job is not here (logged after
// the read) has its job read in the write transaction as before. It also
// returns how many events it found: none, and there is no batch to write.
func (n *Notifier) prefetch(ctx context.Context, now time.Time) (jobs map[string]*job.Job, events int, err error) {
	jobs = map[string]*job.Job{}
	err = n.cfg.Store.View(ctx, func(tx store.Tx) error {
		cur, err := tx.NotifyCursor(Cursor)
		if err != nil {
			return err
		}
		evs, err := tx.ListEvents(core.EventFilter{AfterID: cur, Following: true, Limit: n.cfg.Batch})
		if err != nil {
			return err
		}
		events = len(evs)
		for _, e := range evs {
			k := jobKey(e.Workspace, e.ResourceName)
			if _, seen := jobs[k]; seen || !needsJob(e) || now.Sub(e.Time) > MaxEventAge {
				continue
			}
			j, err := tx.GetJob(e.Workspace, e.ResourceName)
			if err != nil && core.ErrorCode(err) != core.ENOTFOUND {
				return err
			}
			jobs[k] = j
		}
		return nil
	})
	return jobs, events, err
}

// jobKey keys a job of a workspace in a prefetched map.
func jobKey(workspace, name string) string { return strings.ToLower(workspace) + "\x00" + name }

// pass is one batch's state: the webhooks of each workspace read once,
// pending counts kept as deliveries are inserted, drops counted, the
// jobs read before it (prefetch).
type pass struct {
	tx      store.Tx
	now     time.Time
	jobs    map[string]*job.Job
	hooks   map[string][]*notify.Webhook
	pending map[string]int
	dropped map[[2]string]int64
	queued  int
	// droppedIn lists the workspace of each delivery dropped.
	droppedIn []string
}

// batch queues the deliveries of the next batch of events in tx and
// moves the cursor past them; it returns how many events it read.
func (n *Notifier) batch(tx store.Tx, now time.Time, jobs map[string]*job.Job) (read int, p *pass, err error) {
	cur, err := tx.NotifyCursor(Cursor)
	if err != nil {
		return 0, nil, err
	}
	evs, err := tx.ListEvents(core.EventFilter{AfterID: cur, Following: true, Limit: n.cfg.Batch})
	if err != nil || len(evs) == 0 {
		return 0, nil, err
	}
	p = &pass{tx: tx, now: now, jobs: jobs, hooks: map[string][]*notify.Webhook{}, pending: map[string]int{}, dropped: map[[2]string]int64{}}
	for _, e := range evs {
		if err := n.event(p, e); err != nil {
			return 0, nil, fmt.Errorf("event %d: %w", e.ID, err)
		}
	}
	for k, c := range p.dropped {
		if err := tx.AddWebhookDropped(k[0], k[1], c); err != nil && core.ErrorCode(err) != core.ENOTFOUND {
			return 0, nil, err
		}
	}
	return len(evs), p, tx.SetNotifyCursor(Cursor, evs[len(evs)-1].ID)
}

// event queues the deliveries of one event.
func (n *Notifier) event(p *pass, e *core.Event) error {
	if p.now.Sub(e.Time) > MaxEventAge {
		return nil
	}
	pl, j, ok, err := n.payload(p, e)
	if err != nil || !ok {
		return err
	}
	body, err := jsonPayload(pl)
	if err != nil {
		return err
	}
	// One delivery per receiver and notification: a job's end is keyed
	// by the job (two paths recording one end send one), other events
	// by the event.
	key := "event:" + strconv.FormatInt(e.ID, 10)
	if isJobEnd(pl.Event) {
		key = pl.Event + ":" + e.ResourceName
	}
	hooks, err := p.webhooks(e.Workspace)
	if err != nil {
		return err
	}
	for _, w := range hooks {
		if w.Disabled || !subscribed(w, pl.Event) {
			continue
		}
		d := &notify.Delivery{Workspace: e.Workspace, Webhook: w.Name, Channel: notify.ChannelWebhook, Target: w.URL, Event: pl.Event, Key: key, Payload: body}
		if w.URL == "" {
			d.Channel, d.Target = notify.ChannelEmail, strings.Join(w.Emails, ",")
		}
		if err := n.insert(p, d); err != nil {
			return err
		}
	}
	if j != nil {
		if s := j.Notification(); s.Wants(pl.Event) {
			d := &notify.Delivery{Workspace: e.Workspace, Channel: notify.ChannelEmail, Target: strings.Join(s.Emails, ","), Event: pl.Event, Key: key, Payload: body}
			if err := n.insert(p, d); err != nil {
				return err
			}
		}
	}
	return nil
}

// insert queues d unless its receiver already has MaxPending pending:
// then it is dropped and counted (on the webhook; a job's mail only in
// the metric).
func (n *Notifier) insert(p *pass, d *notify.Delivery) error {
	rk := strings.ToLower(d.Workspace + "\x00" + d.Webhook)
	c, ok := p.pending[rk]
	if !ok {
		var err error
		if c, err = p.tx.CountPendingDeliveries(d.Workspace, d.Webhook); err != nil {
			return err
		}
	}
	if c >= n.cfg.MaxPending {
		p.pending[rk] = c
		p.droppedIn = append(p.droppedIn, d.Workspace)
		if d.Webhook != "" {
			p.dropped[[2]string{d.Workspace, d.Webhook}]++
		}
		return nil
	}
	d.Status, d.NextAttempt, d.CreatedOn, d.UpdatedOn = notify.DeliveryPending, p.now, p.now, p.now
	inserted, err := p.tx.InsertDelivery(d)
	if err != nil {
		return err
	}
	if inserted {
		c++
		p.queued++
	}
	p.pending[rk] = c
	return nil
}

func (p *pass) webhooks(ws string) ([]*notify.Webhook, error) {
	k := strings.ToLower(ws)
	if h, ok := p.hooks[k]; ok {
		return h, nil
	}
	h, err := p.tx.ListWebhooks(ws)
	if err != nil {
		return nil, err
	}
	p.hooks[k] = h
	return h, nil
}

func subscribed(w *notify.Webhook, event string) bool {
	for _, e := range w.Events {
		if e == event {
			return true
		}
	}
	return false
}

func isJobEnd(event string) bool {
	return event == notify.JobCompleted || event == notify.JobFailed || event == notify.JobCanceled
}

// studioURL is the studio's page of a job or compute.
func (n *Notifier) studioURL(kind, ws, name string) string {
	if n.cfg.PublicURL == "" {
		return ""
	}
	return strings.TrimRight(n.cfg.PublicURL, "/") + "/" + kind + "/" + url.PathEscape(name) + "?workspace=" + url.QueryEscape(ws)
}

// jobEndEvent maps a finished job's status to its notification event.
var jobEndEvent = map[string]string{job.JobCompleted: notify.JobCompleted, job.JobFailed: notify.JobFailed, job.JobCanceled: notify.JobCanceled}
