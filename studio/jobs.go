package studio

import (
	"strings"

	"github.com/shoal-ml/shoal"
)

func (s *Studio) jobsPage(q *req) error {
	if err := s.allow(q, shoal.ActJobsRead); err != nil {
		return err
	}
	qs := q.r.URL.Query()
	f := shoal.JobFilter{Workspace: q.workspace, Compute: qs.Get("compute"), Limit: 200}
	if st := qs.Get("status"); st != "" {
		f.Statuses = strings.Split(st, ",")
	}
	jobs, err := s.cfg.Svc.ListJobs(q.ctx, f)
	if err != nil {
		return err
	}
	computes, err := s.cfg.Svc.ListComputes(q.ctx, shoal.ComputeFilter{Workspace: q.workspace})
	if err != nil {
		return err
	}
	var names []string
	for _, c := range computes {
		names = append(names, c.Name)
	}
	return s.render(q, "jobs", "Jobs", "jobs", map[string]any{
		"Jobs": jobs, "Compute": f.Compute, "Status": qs.Get("status"), "Computes": names,
		"Statuses": []string{shoal.JobQueued, shoal.JobPreparing, shoal.JobRunning, shoal.JobFinalizing, shoal.JobCompleted, shoal.JobFailed, shoal.JobCanceled},
	})
}

func (s *Studio) jobPage(q *req) error {
	if err := s.allow(q, shoal.ActJobsRead); err != nil {
		return err
	}
	j, err := s.cfg.Svc.FindJobWithCost(q.ctx, q.workspace, q.r.PathValue("name"))
	if err != nil {
		return err
	}
	attempts, err := s.cfg.Svc.ListAttempts(q.ctx, q.workspace, j.Name)
	if err != nil {
		return err
	}
	events, err := s.cfg.Svc.ListJobEvents(q.ctx, q.workspace, j.Name)
	if err != nil {
		return err
	}
	ranks := 1
	if j.Resources != nil && j.Resources.InstanceCount > 1 {
		ranks = j.Resources.InstanceCount
	}
	return s.render(q, "job", j.Name, "jobs", map[string]any{
		"J": j, "Attempts": attempts, "Events": events, "Ranks": ranks, "Terminal": shoal.JobTerminal(j.Status),
		"CanCancel": s.can(q, shoal.ActJobsCancel) && !shoal.JobTerminal(j.Status),
	})
}
