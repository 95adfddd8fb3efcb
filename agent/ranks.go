package agent

import (
	"context"
	"net"
	"strconv"

	"github.com/shoal-ml/shoal/agent/files"
	"github.com/shoal-ml/shoal/agent/rank"
	"github.com/shoal-ml/shoal/domain/node"
)

// rankNode is the node as the agent's ranks see it; built for each rank,
// since the container engine comes after the agent (Run opens it).
func (a *Agent) rankNode() rank.Node {
	return rank.Node{Address: a.cfg.Address, NodeID: a.cfg.NodeID, WorkDir: a.cfg.WorkDir, RunDir: a.runDir, ServerURL: a.cfg.ServerURL,
		GPUDevices: a.cfg.GPUDevices, NodeImage: a.cfg.NodeImage, Client: a.client, Log: a.log, Clock: a.cfg.Clock,
		Accounts: a.accounts, Ctr: a.ctr, Agent: rankAgent{a}, Networks: a.net.ranks, Data: a.data, OwnEndpoints: a.ownEndpoints}
}

// rankAgent is the agent as its ranks need it (rank.Agent), kept apart
// from Agent so that these methods are not the exported Agent's.
type rankAgent struct{ a *Agent }

var _ rank.Agent = rankAgent{}

// Finish records the rank's result in the node's work dir, hands the rank
// over from "running" to "result waiting", and delivers the result at once
// when the server answers (the common case: no extra round trip). A result
// the server cannot take now stays on disk for the delivery loop, or for
// the next agent on this work dir should this one exit first. It reports
// whether the server answered at once.
func (h rankAgent) Finish(ctx context.Context, p *files.Result) bool {
	a := h.a
	// Keep, not Put: this goroutine delivers the result just below, and
	// kicks the delivery loop only if that fails.
	if err := a.outbox.Keep(p); err != nil {
		// Without the file the result lives only in memory: deliver it
		// until the server answers, as before there was a file.
		a.log.Warn("writing the result to disk failed; keeping it in memory", "attempt", p.Ref.AttemptID, "err", err)
	}
	a.mu.Lock()
	delete(a.ranks, p.Ref)
	a.mu.Unlock()
	if !a.outbox.Claim(p.Ref) {
		// The delivery loop has it (it found the file, or a result of
		// the same rank, meanwhile): it delivers this one too.
		a.outbox.Kick()
		return false
	}
	_, err := a.deliver(ctx, p)
	a.outbox.Unclaim(p.Ref)
	if err != nil {
		a.outage.failed("report result", err)
		a.outbox.Kick() // the delivery loop takes over, with backoff
		return false
	}
	a.outage.succeeded()
	return true
}

// StartRank starts a task a rank's report brought back.
func (h rankAgent) StartRank(ctx context.Context, t *node.AgentTask) { h.a.startRank(ctx, t) }

// SampleGPUs samples the node's GPUs while ref runs.
func (h rankAgent) SampleGPUs(ctx context.Context, ref node.RankRef) { h.a.sampleGPUs(ctx, ref) }

// TakenBack says whether the node's machine being taken back ended them.
func (h rankAgent) TakenBack(reason string, code int) bool { return h.a.takenBack(reason, code) }

// SDKEnv is the variables Azure's SDKs need (see Agent.sdkEnv).
func (h rankAgent) SDKEnv() map[string]string { return h.a.sdkEnv() }

// CABundle is the CA bundle for jobs (see Agent.caBundle).
func (h rankAgent) CABundle() string { return h.a.caBundle() }

// ownEndpoints are the host:ports the agent serves on the host's
// network (its node's SSH server, when it runs one): a job's inputs
// and outputs may not be fetched from or sent to them.
func (a *Agent) ownEndpoints() []string {
	a.nodeSSH.mu.Lock()
	srv := a.nodeSSH.srv
	a.nodeSSH.mu.Unlock()
	if srv == nil {
		return nil
	}
	port := strconv.Itoa(srv.Addr().Port)
	own := []string{net.JoinHostPort(a.cfg.Address, port)}
	if ip := srv.Addr().IP; ip != nil && !ip.IsUnspecified() {
		own = append(own, net.JoinHostPort(ip.String(), port))
	}
	return own
}
