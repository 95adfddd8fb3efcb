// Package notify holds what Shoal tells people and their tools when
// something happens: the events a notification can be about, a job's
// `notification_setting` (Azure's emails), webhooks a workspace Owner
// registers, and the deliveries the server sends and retries.
package notify

import (
	"encoding/json"
	"time"
)

// Notification events: what a webhook subscribes to (`--events`) and a
// job's `notification_setting.email_on` lists.
const (
	JobCompleted = "job_completed"
	JobFailed    = "job_failed"
	// JobCanceled is also accepted as Azure spells it, job_cancelled.
	JobCanceled = "job_canceled"
	// JobQueuedTooLong: a job waited in the queue longer than the
	// server's threshold; the payload carries its wait reason.
	JobQueuedTooLong = "job_queued_too_long"
	// BudgetThreshold: a budget's spend crossed 50, 80 or 100 %.
	BudgetThreshold = "budget_threshold"
	// GPUUnderutilized: a running job's GPUs stayed under the threshold
	// for the whole window.
	GPUUnderutilized = "gpu_underutilized"
	// NodeLost: a node stopped reporting and its lease expired.
	NodeLost = "node_lost"
	// ProvisioningStuck: a compute's node has been provisioning longer
	// than the server's threshold.
	ProvisioningStuck = "compute_provisioning_stuck"
	// InstanceIdleShutdown: a compute instance is about to be stopped
	// for idleness.
	InstanceIdleShutdown = "instance_idle_shutdown"
	// ScheduleFired: a job schedule fired (a job submitted, a missed
	// firing caught up, or a firing skipped, with why).
	ScheduleFired = "schedule_fired"
)

// Events lists every notification event, in the order docs show them.
var Events = []string{JobCompleted, JobFailed, JobCanceled, JobQueuedTooLong, BudgetThreshold,
	GPUUnderutilized, NodeLost, ProvisioningStuck, InstanceIdleShutdown, ScheduleFired}

// NotificationSetting is a job's `notification_setting` (Azure's
// NotificationSetting): who is emailed, and on which of the job's events.
type NotificationSetting struct {
	// Emails are the addresses mailed (at most MaxEmails).
	Emails []string `json:"emails,omitempty"`
	// EmailOn lists job_completed, job_failed, job_cancelled (Azure's)
	// and job_queued_too_long (Shoal's).
	EmailOn []string `json:"email_on,omitempty"`
}

// MaxEmails bounds the addresses of one job's notification_setting or one
// webhook.
const MaxEmails = 20

// Webhook is a workspace's subscription (`shoal webhook create`): the
// events it wants, sent as signed HTTP POSTs to URL, or as mail to
// Emails.
type Webhook struct {
	Workspace string `json:"workspace,omitempty"`
	// Name is unique in the workspace (compared case-insensitively).
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	// URL receives the events (https, or http where the server allows);
	// empty when Emails is set.
	URL string `json:"url,omitempty"`
	// Emails receive the events by mail instead of URL.
	Emails []string `json:"emails,omitempty"`
	// Events are the notification events it wants.
	Events []string `json:"events"`
	// Disabled webhooks receive nothing.
	Disabled  bool      `json:"disabled,omitempty"`
	CreatedBy string    `json:"created_by,omitempty"`
	CreatedOn time.Time `json:"created_on,omitempty"`
	// Dropped counts the deliveries dropped because too many were
	// pending for it (a receiver that hangs or fails for long).
	Dropped int64 `json:"dropped,omitempty"`
	// SecretHint is the secret's first characters, to tell secrets apart
	// (the secret itself is shown once, at create, and kept sealed).
	SecretHint string `json:"secret_hint,omitempty"`
}

// Delivery channels.
const (
	ChannelWebhook = "webhook"
	ChannelEmail   = "email"
)

// Delivery states.
const (
	DeliveryPending   = "pending"
	DeliveryDelivered = "delivered"
	DeliveryFailed    = "failed"
	DeliveryDropped   = "dropped"
)

// Delivery is one notification to one receiver: a webhook's POST or an
// email, retried with backoff until delivered or out of tries.
type Delivery struct {
	ID        int64  `json:"id"`
	Workspace string `json:"workspace"`
	// Webhook is the webhook's name; empty for a job's
	// notification_setting mail.
	Webhook string `json:"webhook,omitempty"`
	Channel string `json:"channel"`
	// Target is the URL or the comma-separated addresses.
	Target string `json:"target"`
	// Event is the notification event; Key makes it unique per receiver
	// (the same event is never delivered twice to one receiver).
	Event string `json:"event"`
	Key   string `json:"key"`
	// Payload is the body sent (webhooks) or mailed (as text).
	Payload json.RawMessage `json:"payload"`
	Status  string          `json:"status"`
	// Attempts counts the tries; NextAttempt is when the next is due.
	Attempts    int       `json:"attempts"`
	NextAttempt time.Time `json:"next_attempt"`
	// LastError is the last try's failure, as the receiver or the
	// network said it; StatusCode the receiver's HTTP status.
	LastError  string     `json:"last_error,omitempty"`
	StatusCode int        `json:"status_code,omitempty"`
	CreatedOn  time.Time  `json:"created_on"`
	UpdatedOn  time.Time  `json:"updated_on"`
	Delivered  *time.Time `json:"delivered,omitempty"`
}

// Payload is the JSON body of a webhook's POST and the content of a
// notification mail.
type Payload struct {
	// ID is unique per event (receivers deduplicate by it).
	ID        string    `json:"id"`
	Event     string    `json:"event"`
	Time      time.Time `json:"time"`
	Workspace string    `json:"workspace"`
	// ResourceType and ResourceName say what it is about (job, compute,
	// budget, schedule).
	ResourceType string `json:"resource_type"`
	ResourceName string `json:"resource_name"`
	// Summary is one line a person reads; Reason the event's own words.
	Summary string `json:"summary"`
	Reason  string `json:"reason,omitempty"`
	// Details carries what the event knows: a job's status, compute,
	// error and wait reason, a budget's percentage, a GPU's utilisation.
	Details map[string]any `json:"details,omitempty"`
	// URL is the studio's page of the resource, when the server knows
	// its own address.
	URL string `json:"url,omitempty"`
}

// Header names of a webhook's POST.
const (
	// HeaderSignature is "t=<unix seconds>,v1=<hex HMAC-SHA256 of
	// "<t>.<body>" under the webhook's secret>".
	HeaderSignature = "X-Shoal-Signature"
	// HeaderEvent is the notification event.
	HeaderEvent = "X-Shoal-Event"
	// HeaderDelivery is the delivery's ID (the same on every retry).
	HeaderDelivery = "X-Shoal-Delivery"
)
