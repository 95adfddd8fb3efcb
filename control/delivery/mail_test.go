package delivery_test

import (
	"context"
	"mime"
	"strings"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/control/delivery"
	"github.com/shoal-ml/shoal/domain/notify"
	"github.com/shoal-ml/shoal/internal/testsmtp"
	"github.com/shoal-ml/shoal/server/config"
)

// A job's notification mail reaches a real SMTP server (aiosmtpd): the
// From of the config, every recipient, a one-line subject even when the
// event's words carry line breaks (no header can be added), the text.
func TestMailReachesSMTPServer(t *testing.T) {
	srv := testsmtp.Start(t)
	m := delivery.NewMailer(config.SMTP{Host: srv.Host, Port: srv.Port, From: "Shoal <shoal@example.com>", StartTLS: config.StartTLSAuto}, nil)
	f := newFixture(t, delivery.Config{Mail: m})
	d := f.queue("", notify.ChannelEmail, "a@example.com,b@example.org", "job_failed:train-1")
	f.run()
	msg := srv.Next(t, 30*time.Second)
	if msg.From != "shoal@example.com" || strings.Join(msg.To, ",") != "a@example.com,b@example.org" {
		t.Errorf("envelope from %q to %v", msg.From, msg.To)
	}
	if !strings.Contains(msg.Data, "Subject: [Shoal] Job train-1 failed\r\n") || !strings.Contains(msg.Data, "exit code 1") ||
		!strings.Contains(msg.Data, "From: Shoal <shoal@example.com>") {
		t.Errorf("message:\n%s", msg.Data)
	}
	if b := f.get("", d.ID); b.Status != notify.DeliveryDelivered {
		t.Errorf("recorded %+v", b)
	}

	// Hostile words in the subject stay in the subject.
	if err := m.Send(context.Background(), []string{"a@example.com"}, "done\r\nBcc: eve@example.com", "body\n.\nQUIT", f.now); err != nil {
		t.Fatal(err)
	}
	msg = srv.Next(t, 30*time.Second)
	head, body, _ := strings.Cut(msg.Data, "\r\n\r\n")
	if strings.Contains(head, "\r\nBcc:") || len(msg.To) != 1 {
		t.Errorf("a header was added: %q to %v", head, msg.To)
	}
	var subj string
	for _, l := range strings.Split(head, "\r\n") {
		if s, ok := strings.CutPrefix(l, "Subject: "); ok {
			subj, _ = new(mime.WordDecoder).DecodeHeader(s)
		}
	}
	if subj != "done  Bcc: eve@example.com" || !strings.Contains(body, "body\r\n.\r\nQUIT") {
		t.Errorf("subject %q, body %q", subj, body)
	}
}

// A password is never sent in clear: aiosmtpd offers no STARTTLS, so
// a config with a username fails the try saying why (and
// starttls: required fails before any mail is sent).
func TestMailRefusesAuthWithoutTLS(t *testing.T) {
	srv := testsmtp.Start(t)
	for _, c := range []config.SMTP{
		{Host: srv.Host, Port: srv.Port, From: "s@example.com", Username: "u", Password: "p", StartTLS: config.StartTLSAuto},
		{Host: srv.Host, Port: srv.Port, From: "s@example.com", StartTLS: config.StartTLSRequired},
	} {
		err := delivery.NewMailer(c, nil).Send(context.Background(), []string{"a@example.com"}, "s", "b", time.Now())
		if err == nil || !strings.Contains(err.Error(), "TLS") {
			t.Errorf("%+v: %v", c, err)
		}
	}
}

// Without an SMTP server configured a mail delivery's try fails saying
// so, and it is retried as any other (a restart with notifications.smtp
// sends it).
func TestMailWithoutSMTPServer(t *testing.T) {
	f := newFixture(t, delivery.Config{})
	d := f.queue("", notify.ChannelEmail, "a@example.com", "k")
	f.run()
	if b := f.get("", d.ID); b.Status != notify.DeliveryPending || !strings.Contains(b.LastError, "no SMTP server is configured") {
		t.Errorf("%+v", b)
	}
}
