package client

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/shoal-ml/shoal/domain/node"
)

// AgentClient is the client a node's agent uses; its token is the join
// token until Join succeeds, then the node credential. It knows every
// server sharing the store (Join's and Sync's answers list them) and
// moves to the next when a call cannot reach the one it uses, so that
// servers need no load balancer in front of them.
type AgentClient struct {
	c *Client

	mu      sync.Mutex
	servers []string // the first is the one in use
	// OnMove, when set, is told when the client moves to another
	// server (for the agent's log).
	OnMove func(from, to string, err error)
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
	baseURL = strings.TrimRight(baseURL, "/")
	// A dial that does not answer (a partitioned server) gives up soon
	// enough for the agent to reach another before its node's lease ends.
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.DialContext = (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	a := &AgentClient{c: &Client{BaseURL: baseURL, Token: joinToken, HTTP: &http.Client{Timeout: 60 * time.Second, Transport: t}}, servers: []string{baseURL}}
	a.c.Base = a.current
	a.c.Unreachable = a.unreachable
	return a
}

// current is the server in use.
func (a *AgentClient) current() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.servers[0]
}

// Servers lists the servers the client knows, the one in use first.
func (a *AgentClient) Servers() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.servers...)
}

// SetServers takes the servers a join or sync answer lists: the one in
// use stays first when it is listed (it answered), the others follow in
// the answer's order. An empty list changes nothing.
func (a *AgentClient) SetServers(urls []string) {
	if len(urls) == 0 {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	cur := a.servers[0]
	next := []string{cur}
	seen := map[string]bool{cur: true}
	for _, u := range urls {
		u = strings.TrimRight(u, "/")
		if u != "" && !seen[u] {
			seen[u] = true
			next = append(next, u)
		}
	}
	a.servers = next
}

// unreachable moves to the next server when the one in use did not
// answer a call (the same failure seen by several calls at once moves
// once).
func (a *AgentClient) unreachable(base string, err error) {
	a.mu.Lock()
	if len(a.servers) < 2 || a.servers[0] != base {
		a.mu.Unlock()
		return
	}
	a.servers = append(a.servers[1:], a.servers[0])
	to, move := a.servers[0], a.OnMove
	a.mu.Unlock()
	// Connections kept to the old one would be tried again.
	a.Reconnect()
	if move != nil {
		move(base, to, err)
	}
}

// Join exchanges the join token for the node credential, which the client
// uses from then on.
func (a *AgentClient) Join(ctx context.Context, req node.JoinRequest) (*node.JoinResponse, error) {
	var out node.JoinResponse
	if _, err := a.c.do(ctx, http.MethodPost, "/agent/v1/join", req, nil, &out); err != nil {
		return nil, err
	}
	a.c.Token = out.Credential
	return &out, nil
}

// Sync sends a heartbeat and waits up to wait for instructions.
func (a *AgentClient) Sync(ctx context.Context, req *node.AgentSyncRequest, wait time.Duration) (*node.AgentSyncResponse, error) {
	var out node.AgentSyncResponse
	if _, err := a.c.do(ctx, http.MethodPost, "/agent/v1/sync?wait="+url.QueryEscape(wait.String()), req, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

func rankPath(ref node.RankRef, what string) string {
	return fmt.Sprintf("/agent/v1/attempts/%s/ranks/%d/%s", url.PathEscape(ref.AttemptID), ref.Rank, what)
}

// Report reports a rank's state change. The answer may carry the node's
// next task when the report freed the node.
func (a *AgentClient) Report(ctx context.Context, ref node.RankRef, rep *node.RankReport) (*node.AgentSyncResponse, error) {
	var out node.AgentSyncResponse
	if _, err := a.c.do(ctx, http.MethodPost, rankPath(ref, "status"), rep, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// GPUSample reports the node's GPUs' utilisation while it runs a rank.
func (a *AgentClient) GPUSample(ctx context.Context, ref node.RankRef, s *node.GPUSample) error {
	_, err := a.c.do(ctx, http.MethodPost, rankPath(ref, "gpu"), s, nil, nil)
	return err
}

// WriteLog uploads a chunk of a rank's log at offset.
func (a *AgentClient) WriteLog(ctx context.Context, ref node.RankRef, offset int64, data []byte) error {
	_, err := a.c.doStream(ctx, http.MethodPost, rankPath(ref, "logs")+fmt.Sprintf("?offset=%d", offset), bytesReader(data), "application/octet-stream", nil)
	return err
}

// PutOutputs uploads a rank's output archive.
func (a *AgentClient) PutOutputs(ctx context.Context, ref node.RankRef, body io.Reader) error {
	_, err := a.c.doStream(ctx, http.MethodPut, rankPath(ref, "outputs"), body, "application/gzip", nil)
	return err
}

// Restore opens the outputs an earlier attempt left for this rank;
// ENOTFOUND when there are none.
func (a *AgentClient) Restore(ctx context.Context, ref node.RankRef) (io.ReadCloser, error) {
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

// Input opens, as a gzipped tar, the kept output of another job that
// input name of the rank's job reads (a DataSource with OutputOf).
func (a *AgentClient) Input(ctx context.Context, ref node.RankRef, name string) (io.ReadCloser, error) {
	resp, err := a.c.raw(ctx, http.MethodGet, rankPath(ref, "inputs/"+url.PathEscape(name)), nil, "", true)
	if err != nil {
		return nil, err
	}
	return resp.Body, nil
}

// Token asks the server for a workload token for a rank's job.
func (a *AgentClient) Token(ctx context.Context, ref node.RankRef, req *node.TokenRequest) (*node.TokenResponse, error) {
	var out node.TokenResponse
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
func (a *AgentClient) InstanceToken(ctx context.Context, req *node.TokenRequest) (*node.TokenResponse, error) {
	var out node.TokenResponse
	if _, err := a.c.do(ctx, http.MethodPost, "/agent/v1/instance/token", req, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
