package client

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/mlflowrun"
	nodekind "github.com/shoal-ml/shoal/domain/node"
)

// UploadArtifact uploads a tar.gz archive and returns its artifact ID.
func (c *Client) UploadArtifact(ctx context.Context, workspace string, body io.Reader) (string, error) {
	var out struct {
		ID string `json:"id"`
	}
	if _, err := c.doStream(ctx, http.MethodPost, wsPath(workspace)+"/artifacts", body, "application/gzip", &out); err != nil {
		return "", err
	}
	return out.ID, nil
}

// SubmitJob submits a job document (JSON with the YAML keys); it reports
// whether the job was created (false: the same job existed).
func (c *Client) SubmitJob(ctx context.Context, workspace string, doc json.RawMessage, name string) (*job.Job, bool, error) {
	var out job.Job
	method, path := http.MethodPost, wsPath(workspace)+"/jobs"
	if name != "" {
		method, path = http.MethodPut, path+"/"+url.PathEscape(name)
	}
	status, err := c.do(ctx, method, path, doc, nil, &out)
	if err != nil {
		return nil, false, err
	}
	return &out, status == http.StatusCreated, nil
}

// GetJob returns one job.
func (c *Client) GetJob(ctx context.Context, workspace, name string) (*job.Job, error) {
	var out job.Job
	if _, err := c.do(ctx, http.MethodGet, wsPath(workspace)+"/jobs/"+url.PathEscape(name), nil, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// JobMetrics returns what a job logged through MLflow: each metric's
// summary, its parameters and tags, and every point when history is set.
func (c *Client) JobMetrics(ctx context.Context, workspace, name string, history bool) (*mlflowrun.JobMetrics, error) {
	path := wsPath(workspace) + "/jobs/" + url.PathEscape(name) + "/metrics"
	if history {
		path += "?history=true"
	}
	var out mlflowrun.JobMetrics
	if _, err := c.do(ctx, http.MethodGet, path, nil, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ListJobs lists jobs, newest first.
func (c *Client) ListJobs(ctx context.Context, workspace string, statuses []string, compute string, limit int) ([]*job.Job, error) {
	q := url.Values{}
	if len(statuses) > 0 {
		q.Set("status", strings.Join(statuses, ","))
	}
	if compute != "" {
		q.Set("compute", compute)
	}
	if limit > 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	var out listBody[*job.Job]
	path := wsPath(workspace) + "/jobs"
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	if _, err := c.do(ctx, http.MethodGet, path, nil, nil, &out); err != nil {
		return nil, err
	}
	return out.Value, nil
}

// CancelJob requests cancellation.
func (c *Client) CancelJob(ctx context.Context, workspace, name string) (*job.Job, error) {
	var out job.Job
	if _, err := c.do(ctx, http.MethodPost, wsPath(workspace)+"/jobs/"+url.PathEscape(name)+"/cancel", nil, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ListAttempts returns a job's attempts.
func (c *Client) ListAttempts(ctx context.Context, workspace, name string) ([]*job.Attempt, error) {
	var out listBody[*job.Attempt]
	if _, err := c.do(ctx, http.MethodGet, wsPath(workspace)+"/jobs/"+url.PathEscape(name)+"/attempts", nil, nil, &out); err != nil {
		return nil, err
	}
	return out.Value, nil
}

// ListJobEvents returns a job's event log.
func (c *Client) ListJobEvents(ctx context.Context, workspace, name string) ([]*core.Event, error) {
	var out listBody[*core.Event]
	if _, err := c.do(ctx, http.MethodGet, wsPath(workspace)+"/jobs/"+url.PathEscape(name)+"/events", nil, nil, &out); err != nil {
		return nil, err
	}
	return out.Value, nil
}

// StreamLogs copies a job's log (rank, attempt 0 = latest) to w; with
// follow it returns when the job ends.
func (c *Client) StreamLogs(ctx context.Context, workspace, name string, rank, attempt int, follow bool, w io.Writer) error {
	q := url.Values{"rank": {strconv.Itoa(rank)}, "attempt": {strconv.Itoa(attempt)}, "follow": {strconv.FormatBool(follow)}}
	resp, err := c.raw(ctx, http.MethodGet, wsPath(workspace)+"/jobs/"+url.PathEscape(name)+"/logs?"+q.Encode(), nil, "", true)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, err = io.Copy(w, resp.Body)
	return err
}

// DownloadOutputs returns the output archive of one rank.
func (c *Client) DownloadOutputs(ctx context.Context, workspace, name string, rank int) (io.ReadCloser, error) {
	resp, err := c.raw(ctx, http.MethodGet, wsPath(workspace)+"/jobs/"+url.PathEscape(name)+"/outputs?rank="+strconv.Itoa(rank), nil, "", false)
	if err != nil {
		return nil, err
	}
	return resp.Body, nil
}

// DownloadOutput returns one output of a rank as an archive of its
// folder (a pipeline's output: from the step that writes it, rank 0);
// the job's artifacts are the output job.ArtifactsOutput.
func (c *Client) DownloadOutput(ctx context.Context, workspace, name, output string, rank int) (io.ReadCloser, error) {
	q := url.Values{"rank": {strconv.Itoa(rank)}, "output": {output}}
	resp, err := c.raw(ctx, http.MethodGet, wsPath(workspace)+"/jobs/"+url.PathEscape(name)+"/outputs?"+q.Encode(), nil, "", false)
	if err != nil {
		return nil, err
	}
	return resp.Body, nil
}

// ListNodes returns a compute's nodes.
func (c *Client) ListNodes(ctx context.Context, workspace, compute string) ([]*nodekind.Node, error) {
	var out listBody[*nodekind.Node]
	if _, err := c.do(ctx, http.MethodGet, wsPath(workspace)+"/computes/"+url.PathEscape(compute)+"/nodes", nil, nil, &out); err != nil {
		return nil, err
	}
	return out.Value, nil
}

// PreemptNode preempts a node (admin only).
func (c *Client) PreemptNode(ctx context.Context, workspace, compute, node string) (*nodekind.Node, error) {
	var out nodekind.Node
	if _, err := c.do(ctx, http.MethodPost, wsPath(workspace)+"/computes/"+url.PathEscape(compute)+"/nodes/"+url.PathEscape(node)+"/preempt", nil, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// doStream sends a raw body and decodes a JSON answer.
func (c *Client) doStream(ctx context.Context, method, path string, body io.Reader, contentType string, out any) (*http.Response, error) {
	resp, err := c.raw(ctx, method, path, body, contentType, false)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if out != nil {
		if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
			return resp, fmt.Errorf("the server's answer to %s %s is not valid JSON: %w", method, path, err)
		}
	}
	return resp, nil
}

// raw sends a request and returns the response for the caller to read;
// an error status is decoded into a *shoal.Error. noTimeout is for
// long-lived streams.
func (c *Client) raw(ctx context.Context, method, path string, body io.Reader, contentType string, noTimeout bool) (*http.Response, error) {
	base := c.base()
	req, err := http.NewRequestWithContext(ctx, method, base+path, body)
	if err != nil {
		return nil, err
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	hc := c.HTTP
	if hc == nil || noTimeout {
		hc = &http.Client{Transport: transportOf(hc)}
	}
	resp, err := hc.Do(req)
	if err != nil {
		if c.Unreachable != nil && ctx.Err() == nil {
			c.Unreachable(base, err)
		}
		return nil, fmt.Errorf("cannot reach the Shoal server at %s: %w", base, err)
	}
	if resp.StatusCode >= 400 {
		defer resp.Body.Close()
		data, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		return nil, decodeErrorResponse(resp.StatusCode, data)
	}
	return resp, nil
}

func transportOf(hc *http.Client) http.RoundTripper {
	if hc != nil && hc.Transport != nil {
		return hc.Transport
	}
	return http.DefaultTransport
}

// JobUpdate is a change of a job's display name, description or tags
// (PATCH of a job; the server's service.JobUpdate): nil and empty fields
// leave them as they are.
type JobUpdate struct {
	DisplayName *string           `json:"display_name,omitempty"`
	Description *string           `json:"description,omitempty"`
	SetTags     map[string]string `json:"set_tags,omitempty"`
	RemoveTags  []string          `json:"remove_tags,omitempty"`
}

// UpdateJob changes a job's display name, description or tags.
func (c *Client) UpdateJob(ctx context.Context, workspace, name string, upd *JobUpdate) (*job.Job, error) {
	var out job.Job
	if _, err := c.do(ctx, http.MethodPatch, wsPath(workspace)+"/jobs/"+url.PathEscape(name), upd, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
