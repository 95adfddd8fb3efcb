package job

import "github.com/shoal-ml/shoal/domain/notify"

// Notification returns the job's notification_setting whatever its kind
// (a pipeline's and a sweep's are on their documents), nil when none.
func (j *Job) Notification() *notify.NotificationSetting {
	switch {
	case j.Pipeline != nil:
		return j.Pipeline.NotificationSetting
	case j.Sweep != nil:
		return j.Sweep.NotificationSetting
	}
	return j.NotificationSetting
}
