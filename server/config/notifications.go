package config

import (
	"fmt"
	"net/mail"
	"os"
	"strings"
	"time"
)

// NotificationsConfig is the `notifications:` section: where mail goes,
// which webhook URLs are allowed, and the thresholds of the watchers that
// turn conditions into notification events.
type NotificationsConfig struct {
	// SMTP is the mail server jobs' notification_setting and e-mail
	// webhooks send through; none: such mail is recorded as failed, saying
	// no SMTP server is configured.
	SMTP *SMTPConfig `yaml:"smtp"`
	// AllowPrivateWebhookURLs lets webhooks reach loopback, link-local
	// (the metadata address among them), unspecified and private
	// addresses; default false (a user's webhook must not reach what is
	// the server's).
	AllowPrivateWebhookURLs bool `yaml:"allow_private_webhook_urls"`
	// AllowHTTPWebhookURLs accepts http:// webhook URLs; default false
	// (https only, so the payload and signature travel encrypted).
	AllowHTTPWebhookURLs bool `yaml:"allow_http_webhook_urls"`
	// QueueWaitThreshold: a job queued longer is a job_queued_too_long
	// event. Default 30m.
	QueueWaitThreshold Duration `yaml:"queue_wait_threshold"`
	// GPUIdle: a running job whose GPUs stay under ThresholdPercent for
	// the whole Window is a gpu_underutilized event.
	GPUIdle GPUIdleConfig `yaml:"gpu_idle"`
	// ProvisioningStuckAfter: a node provisioning longer is a
	// compute_provisioning_stuck event. Default 15m.
	ProvisioningStuckAfter Duration `yaml:"provisioning_stuck_after"`
	// IdleShutdownWarning: an instance idle shutdown stops within this is
	// an instance_idle_shutdown event. Default 10m.
	IdleShutdownWarning Duration `yaml:"idle_shutdown_warning"`
}

// GPUIdleConfig is notifications.gpu_idle.
type GPUIdleConfig struct {
	// ThresholdPercent: utilisation under it counts as idle. Default 50.
	ThresholdPercent *float64 `yaml:"threshold_percent"`
	// Window: how long every sample must stay under. Default 30m.
	Window Duration `yaml:"window"`
}

// SMTPConfig is notifications.smtp.
type SMTPConfig struct {
	Host string `yaml:"host"`
	// Port defaults to 25.
	Port int `yaml:"port"`
	// From is the sender's address (RFC 5322), e.g. "Shoal
	// <shoal@example.com>".
	From string `yaml:"from"`
	// Username turns on SMTP AUTH (PLAIN), sent only over TLS; the
	// password is read from PasswordFile (kept out of the config, as
	// secrets_key_file keeps the server's key).
	Username     string `yaml:"username"`
	PasswordFile string `yaml:"password_file"`
	// StartTLS: "auto" (the default: when the server offers it),
	// "required" (refuse to send in clear) or "never".
	StartTLS string `yaml:"starttls"`
}

// StartTLS modes of SMTPConfig.StartTLS.
const (
	StartTLSAuto     = "auto"
	StartTLSRequired = "required"
	StartTLSNever    = "never"
)

// Notifications is the `notifications:` section checked, with the
// defaults filled in.
type Notifications struct {
	// SMTP is nil when no mail server is configured.
	SMTP                    *SMTP
	AllowPrivateWebhookURLs bool
	AllowHTTPWebhookURLs    bool
	QueueWaitThreshold      time.Duration
	GPUIdleThresholdPercent float64
	GPUIdleWindow           time.Duration
	ProvisioningStuckAfter  time.Duration
	IdleShutdownWarning     time.Duration
}

// SMTP is a checked SMTPConfig; Password is read from the password file.
type SMTP struct {
	Host     string
	Port     int
	From     string
	Username string
	Password string
	StartTLS string
}

// Notification defaults.
const (
	DefaultQueueWaitThreshold      = 30 * time.Minute
	DefaultGPUIdleThresholdPercent = 50.0
	DefaultGPUIdleWindow           = 30 * time.Minute
	DefaultProvisioningStuckAfter  = 15 * time.Minute
	DefaultIdleShutdownWarning     = 10 * time.Minute
)

// NotificationPolicy checks the notifications section, reads the SMTP
// password file and fills in the defaults. Errors name the key.
func (c *Config) NotificationPolicy() (*Notifications, error) {
	nc := c.Notifications
	n := &Notifications{
		AllowPrivateWebhookURLs: nc.AllowPrivateWebhookURLs,
		AllowHTTPWebhookURLs:    nc.AllowHTTPWebhookURLs,
		QueueWaitThreshold:      orDefault(nc.QueueWaitThreshold, DefaultQueueWaitThreshold),
		GPUIdleThresholdPercent: DefaultGPUIdleThresholdPercent,
		GPUIdleWindow:           orDefault(nc.GPUIdle.Window, DefaultGPUIdleWindow),
		ProvisioningStuckAfter:  orDefault(nc.ProvisioningStuckAfter, DefaultProvisioningStuckAfter),
		IdleShutdownWarning:     orDefault(nc.IdleShutdownWarning, DefaultIdleShutdownWarning),
	}
	if p := nc.GPUIdle.ThresholdPercent; p != nil {
		if *p <= 0 || *p > 100 {
			return nil, fmt.Errorf("notifications.gpu_idle.threshold_percent: must be above 0 and at most 100, got %g", *p)
		}
		n.GPUIdleThresholdPercent = *p
	}
	if nc.SMTP != nil {
		s, err := nc.SMTP.check()
		if err != nil {
			return nil, err
		}
		n.SMTP = s
	}
	return n, nil
}

func orDefault(d Duration, def time.Duration) time.Duration {
	if d == 0 {
		return def
	}
	return time.Duration(d)
}

func (sc *SMTPConfig) check() (*SMTP, error) {
	s := &SMTP{Host: sc.Host, Port: sc.Port, From: sc.From, Username: sc.Username, StartTLS: sc.StartTLS}
	if s.Host == "" || strings.ContainsAny(s.Host, " /:@") && !strings.HasPrefix(s.Host, "[") {
		return nil, fmt.Errorf("notifications.smtp.host: must be a host name or address, got %q", s.Host)
	}
	if s.Port == 0 {
		s.Port = 25
	}
	if s.Port < 1 || s.Port > 65535 {
		return nil, fmt.Errorf("notifications.smtp.port: must be 1-65535, got %d", s.Port)
	}
	if _, err := mail.ParseAddress(s.From); err != nil || strings.ContainsAny(s.From, "\r\n") {
		return nil, fmt.Errorf("notifications.smtp.from: must be an e-mail address such as \"Shoal <shoal@example.com>\", got %q", s.From)
	}
	switch s.StartTLS {
	case "":
		s.StartTLS = StartTLSAuto
	case StartTLSAuto, StartTLSRequired, StartTLSNever:
	default:
		return nil, fmt.Errorf("notifications.smtp.starttls: must be auto, required or never, got %q", s.StartTLS)
	}
	if (sc.Username == "") != (sc.PasswordFile == "") {
		return nil, fmt.Errorf("notifications.smtp: username and password_file go together (AUTH needs both)")
	}
	if sc.PasswordFile != "" {
		b, err := os.ReadFile(sc.PasswordFile)
		if err != nil {
			return nil, fmt.Errorf("notifications.smtp.password_file: %w", err)
		}
		s.Password = strings.TrimRight(string(b), "\r\n")
		if s.Password == "" {
			return nil, fmt.Errorf("notifications.smtp.password_file: %s is empty", sc.PasswordFile)
		}
	}
	return s, nil
}
