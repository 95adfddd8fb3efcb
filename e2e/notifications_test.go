package e2e_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

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
