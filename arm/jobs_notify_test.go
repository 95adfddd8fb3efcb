package arm_test

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/arm"
	"github.com/shoal-ml/shoal/arm/armjob"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/notify"
)

// withNotification adds Azure's notificationSetting to a golden body.
func withNotification(t *testing.T, body []byte, ns string) []byte {
	t.Helper()
	var r map[string]any
	if err := json.Unmarshal(body, &r); err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal([]byte(ns), &v); err != nil {
		t.Fatal(err)
	}
	r["properties"].(map[string]any)["notificationSetting"] = v
	b, _ := json.Marshal(r)
	return b
}

// TestJobNotificationSettingBothWays: Azure's notificationSetting (REST
// spellings) is kept on every job kind, answered back in REST spelling,
// and survives the SDK's PUT of what it read.
func TestJobNotificationSettingBothWays(t *testing.T) {
	scope := arm.Scope{Subscription: "s", ResourceGroup: "rg"}
	want := &notify.NotificationSetting{Emails: []string{"ml@example.com"}, EmailOn: []string{notify.JobCompleted, notify.JobCanceled}}
	for _, name := range []string{"command.json", "sweep.json", "pipeline.json"} {
		body := withNotification(t, golden(t, name), `{"emails": ["ml@example.com"], "emailOn": ["JobCompleted", "JobCancelled"]}`)
		j := decodeJob(t, translate(t, body, nil))
		if got := j.Notification(); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: notification_setting %+v, want %+v", name, got, want)
		}
		b, _ := json.Marshal(armjob.ToJobResource(scope, "https://shoal.example", j))
		var back struct {
			Properties struct {
				NotificationSetting map[string][]string `json:"notificationSetting"`
			} `json:"properties"`
		}
		json.Unmarshal(b, &back)
		if ns := back.Properties.NotificationSetting; !reflect.DeepEqual(ns["emailOn"], []string{"JobCompleted", "JobCancelled"}) || !reflect.DeepEqual(ns["emails"], want.Emails) {
			t.Errorf("%s: answered %v", name, ns)
		}
		again, err := armjob.JobDocument(context.Background(), "default", "j1", b, nil)
		if err != nil {
			t.Fatalf("%s: PUT back: %v", name, err)
		}
		if got := decodeJob(t, again).Notification(); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: after PUT back %+v", name, got)
		}
	}
	// Azure's webhooks key with none in it is accepted.
	for _, none := range []string{`null`, `{}`} {
		j := decodeJob(t, translate(t, withNotification(t, golden(t, "command.json"), `{"emails": ["ml@example.com"], "emailOn": ["JobFailed"], "webhooks": `+none+`}`), nil))
		if s := j.Notification(); s == nil || s.EmailOn[0] != notify.JobFailed {
			t.Errorf("webhooks %s: %+v", none, s)
		}
	}
	// A job without one answers none, and a null one is accepted.
	j := decodeJob(t, translate(t, withNotification(t, golden(t, "command.json"), `null`), nil))
	b, _ := json.Marshal(armjob.ToJobResource(scope, "https://shoal.example", j))
	if j.Notification() != nil || strings.Contains(string(b), "notificationSetting") {
		t.Errorf("null setting: %+v, %s", j.Notification(), b)
	}
}

// Azure's per-job webhooks, a bad address and an unknown event are
// refused naming the field.
func TestJobNotificationSettingRefusals(t *testing.T) {
	for ns, want := range map[string]string{
		`{"emails": ["a@b.co"], "emailOn": ["JobFailed"], "webhooks": {"w": {"webhookType": "AzureDevOps"}}}`: "properties.notificationSetting.webhooks",
		`{"emails": "a@b.co"}`:                                   "properties.notificationSetting.emails: must be a list",
		`{"emails": ["a@b.co"], "emailOn": ["JobDone"]}`:         "notification_setting.email_on[0]",
		`{"emails": ["Eve <e@x.io>"], "emailOn": ["JobFailed"]}`: "notification_setting.emails",
	} {
		doc, err := armjob.JobDocument(context.Background(), "default", "j1", withNotification(t, golden(t, "command.json"), ns), nil)
		if err == nil {
			_, err = job.DecodeJobSpec(doc)
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", ns, err, want)
		}
	}
}
