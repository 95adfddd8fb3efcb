package delivery_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/control/delivery"
	"github.com/shoal-ml/shoal/domain/notify"
	"github.com/shoal-ml/shoal/internal/sealing"
	"github.com/shoal-ml/shoal/internal/testenv"
	"github.com/shoal-ml/shoal/internal/teststore"
	"github.com/shoal-ml/shoal/service/webhooks"
	"github.com/shoal-ml/shoal/store"
	"github.com/shoal-ml/shoal/store/sqlite"
	"github.com/shoal-ml/shoal/store/storetest"
)

// fixture is a store with webhooks whose secrets are sealed as the
// webhooks service seals them, and a sender over it.
type fixture struct {
	t    *testing.T
	db   *sqlite.DB
	clk  *storetest.Clock
	key  *sealing.Key
	now  time.Time
	sent *delivery.Sender
}

func newFixture(t *testing.T, cfg delivery.Config) *fixture {
	db, clk := teststore.Open(t)
	key, err := sealing.New(make([]byte, 32))
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{t: t, db: db, clk: clk, key: key, now: time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)}
	cfg.Store = db
	// Secrets are opened as the server opens them (service/webhooks).
	cfg.OpenSecret = func(tx store.Tx, ws, name string) ([]byte, error) { return webhooks.OpenSecret(tx, key, ws, name) }
	if cfg.HTTP == nil {
		cfg.HTTP = webhooks.NewHTTPClient(true, 10*time.Second) // httptest listens on the loopback
	}
	f.sent = delivery.New(cfg)
	return f
}

// webhook stores a webhook to url with secret.
func (f *fixture) webhook(name, url, secret string) {
	sealed, err := f.key.Seal([]byte(secret), webhooks.SealContext("ws", name))
	if err != nil {
		f.t.Fatal(err)
	}
	f.update(func(tx store.Tx) error {
		return tx.PutWebhook(&notify.Webhook{Workspace: "ws", Name: name, URL: url, Events: []string{notify.JobFailed}}, []byte(sealed))
	})
}

// queue adds a pending delivery due now.
func (f *fixture) queue(webhook, channel, target, key string) *notify.Delivery {
	p, _ := json.Marshal(notify.Payload{ID: key, Event: notify.JobFailed, Time: f.now, Workspace: "ws", ResourceType: "job", ResourceName: "train-1",
		Summary: "Job train-1 failed", Reason: "exit code 1"})
	d := &notify.Delivery{Workspace: "ws", Webhook: webhook, Channel: channel, Target: target, Event: notify.JobFailed, Key: key,
		Payload: p, Status: notify.DeliveryPending, NextAttempt: f.now, CreatedOn: f.now, UpdatedOn: f.now}
	f.update(func(tx store.Tx) error { _, err := tx.InsertDelivery(d); return err })
	return d
}

func (f *fixture) update(fn func(tx store.Tx) error) {
	f.t.Helper()
	f.clk.Set(f.now) // the store's clock is the loops' injected clock
	if err := f.db.Update(context.Background(), fn); err != nil {
		f.t.Fatal(err)
	}
}

// run runs one sender pass at now.
func (f *fixture) run() {
	f.t.Helper()
	f.clk.Set(f.now)
	if _, err := f.sent.RunOnce(context.Background(), f.now); err != nil {
		f.t.Fatal(err)
	}
}

// get reads a delivery back.
func (f *fixture) get(webhook string, id int64) *notify.Delivery {
	f.t.Helper()
	var out *notify.Delivery
	f.db.View(context.Background(), func(tx store.Tx) error {
		ds, err := tx.ListDeliveries("ws", webhook, 0)
		for _, d := range ds {
			if d.ID == id {
				out = d
			}
		}
		return err
	})
	if out == nil {
		f.t.Fatalf("delivery %d is gone", id)
	}
	return out
}

// A delivery reaches a receiver that checks the signature with
// notify.Verify, with the event and delivery headers.
func TestSignedWebhookDelivered(t *testing.T) {
	type got struct {
		body             []byte
		sig, event, dlvr string
	}
	ch := make(chan got, 1)
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		ch <- got{b, r.Header.Get(notify.HeaderSignature), r.Header.Get(notify.HeaderEvent), r.Header.Get(notify.HeaderDelivery)}
	}))
	defer recv.Close()
	f := newFixture(t, delivery.Config{})
	f.webhook("ops", recv.URL+"/hook", "s3cret-s3cret")
	d := f.queue("ops", notify.ChannelWebhook, recv.URL+"/hook", "k1")
	f.run()
	g := <-ch
	if err := notify.Verify([]byte("s3cret-s3cret"), g.sig, g.body, f.now, 5*time.Minute); err != nil {
		t.Errorf("signature: %v", err)
	}
	if notify.Verify([]byte("another"), g.sig, g.body, f.now, 0) == nil {
		t.Error("the signature verifies under another secret")
	}
	var p notify.Payload
	if err := json.Unmarshal(g.body, &p); err != nil || p.Summary != "Job train-1 failed" || g.event != notify.JobFailed || g.dlvr == "" {
		t.Errorf("payload %+v (%v), event %q, delivery %q", p, err, g.event, g.dlvr)
	}
	if back := f.get("ops", d.ID); back.Status != notify.DeliveryDelivered || back.Attempts != 1 || back.StatusCode != 200 || back.Delivered == nil {
		t.Errorf("recorded %+v", back)
	}
}

// A receiver answering 500 is retried at 10 s, 30 s, 2 m... with its
// words recorded, and the delivery fails for good at the twelfth try
// (the clock is injected: no waiting).
func TestFailingReceiverRetriedWithBackoff(t *testing.T) {
	var mu sync.Mutex
	tries := 0
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		tries++
		mu.Unlock()
		w.WriteHeader(500)
		io.WriteString(w, "database is down\r\nX-Injected: 1"+strings.Repeat("x", 500))
	}))
	defer recv.Close()
	failed := 0
	f := newFixture(t, delivery.Config{Failed: func(string, string) { failed++ }})
	f.webhook("ops", recv.URL, "s")
	d := f.queue("ops", notify.ChannelWebhook, recv.URL, "k1")
	f.run()
	back := f.get("ops", d.ID)
	if back.Status != notify.DeliveryPending || back.Attempts != 1 || back.StatusCode != 500 || !back.NextAttempt.Equal(f.now.Add(10*time.Second)) ||
		!strings.HasPrefix(back.LastError, "HTTP 500: database is down  X-Injected: 1") || len(back.LastError) > 330 {
		t.Fatalf("after one try: %+v", back)
	}
	// Not due before its next attempt.
	f.now = f.now.Add(9 * time.Second)
	f.run()
	if tries != 1 {
		t.Fatalf("tried %d times before the retry was due", tries)
	}
	wantGaps := []time.Duration{30 * time.Second, 2 * time.Minute, 10 * time.Minute, 30 * time.Minute, time.Hour, time.Hour}
	for i, gap := range wantGaps {
		f.now = f.get("ops", d.ID).NextAttempt
		f.run()
		if b := f.get("ops", d.ID); b.Attempts != i+2 || !b.NextAttempt.Equal(f.now.Add(gap)) {
			t.Fatalf("try %d: next %v, want now+%s", i+2, b.NextAttempt, gap)
		}
	}
	for f.get("ops", d.ID).Status == notify.DeliveryPending {
		f.now = f.get("ops", d.ID).NextAttempt
		f.run()
	}
	if b := f.get("ops", d.ID); b.Status != notify.DeliveryFailed || b.Attempts != delivery.MaxAttempts || failed != 1 {
		t.Errorf("gave up as %+v after %d tries (failed metric %d)", b, tries, failed)
	}
}

// A redirect is not followed (to the loopback or anywhere): the try
// fails saying where it pointed.
func TestRedirectNotFollowed(t *testing.T) {
	hit := false
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hit = true }))
	defer target.Close()
	recv := httptest.NewServer(http.RedirectHandler(target.URL+"/admin", http.StatusTemporaryRedirect))
	defer recv.Close()
	f := newFixture(t, delivery.Config{})
	f.webhook("ops", recv.URL, "s")
	d := f.queue("ops", notify.ChannelWebhook, recv.URL, "k")
	f.run()
	b := f.get("ops", d.ID)
	if hit || b.Status != notify.DeliveryPending || b.StatusCode != 307 || !strings.Contains(b.LastError, "redirect to \""+target.URL+"/admin\", not followed") {
		t.Errorf("redirect: hit %v, %+v", hit, b)
	}
}

// Without allow_private_webhook_urls the sender's dial guard refuses
// the loopback and the metadata address at connect time, whatever the
// URL said at create (a name that resolves there later: rebinding).
func TestDialGuardRefusesLoopbackAndMetadata(t *testing.T) {
	hit := false
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hit = true }))
	defer recv.Close()
	f := newFixture(t, delivery.Config{HTTP: webhooks.NewHTTPClient(false, 10*time.Second)})
	for i, u := range []string{recv.URL, strings.Replace(recv.URL, "127.0.0.1", "localhost", 1), "http://169.254.169.254/latest/meta-data/", "http://[::1]:1/"} {
		name := "w" + string(rune('a'+i))
		f.webhook(name, u, "s")
		d := f.queue(name, notify.ChannelWebhook, u, "k")
		f.run()
		if b := f.get(name, d.ID); b.Status != notify.DeliveryPending || !strings.Contains(b.LastError, "refused") {
			t.Errorf("%s: %+v", u, b)
		}
	}
	if hit {
		t.Error("the loopback receiver was reached")
	}
}

// A delivery whose webhook changed URL or was disabled since it was
// queued is not sent to the old URL: it fails saying why.
func TestChangedWebhookNotSentToOldURL(t *testing.T) {
	hit := false
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hit = true }))
	defer recv.Close()
	f := newFixture(t, delivery.Config{})
	f.webhook("ops", recv.URL, "s")
	d := f.queue("ops", notify.ChannelWebhook, recv.URL, "k")
	f.webhook("ops", recv.URL+"/new", "s")
	f.run()
	if b := f.get("ops", d.ID); hit || b.Status != notify.DeliveryFailed || !strings.Contains(b.LastError, "URL changed") {
		t.Errorf("hit %v, %+v", hit, b)
	}
}

// Finished deliveries are pruned after a week; pending ones stay.
func TestFinishedDeliveriesPruned(t *testing.T) {
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer recv.Close()
	f := newFixture(t, delivery.Config{})
	f.webhook("ops", recv.URL, "s")
	f.queue("ops", notify.ChannelWebhook, recv.URL, "k")
	f.run()
	f.now = f.now.Add(delivery.Retention + time.Minute)
	f.run()
	f.db.View(context.Background(), func(tx store.Tx) error {
		if ds, _ := tx.ListDeliveries("ws", "", 0); len(ds) != 0 {
			t.Errorf("after a week: %d deliveries", len(ds))
		}
		return nil
	})
}

// A receiver that took a flood of events keeps its newest Kept finished
// deliveries, not the flood: the sender trims them (at most once a
// minute), long before Retention.
func TestFloodOfDeliveredTrimmedToKept(t *testing.T) {
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer recv.Close()
	f := newFixture(t, delivery.Config{Batch: 2000, Parallel: 16})
	f.webhook("ops", recv.URL, "s")
	for i := range delivery.Kept + 200 {
		f.queue("ops", notify.ChannelWebhook, recv.URL, fmt.Sprintf("k%d", i))
	}
	f.run()
	count := func() (delivered int) {
		f.db.View(context.Background(), func(tx store.Tx) error {
			ds, _ := tx.ListDeliveries("ws", "ops", 0)
			for _, d := range ds {
				if d.Status == notify.DeliveryDelivered {
					delivered++
				}
			}
			return nil
		})
		return delivered
	}
	if n := count(); n != delivery.Kept {
		t.Errorf("after a flood of %d delivered: %d kept, want %d", delivery.Kept+200, n, delivery.Kept)
	}
}

func TestNextAttempt(t *testing.T) {
	c := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	if n, ok := delivery.NextAttempt(c, 1, c); !ok || n != c.Add(10*time.Second) {
		t.Errorf("first: %v %v", n, ok)
	}
	if _, ok := delivery.NextAttempt(c, 5, c.Add(23*time.Hour+45*time.Minute)); ok {
		t.Error("a retry past 24 h after creation is given")
	}
	if _, ok := delivery.NextAttempt(c, delivery.MaxAttempts, c); ok {
		t.Error("a thirteenth try is given")
	}
}

// A receiver that answers with an endless body (10 GB, or forever) is
// read only a bounded amount: the try ends, its connection is closed
// under it (its writes fail), and the outcome is recorded with the
// answer's head. One that trickles its body a byte at a time is given up
// at the try's timeout, never waited for.
func TestEndlessAndTricklingAnswersBounded(t *testing.T) {
	var written atomic.Int64
	cut := make(chan struct{})
	endless := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusInternalServerError)
		chunk := []byte(strings.Repeat("x", 32<<10))
		for {
			n, err := w.Write(chunk)
			written.Add(int64(n))
			if err != nil {
				close(cut)
				return
			}
		}
	}))
	defer endless.Close()
	release := make(chan struct{})
	trickle := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusBadGateway)
		for {
			select {
			case <-release:
				return
			case <-r.Context().Done():
				return
			case <-time.After(20 * time.Millisecond):
			}
			w.Write([]byte("y"))
			w.(http.Flusher).Flush()
		}
	}))
	defer trickle.Close()
	defer close(release)

	f := newFixture(t, delivery.Config{TryTimeout: 500 * time.Millisecond})
	f.webhook("big", endless.URL, "s")
	f.webhook("slow", trickle.URL, "s")
	big := f.queue("big", notify.ChannelWebhook, endless.URL, "a")
	slow := f.queue("slow", notify.ChannelWebhook, trickle.URL, "b")
	f.run()
	<-cut // the endless answer's connection was closed under it
	if n := written.Load(); n > 64<<20 {
		t.Errorf("the receiver wrote %d bytes before the sender hung up", n)
	}
	if b := f.get("big", big.ID); b.Status != notify.DeliveryPending || b.StatusCode != 500 || !strings.HasPrefix(b.LastError, "HTTP 500: xxx") || len(b.LastError) > 320+3 {
		t.Errorf("endless answer: %+v", b)
	}
	if b := f.get("slow", slow.ID); b.Status != notify.DeliveryPending || b.Attempts != 1 {
		t.Errorf("trickling answer: %+v", b)
	}
}

// DNS rebinding: a webhook whose host name was accepted at create
// (resolving then to a public address) and resolves to the loopback when
// the sender connects is refused at connect time, on the address the
// name resolves to — not on its spelling (it is not "localhost"). The
// name is one the machine's hosts file maps to the loopback.
func TestRebindingNameRefusedAtConnectTime(t *testing.T) {
	var name string
	testenv.Optional(t, "a host name other than localhost that resolves to the loopback", func() error {
		name = loopbackName()
		if name == "" {
			return errors.New("none in /etc/hosts")
		}
		return nil
	}, "add e.g. '127.0.1.1 rebind-test' to /etc/hosts")
	hit := false
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hit = true }))
	defer recv.Close()
	_, port, _ := net.SplitHostPort(recv.Listener.Addr().String())
	u := "http://" + net.JoinHostPort(name, port) + "/hook"
	f := newFixture(t, delivery.Config{HTTP: webhooks.NewHTTPClient(false, 10*time.Second)})
	f.webhook("rebound", u, "s")
	d := f.queue("rebound", notify.ChannelWebhook, u, "k")
	f.run()
	if b := f.get("rebound", d.ID); b.Status != notify.DeliveryPending || !strings.Contains(b.LastError, "refused") || !strings.Contains(b.LastError, "loopback") {
		t.Errorf("%s: %+v", u, b)
	}
	if hit {
		t.Error("the loopback receiver was reached through a name")
	}
}

// loopbackName is a name in /etc/hosts, other than localhost, that maps
// to a loopback address, or "".
func loopbackName() string {
	b, err := os.ReadFile("/etc/hosts")
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(strings.SplitN(line, "#", 2)[0])
		if len(f) < 2 || !strings.HasPrefix(f[0], "127.") {
			continue
		}
		for _, n := range f[1:] {
			if l := strings.ToLower(n); l != "localhost" && !strings.HasSuffix(l, ".localhost") {
				return n
			}
		}
	}
	return ""
}

// A receiver that hangs holds up no other receiver: its tries end at the
// try's timeout (recorded as no answer) while the others are delivered;
// and with many deliveries due (a flood queued for it) it takes no more
// of a pass than its first tries: once one of its
// tries gets no answer, its other deliveries of the pass are put off by
// the first retry delay without a try (their attempts unchanged, saying
// why), so that other workspaces' receivers are not kept waiting behind
// its timeouts.
func TestHangingReceiverHoldsUpNothing(t *testing.T) {
	release := make(chan struct{})
	var hits atomic.Int32
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1); <-release }))
	defer hang.Close()
	defer close(release)
	ok := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer ok.Close()
	f := newFixture(t, delivery.Config{TryTimeout: 300 * time.Millisecond, Parallel: 2})
	f.webhook("slow", hang.URL, "s")
	f.webhook("fast", ok.URL, "s")
	var slow, fast []*notify.Delivery
	for i := range 20 {
		slow = append(slow, f.queue("slow", notify.ChannelWebhook, hang.URL, fmt.Sprint("s", i)))
	}
	for i := range 3 {
		fast = append(fast, f.queue("fast", notify.ChannelWebhook, ok.URL, fmt.Sprint("f", i)))
	}
	f.run()
	for _, d := range fast {
		if b := f.get("fast", d.ID); b.Status != notify.DeliveryDelivered {
			t.Errorf("fast receiver: %+v", b)
		}
	}
	tried, putOff := 0, 0
	for _, d := range slow {
		b := f.get("slow", d.ID)
		switch {
		case b.Attempts == 1 && b.LastError == "no answer within 300ms":
			tried++
		case b.Attempts == 0 && b.Status == notify.DeliveryPending && b.NextAttempt.Equal(f.now.Add(10*time.Second)) && strings.Contains(b.LastError, "not tried"):
			putOff++
		default:
			t.Errorf("hanging receiver's delivery: %+v", b)
		}
	}
	if tried > 2 || tried+putOff != 20 || int(hits.Load()) != tried {
		t.Errorf("%d tried (receiver hit %d times), %d put off; want at most 2 tries (one per slot)", tried, hits.Load(), putOff)
	}
}
