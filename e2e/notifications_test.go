package e2e_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/domain/notify"
	"github.com/shoal-ml/shoal/internal/testsmtp"
)

// TestNotificationMailOnFailedJob: the real server with an SMTP server
// in its config (Debian's aiosmtpd on a private port); a job whose
// notification_setting asks for mail on job_failed fails, and the mail
// reaches the SMTP server from the configured sender, to the job's
// addresses, saying which job failed and how; `job show` keeps the
// setting.
func TestNotificationMailOnFailedJob(t *testing.T) {
	t.Parallel()
	smtpd := testsmtp.Start(t)
	cfg := fastJobsConfig + fmt.Sprintf("notifications:\n  smtp: {host: %s, port: %d, from: \"Shoal <shoal@example.com>\"}\n", smtpd.Host, smtpd.Port)
	s := startServer(t, serverOpts{Config: cfg})
	const cluster = "notify-cluster"
	createCluster(t, s, cluster, "--max-instances", "1")
	name := submitJob(t, s, jobFile(t, "notify-fail.yml"), "--compute", cluster)
	waitJob(t, s, name, 60*time.Second, "Failed")

	msg := smtpd.Next(t, 60*time.Second)
	if msg.From != "shoal@example.com" || strings.Join(msg.To, ",") != "ml-team@example.com,oncall@example.org" {
		t.Errorf("envelope from %q to %v", msg.From, msg.To)
	}
	if !strings.Contains(msg.Data, "Subject: [Shoal] Job "+name+" failed") || !strings.Contains(msg.Data, "compute: "+cluster) {
		t.Errorf("mail:\n%s", msg.Data)
	}
	show := mustRun(t, s.env, "job", "show", "-n", name, "-o", "yaml")
	if !strings.Contains(show, "notification_setting:") || !strings.Contains(show, "ml-team@example.com") {
		t.Errorf("job show lacks the notification_setting:\n%s", show)
	}
}

// TestNotificationWebhookOnFailedJob: an Owner's webhook (`shoal
// webhook create`, on a server whose config allows http and private
// URLs, as a receiver on this host needs) gets a signed POST when a job
// fails: the signature checks with the secret create printed once, and
// `shoal webhook deliveries` lists it delivered.
func TestNotificationWebhookOnFailedJob(t *testing.T) {
	t.Parallel()
	type post struct {
		body            []byte
		sig, event, dlv string
	}
	got := make(chan post, 10)
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- post{b, r.Header.Get(notify.HeaderSignature), r.Header.Get(notify.HeaderEvent), r.Header.Get(notify.HeaderDelivery)}
	}))
	defer recv.Close()
	cfg := fastJobsConfig + "notifications:\n  allow_private_webhook_urls: true\n  allow_http_webhook_urls: true\n"
	s := startServer(t, serverOpts{Config: cfg})
	created := runJSON[map[string]any](t, s.env, "webhook", "create", "--name", "ops", "--url", recv.URL+"/shoal", "--events", "job_failed,job_queued_too_long", "-o", "json")
	secret := jsonStr(created["secret"])
	if secret == "" {
		t.Fatalf("webhook create printed no secret: %v", created)
	}
	const cluster = "hook-cluster"
	createCluster(t, s, cluster, "--max-instances", "1")
	name := submitJob(t, s, jobFile(t, "hello.yml"), "--compute", cluster, "--set", "command=exit 4")
	waitJob(t, s, name, 60*time.Second, "Failed")

	var p post
	select {
	case p = <-got:
	case <-time.After(60 * time.Second):
		t.Fatal("no POST reached the receiver")
	}
	if err := notify.Verify([]byte(secret), p.sig, p.body, time.Now(), 5*time.Minute); err != nil {
		t.Errorf("signature: %v", err)
	}
	var payload notify.Payload
	if err := json.Unmarshal(p.body, &payload); err != nil || payload.Event != notify.JobFailed || payload.ResourceName != name || p.event != notify.JobFailed || p.dlv == "" {
		t.Errorf("POST %s %q %q (%v)", p.body, p.event, p.dlv, err)
	}
	waitFor(t, 30*time.Second, "the delivery listed as delivered", func() (bool, string) {
		out, _, _ := run(t, s.env, "webhook", "deliveries", "-n", "ops", "-o", "json")
		return strings.Contains(out, `"delivered"`), out
	})
	if out := mustRun(t, s.env, "webhook", "show", "-n", "ops", "-o", "json"); strings.Contains(out, secret) {
		t.Errorf("webhook show prints the secret: %s", out)
	}
}
