// Package delivery is the sender: it takes the notifications the
// notifier (control/notify) queued in the store and sends them —
// webhooks as signed POSTs, mail through the configured SMTP server —
// with a bounded number at once and a timeout per try, and records each
// try's outcome: delivered, retried later with backoff, or failed for
// good. It runs on a goroutine of its own, so that a slow receiver never
// delays a decision.
package delivery

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/notify"
	"github.com/shoal-ml/shoal/service/webhooks"
	"github.com/shoal-ml/shoal/store"
)

// Defaults of Config.
const (
	DefaultBatch      = 64
	DefaultParallel   = 8
	DefaultTryTimeout = 10 * time.Second
	// Retention is how long finished deliveries stay listed
	// (`shoal webhook deliveries`) before they are pruned.
	Retention = 7 * 24 * time.Hour
	// Kept is how many finished deliveries each receiver keeps listed at
	// most: a receiver that takes a flood of events at once (10,000 a
	// minute) leaves Kept rows, not the flood, until Retention prunes
	// them.
	Kept = 1000
	// trimEvery spaces the trims (each ranks every finished delivery).
	trimEvery = time.Minute
)

// Config is what the sender needs.
type Config struct {
	Store store.Store
	// OpenSecret unseals a webhook's signing secret in tx
	// (service/webhooks.OpenSecret with the server's key).
	OpenSecret func(tx store.Tx, workspace, webhook string) ([]byte, error)
	// HTTP posts webhooks: service/webhooks.NewHTTPClient (the dial
	// guard, no proxy, no redirect).
	HTTP *http.Client
	// Mail sends mail; nil when no SMTP server is configured (mail
	// deliveries then fail saying so).
	Mail MailSender
	// Batch bounds the deliveries taken per pass, Parallel those sent at
	// once, TryTimeout each try.
	Batch, Parallel int
	TryTimeout      time.Duration
	// Failed is called for each delivery that fails for good (a metric:
	// shoal_notifications_failed_total).
	Failed func(workspace, channel string)
}

// MailSender sends one mail (Mailer).
type MailSender interface {
	Send(ctx context.Context, to []string, subject, body string, now time.Time) error
}

// Sender sends due deliveries (RunOnce).
type Sender struct {
	cfg Config
	// lastTrim is when finished deliveries were last trimmed to Kept per
	// receiver (the sender's own goroutine alone reads and writes it).
	lastTrim time.Time
}

// New returns a Sender, with Config's defaults filled in.
func New(cfg Config) *Sender {
	if cfg.Batch <= 0 {
		cfg.Batch = DefaultBatch
	}
	if cfg.Parallel <= 0 {
		cfg.Parallel = DefaultParallel
	}
	if cfg.TryTimeout <= 0 {
		cfg.TryTimeout = DefaultTryTimeout
	}
	if cfg.HTTP == nil {
		cfg.HTTP = webhooks.NewHTTPClient(false, cfg.TryTimeout)
	}
	return &Sender{cfg: cfg}
}

// job is one delivery to try, with what it needs read beforehand.
type job struct {
	d      *notify.Delivery
	secret []byte
	// skip is why it is not tried (its webhook changed or is gone).
	skip string
}

// RunOnce sends the deliveries due at now (one batch) and records their
// outcomes, then prunes finished deliveries older than Retention. It
// returns how many it tried.
func (s *Sender) RunOnce(ctx context.Context, now time.Time) (int, error) {
	var jobs []*job
	err := s.cfg.Store.View(ctx, func(tx store.Tx) error {
		due, err := tx.DueDeliveries(now, s.cfg.Batch)
		if err != nil {
			return err
		}
		jobs = make([]*job, 0, len(due))
		for _, d := range due {
			jobs = append(jobs, s.prepare(tx, d))
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	s.sendAll(ctx, jobs, now)
	if ctx.Err() != nil {
		return 0, ctx.Err()
	}
	err = s.cfg.Store.Update(ctx, func(tx store.Tx) error {
		for _, j := range jobs {
			if err := tx.UpdateDelivery(j.d); err != nil && core.ErrorCode(err) != core.ENOTFOUND {
				return err
			}
		}
		if _, err := tx.PruneDeliveries(now.Add(-Retention)); err != nil {
			return err
		}
		if now.Sub(s.lastTrim) < trimEvery {
			return nil
		}
		_, err := tx.TrimDeliveries(Kept)
		return err
	})
	if err == nil && now.Sub(s.lastTrim) >= trimEvery {
		s.lastTrim = now
	}
	return len(jobs), err
}

// prepare reads what a delivery needs: a webhook's current URL and
// secret. A webhook deleted, disabled or given another URL since the
// delivery was queued is not sent to.
func (s *Sender) prepare(tx store.Tx, d *notify.Delivery) *job {
	j := &job{d: d}
	if d.Webhook == "" {
		return j
	}
	w, err := tx.GetWebhook(d.Workspace, d.Webhook)
	switch {
	case err != nil:
		j.skip = "the webhook is gone"
		return j
	case w.Disabled:
		j.skip = "the webhook is disabled"
		return j
	case d.Channel == notify.ChannelWebhook && w.URL != d.Target:
		j.skip = "the webhook's URL changed since this was queued"
		return j
	case d.Channel == notify.ChannelEmail && strings.Join(w.Emails, ",") != d.Target:
		j.skip = "the webhook's addresses changed since this was queued"
		return j
	}
	if d.Channel == notify.ChannelWebhook {
		if s.cfg.OpenSecret == nil {
			j.skip = "this server cannot open webhook secrets (no secrets key)"
			return j
		}
		if j.secret, err = s.cfg.OpenSecret(tx, d.Workspace, d.Webhook); err != nil {
			j.skip = "the webhook's secret cannot be opened: " + err.Error()
		}
	}
	return j
}

// sendAll tries jobs, Parallel at a time, and sets each delivery's
// outcome.
func (s *Sender) sendAll(ctx context.Context, jobs []*job, now time.Time) {
	sem := make(chan struct{}, s.cfg.Parallel)
	var wg sync.WaitGroup
	var mu sync.Mutex
	silent := map[string]bool{} // receivers a try got no answer from
	for _, j := range jobs {
		if j.skip != "" {
			s.record(j.d, outcome{err: errors.New(j.skip)}, now, true)
			continue
		}
		wg.Add(1)
		sem <- struct{}{}
		// Checked once a slot is free, so after the tries before it
		// that took its slot have said whether their receiver answered.
		mu.Lock()
		off := silent[receiver(j.d)]
		mu.Unlock()
		if off {
			putOff(j.d, now)
			<-sem
			wg.Done()
			continue
		}
		go func() {
			defer func() { <-sem; wg.Done() }()
			tctx, cancel := context.WithTimeout(ctx, s.cfg.TryTimeout)
			defer cancel()
			o := s.try(tctx, j, now)
			if o.err != nil && tctx.Err() == context.DeadlineExceeded && ctx.Err() == nil {
				o.err = fmt.Errorf("no answer within %s", s.cfg.TryTimeout)
				mu.Lock()
				silent[receiver(j.d)] = true
				mu.Unlock()
			}
			s.record(j.d, o, now, false)
		}()
	}
	wg.Wait()
}

// receiver names where a delivery goes, for putting off the rest of a
// pass's deliveries to a receiver that did not answer: a webhook, or the
// SMTP server all mail goes through.
func receiver(d *notify.Delivery) string {
	if d.Channel == notify.ChannelEmail {
		return "smtp"
	}
	return strings.ToLower(d.Workspace + "\x00" + d.Webhook)
}

// putOff moves a delivery not tried, because its receiver gave another
// delivery no answer in this pass, to the first retry's time: its
// attempts are unchanged (it was not tried), and a receiver that hangs
// with many deliveries due holds the sender's slots for one try's
// timeout, not one per delivery, so others' receivers do not wait
// behind it.
func putOff(d *notify.Delivery, now time.Time) {
	d.NextAttempt, d.UpdatedOn = now.Add(retryDelays[0]), now
	d.LastError = "not tried: the receiver gave another delivery no answer in the same pass"
}

// try sends one delivery.
func (s *Sender) try(ctx context.Context, j *job, now time.Time) outcome {
	switch j.d.Channel {
	case notify.ChannelWebhook:
		return post(ctx, s.cfg.HTTP, j.d, j.secret, now)
	case notify.ChannelEmail:
		if s.cfg.Mail == nil {
			return outcome{err: errors.New("no SMTP server is configured (notifications.smtp in the server's config)")}
		}
		var p notify.Payload
		if err := json.Unmarshal(j.d.Payload, &p); err != nil {
			return outcome{err: fmt.Errorf("payload: %w", err)}
		}
		return outcome{err: s.cfg.Mail.Send(ctx, strings.Split(j.d.Target, ","), MailSubject(&p), MailBody(&p), now)}
	}
	return outcome{err: fmt.Errorf("unknown channel %q", j.d.Channel)}
}

// record sets a delivery's outcome at now; final fails it for good.
func (s *Sender) record(d *notify.Delivery, o outcome, now time.Time, final bool) {
	d.Attempts++
	d.UpdatedOn = now
	d.StatusCode = o.statusCode
	if o.err == nil {
		d.Status, d.LastError, d.Delivered = notify.DeliveryDelivered, "", &now
		return
	}
	d.LastError = clip(oneLine(o.err.Error()), maxLastError)
	next, ok := NextAttempt(d.CreatedOn, d.Attempts, now)
	if final || !ok {
		d.Status = notify.DeliveryFailed
		if s.cfg.Failed != nil {
			s.cfg.Failed(d.Workspace, d.Channel)
		}
		return
	}
	d.NextAttempt = next
}

// maxLastError bounds LastError: a status line and the first 200 bytes
// of the answer, or a network error, fit.
const maxLastError = 320

// clip cuts s to at most n bytes, on a character boundary.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
