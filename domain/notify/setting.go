package notify

import (
	"bytes"
	"encoding/json"
	"sort"
	"strconv"
	"strings"

	"github.com/shoal-ml/shoal/domain/core"
)

// JobEmailEvents are the events a job's notification_setting.email_on may
// list, in their canonical spelling.
var JobEmailEvents = []string{JobCompleted, JobFailed, JobCanceled, JobQueuedTooLong}

// emailOnSpellings maps every accepted spelling, lower-cased and without
// underscores, to its event: Azure's YAML writes job_cancelled, its REST
// API and SDK JobCancelled.
var emailOnSpellings = map[string]string{
	"jobcompleted": JobCompleted, "jobfailed": JobFailed, "jobcanceled": JobCanceled, "jobcancelled": JobCanceled,
	"jobqueuedtoolong": JobQueuedTooLong,
}

// CanonicalEmailOn returns the event an email_on value names, in
// canonical spelling, and false for a value that names none.
func CanonicalEmailOn(v string) (string, bool) {
	e, ok := emailOnSpellings[strings.ToLower(strings.ReplaceAll(strings.TrimSpace(v), "_", ""))]
	return e, ok
}

// DecodeSetting reads a job's notification_setting mapping (JSON), nil
// when absent or null; field is where it is in the document
// ("notification_setting", "jobs.train.notification_setting"). Unknown
// keys, addresses that are not plain addr-specs and unknown email_on
// values are field errors; email_on is put in canonical spelling.
func DecodeSetting(raw json.RawMessage, field string) (*NotificationSetting, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil, nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return nil, core.FieldErrorf(field, "must be a mapping with emails and email_on")
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	s := &NotificationSetting{}
	for _, k := range keys {
		var dst *[]string
		switch k {
		case "emails":
			dst = &s.Emails
		case "email_on":
			dst = &s.EmailOn
		default:
			return nil, core.FieldErrorf(field+"."+k, "unknown key%s; notification_setting has emails and email_on",
				core.DidYouMean(k, []string{"emails", "email_on"}))
		}
		if v := bytes.TrimSpace(m[k]); !bytes.Equal(v, []byte("null")) {
			if err := json.Unmarshal(v, dst); err != nil {
				return nil, core.FieldErrorf(field+"."+k, "must be a list of strings")
			}
		}
	}
	if err := s.Normalize(field); err != nil {
		return nil, err
	}
	return s, nil
}

// Normalize checks a setting (however it arrived: YAML, ARM) and puts
// email_on in canonical spelling, without repeats.
func (s *NotificationSetting) Normalize(field string) error {
	if err := CheckEmails(field+".emails", s.Emails); err != nil {
		return err
	}
	var on []string
	seen := map[string]bool{}
	for i, v := range s.EmailOn {
		e, ok := CanonicalEmailOn(v)
		if !ok {
			return core.FieldErrorf(field+".email_on["+strconv.Itoa(i)+"]", "unknown event %q; use job_completed, job_failed, job_cancelled or job_queued_too_long", core.Short(v))
		}
		if !seen[e] {
			seen[e] = true
			on = append(on, e)
		}
	}
	s.EmailOn = on
	return nil
}

// Wants reports whether the setting mails on event.
func (s *NotificationSetting) Wants(event string) bool {
	if s == nil || len(s.Emails) == 0 {
		return false
	}
	for _, e := range s.EmailOn {
		if e == event {
			return true
		}
	}
	return false
}
