package config_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/server/config"
)

func TestNotificationDefaults(t *testing.T) {
	cfg, err := config.Parse(strings.NewReader(""))
	if err != nil {
		t.Fatal(err)
	}
	n, err := cfg.NotificationPolicy()
	if err != nil {
		t.Fatal(err)
	}
	if n.SMTP != nil || n.AllowPrivateWebhookURLs || n.AllowHTTPWebhookURLs {
		t.Errorf("defaults allow more than nothing: %+v", n)
	}
	if n.QueueWaitThreshold != 30*time.Minute || n.GPUIdleThresholdPercent != 50 || n.GPUIdleWindow != 30*time.Minute ||
		n.ProvisioningStuckAfter != 15*time.Minute || n.IdleShutdownWarning != 10*time.Minute {
		t.Errorf("defaults = %+v", n)
	}
}

func TestNotificationsSection(t *testing.T) {
	pw := filepath.Join(t.TempDir(), "smtp.pw")
	if err := os.WriteFile(pw, []byte("s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	doc := `
notifications:
  smtp: {host: mail.example.com, port: 587, from: "Shoal <shoal@example.com>", username: shoal, password_file: ` + pw + `, starttls: required}
  allow_private_webhook_urls: true
  allow_http_webhook_urls: true
  queue_wait_threshold: 5m
  gpu_idle: {threshold_percent: 20, window: 1h}
  provisioning_stuck_after: 20m
  idle_shutdown_warning: 2m
`
	cfg, err := config.Parse(strings.NewReader(doc))
	if err != nil {
		t.Fatal(err)
	}
	n, err := cfg.NotificationPolicy()
	if err != nil {
		t.Fatal(err)
	}
	want := config.SMTP{Host: "mail.example.com", Port: 587, From: "Shoal <shoal@example.com>", Username: "shoal", Password: "s3cret", StartTLS: "required"}
	if n.SMTP == nil || *n.SMTP != want {
		t.Errorf("smtp = %+v, want %+v", n.SMTP, want)
	}
	if !n.AllowPrivateWebhookURLs || !n.AllowHTTPWebhookURLs || n.QueueWaitThreshold != 5*time.Minute || n.GPUIdleThresholdPercent != 20 ||
		n.GPUIdleWindow != time.Hour || n.ProvisioningStuckAfter != 20*time.Minute || n.IdleShutdownWarning != 2*time.Minute {
		t.Errorf("policy = %+v", n)
	}
	cfg, _ = config.Parse(strings.NewReader("notifications: {smtp: {host: localhost, from: a@b.c}}"))
	if n, err := cfg.NotificationPolicy(); err != nil || n.SMTP.Port != 25 || n.SMTP.StartTLS != "auto" {
		t.Errorf("smtp defaults = %+v, %v", n, err)
	}
}

func TestNotificationsErrors(t *testing.T) {
	for doc, part := range map[string]string{
		"notifications: {gpu_idle: {threshold_percent: 0}}":                                "notifications.gpu_idle.threshold_percent",
		"notifications: {gpu_idle: {threshold_percent: 101}}":                              "notifications.gpu_idle.threshold_percent",
		"notifications: {queue_wait_threshold: -1m}":                                       "is not a duration",
		"notifications: {smtp: {from: a@b.c}}":                                             "notifications.smtp.host",
		"notifications: {smtp: {host: 'evil.com\r\nRCPT', from: a@b.c}}":                   "notifications.smtp.host",
		"notifications: {smtp: {host: h, port: 70000, from: a@b.c}}":                       "notifications.smtp.port",
		"notifications: {smtp: {host: h, from: not-an-address}}":                           "notifications.smtp.from",
		"notifications: {smtp: {host: h, from: \"a@b.c\\r\\nBcc: x@y.z\"}}":                "notifications.smtp.from",
		"notifications: {smtp: {host: h, from: a@b.c, starttls: maybe}}":                   "notifications.smtp.starttls",
		"notifications: {smtp: {host: h, from: a@b.c, username: u}}":                       "username and password_file go together",
		"notifications: {smtp: {host: h, from: a@b.c, username: u, password_file: /nope}}": "notifications.smtp.password_file",
	} {
		cfg, err := config.Parse(strings.NewReader(doc))
		if err == nil {
			_, err = cfg.NotificationPolicy()
		}
		if err == nil || !strings.Contains(err.Error(), part) {
			t.Errorf("%s: error %v, want one naming %q", doc, err, part)
		}
	}
	if _, err := config.Parse(strings.NewReader("notifications: {smpt: {}}")); err == nil || !strings.Contains(err.Error(), "smpt") {
		t.Errorf("unknown key: %v", err)
	}
}
