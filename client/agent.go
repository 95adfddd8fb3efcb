package client

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/shoal-ml/shoal"
)

// AgentClient is the client a node's agent uses; its token is the join
// token until Join succeeds, then the node credential.
type AgentClient struct {
	c *Client
}

// Reconnect drops the client's idle connections, so that the next call
// opens a new one: behind a load balancer it reaches a replica that is
// ready rather than the one that just failed.
func (a *AgentClient) Reconnect() {
	if a.c.HTTP != nil {
		a.c.HTTP.CloseIdleConnections()
	}
}

// TrustCA makes the agent trust caPEM's certificates (the server's
// private CA) besides the system's roots.
func (a *AgentClient) TrustCA(caPEM []byte) error { return a.c.TrustCA(caPEM) }

// NewAgentClient returns an agent client for the server at baseURL.
func NewAgentClient(baseURL, joinToken string) *AgentClient {
	return &AgentClient{c: &Client{BaseURL: baseURL, Token: joinToken, HTTP: &http.Client{Timeout: 60 * time.Second}}}
}

// Join exchanges the join token for the node credential, which the client
// uses from then on.
func (a *AgentClient) Join(ctx context.Context, req shoal.JoinRequest) (*shoal.JoinResponse, error) {
	var out shoal.JoinResponse
	if _, err := a.c.do(ctx, http.MethodPost, "/agent/v1/join", req, nil, &out); err != nil {
		return nil, err
	}
	a.c.Token = out.Credential
	return &out, nil
}

// Sync sends a heartbeat and waits up to wait for instructions.
func (a *AgentClient) Sync(ctx context.Context, req *shoal.AgentSyncRequest, wait time.Duration) (*shoal.AgentSyncResponse, error) {
	var out shoal.AgentSyncResponse
	if _, err := a.c.do(ctx, http.MethodPost, "/agent/v1/sync?wait="+url.QueryEscape(wait.String()), req, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

func rankPath(ref shoal.RankRef, what string) string {
	return fmt.Sprintf("/agent/v1/attempts/%s/ranks/%d/%s", url.PathEscape(ref.AttemptID), ref.Rank, what)
}

// Report reports a rank's state change. The answer may carry the node's
// next task when the report freed the node.
func (a *AgentClient) Report(ctx context.Context, ref shoal.RankRef, rep *shoal.RankReport) (*shoal.AgentSyncResponse, error) {
	var out shoal.AgentSyncResponse
	if _, err := a.c.do(ctx, http.MethodPost, rankPath(ref, "status"), rep, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// GPUSample reports the node's GPUs' utilisation while it runs a rank.
func (a *AgentClient) GPUSample(ctx context.Context, ref shoal.RankRef, s *shoal.GPUSample) error {
	_, err := a.c.do(ctx, http.MethodPost, rankPath(ref, "gpu"), s, nil, nil)
	return err
}

// WriteLog uploads a chunk of a rank's log at offset.
func (a *AgentClient) WriteLog(ctx context.Context, ref shoal.RankRef, offset int64, data []byte) error {
	_, err := a.c.doStream(ctx, http.MethodPost, rankPath(ref, "logs")+fmt.Sprintf("?offset=%d", offset), bytesReader(data), "application/octet-stream", nil)
	return err
}

// PutOutputs uploads a rank's output archive.
func (a *AgentClient) PutOutputs(ctx context.Context, ref shoal.RankRef, body io.Reader) error {
	_, err := a.c.doStream(ctx, http.MethodPut, rankPath(ref, "outputs"), body, "application/gzip", nil)
	return err
}

// Restore opens the outputs an earlier attempt left for this rank;
// ENOTFOUND when there are none.
func (a *AgentClient) Restore(ctx context.Context, ref shoal.RankRef) (io.ReadCloser, error) {
	resp, err := a.c.raw(ctx, http.MethodGet, rankPath(ref, "restore"), nil, "", true)
	if err != nil {
		return nil, err
	}
	return resp.Body, nil
}

// Artifact opens an artifact of the node's current job.
func (a *AgentClient) Artifact(ctx context.Context, id string) (io.ReadCloser, error) {
	resp, err := a.c.raw(ctx, http.MethodGet, "/agent/v1/artifacts/"+url.PathEscape(id), nil, "", true)
	if err != nil {
		return nil, err
	}
	return resp.Body, nil
}

// Token asks the server for a workload token for a rank's job.
func (a *AgentClient) Token(ctx context.Context, ref shoal.RankRef, req *shoal.TokenRequest) (*shoal.TokenResponse, error) {
	var out shoal.TokenResponse
	if _, err := a.c.do(ctx, http.MethodPost, rankPath(ref, "token"), req, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// WriteSetupLog uploads a chunk of the setup log of the instance the node
// serves, at offset.
func (a *AgentClient) WriteSetupLog(ctx context.Context, offset int64, data []byte) error {
	_, err := a.c.doStream(ctx, http.MethodPost, fmt.Sprintf("/agent/v1/instance/setup-log?offset=%d", offset), bytesReader(data), "application/octet-stream", nil)
	return err
}

// WriteAppLog uploads a chunk of the log of the custom application app of
// the instance the node serves, at offset.
func (a *AgentClient) WriteAppLog(ctx context.Context, app string, offset int64, data []byte) error {
	_, err := a.c.doStream(ctx, http.MethodPost, fmt.Sprintf("/agent/v1/instance/app-log?app=%s&offset=%d", url.QueryEscape(app), offset), bytesReader(data), "application/octet-stream", nil)
	return err
}

// InstanceToken asks for a workload token for the user's shells and
// notebooks on the instance the node serves.
func (a *AgentClient) InstanceToken(ctx context.Context, req *shoal.TokenRequest) (*shoal.TokenResponse, error) {
	var out shoal.TokenResponse
	if _, err := a.c.do(ctx, http.MethodPost, "/agent/v1/instance/token", req, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
