package notify_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/domain/notify"
)

func TestDecodeSetting(t *testing.T) {
	s, err := notify.DecodeSetting([]byte(`{"emails": ["a@example.com", "b.c+ml@lab.example.org"], "email_on": ["job_completed", "JobFailed", "job_cancelled", "job_queued_too_long", "job_failed"]}`), "notification_setting")
	if err != nil {
		t.Fatal(err)
	}
	want := &notify.NotificationSetting{Emails: []string{"a@example.com", "b.c+ml@lab.example.org"},
		EmailOn: []string{notify.JobCompleted, notify.JobFailed, notify.JobCanceled, notify.JobQueuedTooLong}}
	if !reflect.DeepEqual(s, want) {
		t.Errorf("got %+v, want %+v", s, want)
	}
	if !s.Wants(notify.JobCanceled) || (&notify.NotificationSetting{EmailOn: []string{notify.JobFailed}}).Wants(notify.JobFailed) {
		t.Error("Wants: a listed event with addresses is wanted, one without addresses is not")
	}
	if s, err := notify.DecodeSetting([]byte(`null`), "x"); s != nil || err != nil {
		t.Errorf("null: %v %v", s, err)
	}
}

// Hostile and mistaken settings are refused naming the field.
func TestDecodeSettingRefusals(t *testing.T) {
	many := `"a@b.co"` + strings.Repeat(`, "a@b.co"`, notify.MaxEmails)
	for doc, want := range map[string]string{
		`[]`:                                     "notification_setting: must be a mapping",
		`{"email": ["a@b.co"]}`:                  `notification_setting.email: unknown key (did you mean "emails"?)`,
		`{"emails": "a@b.co"}`:                   "notification_setting.emails: must be a list of strings",
		`{"emails": ["not an address"]}`:         "notification_setting.emails",
		`{"emails": ["a@b.co", "Eve <e@x.io>"]}`: "notification_setting.emails",
		`{"emails": ["a@b.co\r\nBcc: e@x.io"]}`:  "notification_setting.emails",
		`{"emails": ["a@b.co, e@x.io"]}`:         "notification_setting.emails",
		`{"emails": [` + many + `]}`:             "notification_setting.emails: has 21 addresses",
		// A line or paragraph separator, a C1 control (NEL): no header
		// or envelope line may carry one.
		"{\"emails\": [\"a@exam\u2028ple.com\"]}": "notification_setting.emails",
		"{\"emails\": [\"a@b.co\u0085\"]}":        "notification_setting.emails",
		// An address literal would have the SMTP relay deliver to an
		// IP of the mail's choosing (its own loopback among them).
		`{"emails": ["root@[127.0.0.1]"]}`:          "notification_setting.emails: \"root@[127.0.0.1]\" names an IP address",
		`{"emails": ["root@[IPv6:::1]"]}`:           "notification_setting.emails",
		`{"emails": ["a@b.co"], "email_on": ["x"]}`: `notification_setting.email_on[0]: unknown event "x"`,
		`{"email_on": ["job_started"]}`:             "notification_setting.email_on[0]",
	} {
		_, err := notify.DecodeSetting([]byte(doc), "notification_setting")
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want %q", doc, err, want)
		}
	}
}
