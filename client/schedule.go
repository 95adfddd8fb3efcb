package client

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"

	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/schedule"
)

// schedulePath is a job schedule's path.
func schedulePath(workspace, name string) string {
	return wsPath(workspace) + "/schedules/" + url.PathEscape(name)
}

// PutSchedule creates or updates a job schedule from its document (the
// YAML's keys as JSON, create_job a whole job document or
// azureml:<job>) and reports whether it was created.
func (c *Client) PutSchedule(ctx context.Context, workspace, name string, doc json.RawMessage) (*schedule.JobSchedule, bool, error) {
	var out schedule.JobSchedule
	status, err := c.do(ctx, http.MethodPut, schedulePath(workspace, name), doc, nil, &out)
	if err != nil {
		return nil, false, err
	}
	return &out, status == http.StatusCreated, nil
}

// GetSchedule shows a job schedule, with its next fire time.
func (c *Client) GetSchedule(ctx context.Context, workspace, name string) (*schedule.JobSchedule, error) {
	var out schedule.JobSchedule
	if _, err := c.do(ctx, http.MethodGet, schedulePath(workspace, name), nil, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ListSchedules lists a workspace's job schedules by name.
func (c *Client) ListSchedules(ctx context.Context, workspace string) ([]*schedule.JobSchedule, error) {
	var out listBody[*schedule.JobSchedule]
	if _, err := c.do(ctx, http.MethodGet, wsPath(workspace)+"/schedules", nil, nil, &out); err != nil {
		return nil, err
	}
	return out.Value, nil
}

// DeleteSchedule deletes a job schedule (its jobs stay).
func (c *Client) DeleteSchedule(ctx context.Context, workspace, name string) error {
	_, err := c.do(ctx, http.MethodDelete, schedulePath(workspace, name), nil, nil, nil)
	return err
}

// SetScheduleEnabled enables or disables a job schedule.
func (c *Client) SetScheduleEnabled(ctx context.Context, workspace, name string, enabled bool) (*schedule.JobSchedule, error) {
	verb := "/disable"
	if enabled {
		verb = "/enable"
	}
	var out schedule.JobSchedule
	if _, err := c.do(ctx, http.MethodPost, schedulePath(workspace, name)+verb, nil, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// TriggerSchedule fires a job schedule now and returns the job it
// submitted.
func (c *Client) TriggerSchedule(ctx context.Context, workspace, name string) (*job.Job, error) {
	var out job.Job
	if _, err := c.do(ctx, http.MethodPost, schedulePath(workspace, name)+"/trigger", nil, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
