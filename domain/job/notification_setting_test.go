package job_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/job/pipelinejob"
	"github.com/shoal-ml/shoal/domain/job/sweepjob"
	"github.com/shoal-ml/shoal/domain/notify"
)

const notifySetting = `"notification_setting": {"emails": ["ml-team@example.com"], "email_on": ["job_failed", "job_cancelled"]}`

// Every kind of job takes Azure's notification_setting, and keeps it in
// its stored document (job show prints it back).
func TestNotificationSettingEveryKind(t *testing.T) {
	want := &notify.NotificationSetting{Emails: []string{"ml-team@example.com"}, EmailOn: []string{notify.JobFailed, notify.JobCanceled}}
	cmd, err := job.DecodeJobSpec([]byte(`{"command": "true", "environment": "azureml:e:1", "compute": "c", ` + notifySetting + `}`))
	if err != nil {
		t.Fatal(err)
	}
	pipe, err := pipelinejob.DecodePipelineSpec([]byte(`{"type": "pipeline", "compute": "c", "jobs": {"a": {"type": "command", "command": "true", "environment": "azureml:e:1"}}, ` + notifySetting + `}`))
	if err != nil {
		t.Fatal(err)
	}
	sweep, err := sweepjob.DecodeSweepSpec([]byte(`{"type": "sweep", "compute": "c", "trial": {"command": "echo ${{search_space.x}}", "environment": "azureml:e:1"},
		"search_space": {"x": {"type": "choice", "values": [1]}}, "sampling_algorithm": "random",
		"objective": {"goal": "maximize", "primary_metric": "m"}, "limits": {"max_total_trials": 1}, ` + notifySetting + `}`))
	if err != nil {
		t.Fatal(err)
	}
	for kind, got := range map[string]*notify.NotificationSetting{"command": cmd.NotificationSetting, "pipeline": pipe.NotificationSetting, "sweep": sweep.NotificationSetting} {
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %+v, want %+v", kind, got, want)
		}
	}
	b, _ := json.Marshal(cmd)
	if !strings.Contains(string(b), `"notification_setting":{"emails":["ml-team@example.com"],"email_on":["job_failed","job_canceled"]}`) {
		t.Errorf("stored document: %s", b)
	}
}

// A bad address or event is refused naming the field, in every kind; a
// pipeline step has no notification_setting of its own (Azure's is the
// job's).
func TestNotificationSettingRefused(t *testing.T) {
	bad := `"notification_setting": {"emails": ["x@y.z\nBcc: eve@example.com"], "email_on": ["job_failed"]}`
	if _, err := job.DecodeJobSpec([]byte(`{"command": "true", ` + bad + `}`)); err == nil || !strings.Contains(err.Error(), "notification_setting.emails") {
		t.Errorf("command: %v", err)
	}
	if _, err := pipelinejob.DecodePipelineSpec([]byte(`{"type": "pipeline", "jobs": {"a": {"type": "command", "command": "true"}}, "notification_setting": {"email_on": ["job_started"]}}`)); err == nil ||
		!strings.Contains(err.Error(), "notification_setting.email_on[0]") {
		t.Errorf("pipeline: %v", err)
	}
	_, err := pipelinejob.DecodePipelineSpec([]byte(`{"type": "pipeline", "jobs": {"a": {"type": "command", "command": "true", ` + notifySetting + `}}}`))
	if err == nil || !strings.Contains(err.Error(), "jobs.a.notification_setting") {
		t.Errorf("step: %v", err)
	}
}

// A sweep's trials are not mailed: the sweep's notification_setting
// stays on the sweep (one mail when it ends, not one per trial: a sweep
// of 10,000 trials mails its addresses once), and a trial cannot carry
// one of its own.
func TestSweepTrialsCarryNoNotificationSetting(t *testing.T) {
	const sweep = `{"type": "sweep", "compute": "c", "trial": {"command": "echo ${{search_space.x}}", "environment": "azureml:e:1"TRIAL},
		"search_space": {"x": {"type": "choice", "values": [1]}}, "sampling_algorithm": "random",
		"objective": {"goal": "maximize", "primary_metric": "m"}, "limits": {"max_total_trials": 10000}, ` + notifySetting + `}`
	spec, err := sweepjob.DecodeSweepSpec([]byte(strings.Replace(sweep, "TRIAL", "", 1)))
	if err != nil {
		t.Fatal(err)
	}
	trial, err := sweepjob.TrialJobSpec(spec, map[string]string{"x": "1"})
	if err != nil {
		t.Fatal(err)
	}
	if trial.NotificationSetting != nil || spec.NotificationSetting == nil {
		t.Errorf("trial's setting %+v, sweep's %+v", trial.NotificationSetting, spec.NotificationSetting)
	}
	if _, err := sweepjob.DecodeSweepSpec([]byte(strings.Replace(sweep, "TRIAL", ", "+notifySetting, 1))); err == nil || !strings.Contains(err.Error(), "notification_setting") {
		t.Errorf("a trial's own notification_setting: %v", err)
	}
}
