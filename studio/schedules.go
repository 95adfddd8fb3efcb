package studio

import (
	"fmt"
	"strings"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/identity"
	"github.com/shoal-ml/shoal/domain/job"
	dschedule "github.com/shoal-ml/shoal/domain/schedule"
	"github.com/shoal-ml/shoal/service/schedules"
	"github.com/shoal-ml/shoal/store"
)

// The job schedule pages read through service/schedules (the service the
// API's schedule routes use) after the viewer's right to read schedules
// is checked as those routes check it. Their enable, disable and trigger
// buttons post to the API's routes from studio.js with the session's
// CSRF header, so that their rules and refusals are the API's.

// The actions the schedule pages check (pinned by
// TestStudioPagesUseTheRoutesActions): reading, and changing or firing,
// which the API's trigger route also checks jobs/write for.
const (
	schedulePageAction  = identity.ActSchedulesRead
	scheduleWriteAction = identity.ActSchedulesWrite
)

// scheduleRecentJobs bounds the jobs a schedule's page lists, and
// scheduleJobScan how many of the workspace's newest jobs it looks
// through for them (a page, not an export: older firings are in `shoal
// job list`).
const (
	scheduleRecentJobs = 20
	scheduleJobScan    = 500
)

// schedulesPage lists the workspace's schedules: each one's trigger in
// words, whether it is enabled, its next fire time, last job and last
// message.
func (s *Studio) schedulesPage(q *req) error {
	if err := s.allow(q, schedulePageAction); err != nil {
		return err
	}
	list, err := schedules.Over(s.cfg.Svc).List(q.ctx, q.workspace)
	if err != nil {
		return err
	}
	return s.render(q, "schedules", "Schedules", "schedules", map[string]any{"Schedules": list})
}

// schedulePage shows a schedule: its trigger, its action, the jobs its
// firings submitted, its events and, to a viewer who may change it, the
// enable or disable and trigger buttons.
func (s *Studio) schedulePage(q *req) error {
	if err := s.allow(q, schedulePageAction); err != nil {
		return err
	}
	sc, err := schedules.Over(s.cfg.Svc).Get(q.ctx, q.workspace, q.r.PathValue("name"))
	if err != nil {
		return err
	}
	jobs, err := s.cfg.Svc.ListJobs(q.ctx, job.JobFilter{Workspace: q.workspace, Limit: scheduleJobScan})
	if err != nil {
		return err
	}
	var fired []*job.Job
	for _, j := range jobs {
		if strings.EqualFold(j.Tags[dschedule.TagSchedule], sc.Name) && len(fired) < scheduleRecentJobs {
			fired = append(fired, j)
		}
	}
	var events []*core.Event
	err = s.cfg.Svc.Store().View(q.ctx, func(tx store.Tx) (err error) {
		events, err = tx.ListEvents(core.EventFilter{Workspace: q.workspace, ResourceType: core.ResourceSchedule, ResourceName: sc.Name, Since: sc.CreatedOn})
		return err
	})
	if err != nil {
		return err
	}
	return s.render(q, "schedule", "Schedule "+sc.Name, "schedules", map[string]any{
		"S": sc, "Trigger": describeTrigger(sc.Trigger), "Jobs": fired, "Events": events,
		// The API's writes also need jobs/write: the schedule's jobs run
		// as whoever last wrote or enabled it.
		"CanWrite": s.can(q, scheduleWriteAction) && s.can(q, identity.ActJobsWrite),
	})
}

// describeTrigger says a trigger in words: "cron 0 2 * * * (Pacific
// Standard Time)", "every 1 week at hours 10, minutes 0, on monday,
// friday (UTC)", with its start and end.
func describeTrigger(tr *dschedule.Trigger) string {
	if tr == nil {
		return ""
	}
	var b strings.Builder
	if strings.EqualFold(tr.Type, dschedule.Cron) {
		fmt.Fprintf(&b, "cron %s", tr.Expression)
	} else {
		fmt.Fprintf(&b, "every %d %s", tr.Interval, strings.ToLower(tr.Frequency))
		if p := tr.Schedule; p != nil {
			list := func(what string, v any, n int) {
				if n > 0 {
					fmt.Fprintf(&b, ", %s %s", what, strings.Trim(fmt.Sprint(v), "[]"))
				}
			}
			list("hours", []int(p.Hours), len(p.Hours))
			list("minutes", []int(p.Minutes), len(p.Minutes))
			list("on", strings.Join(p.WeekDays, " "), len(p.WeekDays))
			list("days of the month", []int(p.MonthDays), len(p.MonthDays))
		}
	}
	zone := tr.TimeZone
	if zone == "" {
		zone = "UTC"
	}
	fmt.Fprintf(&b, " (%s)", zone)
	if tr.StartTime != "" {
		fmt.Fprintf(&b, ", from %s", tr.StartTime)
	}
	if tr.EndTime != "" {
		fmt.Fprintf(&b, " until %s", tr.EndTime)
	}
	return b.String()
}
