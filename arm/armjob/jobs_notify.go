package armjob

import (
	"encoding/json"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/notify"
)

// emailOnREST is each email_on event as Azure's REST API spells it
// (EmailNotificationEnableType); Shoal's own job_queued_too_long keeps a
// spelling of the same shape.
var emailOnREST = map[string]string{notify.JobCompleted: "JobCompleted", notify.JobFailed: "JobFailed",
	notify.JobCanceled: "JobCancelled", notify.JobQueuedTooLong: "JobQueuedTooLong"}

// notificationSettingDoc turns notificationSetting {emails, emailOn} into
// the YAML's {emails, email_on}; the job's decoder checks the addresses
// and events (JobCompleted is read as job_completed). Azure's webhooks
// there (its own event hooks) are refused: Shoal's webhooks are the
// workspace's (`shoal webhook create`).
func notificationSettingDoc(p obj) (map[string]any, error) {
	o, err := p.sub("notificationSetting")
	if err != nil {
		return nil, err
	}
	// Azure's own webhooks are refused, but an SDK that sends none
	// (null or {}) is not.
	known := []string{"emails", "emailOn", "email_on"}
	var hooks map[string]json.RawMessage
	if w := o.raw("webhooks"); w == nil || json.Unmarshal(w, &hooks) == nil && len(hooks) == 0 {
		known = append(known, "webhooks")
	}
	if err := o.checkKeys("notificationSetting", known...); err != nil {
		return nil, err
	}
	out := map[string]any{}
	for _, k := range []struct{ rest, yaml string }{{"emails", "emails"}, {"emailOn", "email_on"}} {
		kk, raw := o.key(k.rest, k.yaml)
		if raw == nil {
			continue
		}
		var list []string
		if err := json.Unmarshal(raw, &list); err != nil {
			return nil, core.FieldErrorf(o.field(kk), "must be a list of strings")
		}
		out[k.yaml] = list
	}
	return out, nil
}

// notificationSettingREST is a job's notification_setting as Azure's REST
// answers it, nil when it has none.
func notificationSettingREST(j *job.Job) map[string]any {
	s := j.Notification()
	if s == nil {
		return nil
	}
	on := make([]string, 0, len(s.EmailOn))
	for _, e := range s.EmailOn {
		on = append(on, emailOnREST[e])
	}
	return map[string]any{"emails": append([]string{}, s.Emails...), "emailOn": on}
}
