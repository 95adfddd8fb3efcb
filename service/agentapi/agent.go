package agentapi

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/shoal-ml/shoal/decide/jobrun"
	"github.com/shoal-ml/shoal/decide/nodelease"
	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/identity"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/money"
	nodekind "github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/service/access"
	"github.com/shoal-ml/shoal/store"
)

// JoinNode exchanges a node's single-use join token for its node
// credential. The token must belong to that node and be unexpired.
func (s *Server) JoinNode(ctx context.Context, joinToken string, req nodekind.JoinRequest) (*nodekind.JoinResponse, error) {
	var resp *nodekind.JoinResponse
	var node *nodekind.Node
	lease := s.leaseTTL(ctx)
	err := s.store.Update(ctx, func(tx store.Tx) error {
		n, err := tx.FindNodeByJoinTokenHash(identity.HashToken(joinToken))
		if core.ErrorCode(err) == core.ENOTFOUND {
			return core.Errorf(core.EUNAUTHORIZED, "the join token is not valid (already used, or never issued)")
		} else if err != nil {
			return err
		}
		now := tx.Now()
		if n.ID != req.NodeID {
			return core.Errorf(core.EUNAUTHORIZED, "the join token belongs to another node")
		}
		if !now.Before(n.JoinTokenExpires) {
			return core.Errorf(core.EUNAUTHORIZED, "the join token has expired")
		}
		cred, hash, err := identity.NewToken()
		if err != nil {
			return err
		}
		n.JoinTokenHash, n.CredentialHash = "", hash
		n.PrivateIPAddress, n.Port = req.Address, req.Port
		n.Runtime = req.Runtime
		n.LastHeartbeat, n.ReadyOn = now, &now
		if n.State == nodekind.NodePreparing {
			n.State, n.IdleSince = nodekind.NodeIdle, &now
		}
		// A cluster with prepull_images: the node pulls them before it
		// takes work (NodeFree is false while PullingImages is set).
		prepull, notes, err := s.prepullOrder(tx, n)
		if err != nil {
			return err
		}
		n.PullingImages = nil
		if prepull != nil {
			n.PullingImages, n.StateReason = prepull.Images, pullingReason(prepull.Images)
		}
		n.Version++
		if err := tx.UpdateNode(n); err != nil {
			return err
		}
		node = n
		resp = &nodekind.JoinResponse{NodeID: n.ID, Credential: cred, HeartbeatInterval: nodelease.Interval(lease), LeaseTTL: lease, GPUSampleInterval: s.cfg.GPUSampleInterval, Prepull: prepull, Servers: s.servers(ctx), ReportsTakeLog: true}
		c := &compute.Compute{Workspace: n.Workspace}
		c.Name = n.Compute
		what := "is idle"
		if prepull != nil {
			what = fmt.Sprintf("pulls %d images before it takes work", len(prepull.Images))
		}
		for _, note := range notes {
			what += "; " + note
		}
		return compute.AppendComputeEvent(identity.WithPrincipal(ctx, nodekind.NodePrincipal(n)), tx, c, "node_ready", fmt.Sprintf("node %s joined and %s (%s:%d); %s", n.ID, what, n.PrivateIPAddress, n.Port, n.Runtime.Describe()))
	})
	if err != nil {
		return nil, err
	}
	// The node's earlier credential (a revived node's old agent) stops
	// being trusted now, not when its cache entry expires.
	s.credCache.put(node.CredentialHash, node.ID, s.cfg.Clock.Now(), credTTL(s.leaseTTL(ctx)))
	if node.ReadyOn != nil {
		s.cfg.NodeReady(node.Workspace, node.Compute, node.ReadyOn.Sub(node.CreatedOn))
	}
	s.log.Info("node joined", "node", node.ID, "compute", node.Compute)
	// A joined node is idle for its own compute's queue alone, and was
	// counted against every quota from its creation: a pass that
	// schedules and plans that compute alone serves it (one that
	// scheduled and planned every cluster took 50 ms at 10,000 nodes).
	s.cfg.Changed(compute.ComputeKey(node.Workspace, node.Compute))
	return resp, nil
}

// leaseTTL is the lease an agent is told now: the configured one, or
// longer for a fleet whose syncs it would otherwise flood the server
// with (decide/nodelease).
func (s *Server) leaseTTL(ctx context.Context) time.Duration {
	return s.cfg.Lease.Grant(ctx, s.cfg.Clock.Now())
}

// AuthenticateNode returns the ID of the node a node credential belongs to.
// Agents call several times per job; a credential read within credTTL
// of the lease is trusted without a read (a node removed meanwhile fails
// on its next step, which reads the node).
func (s *Server) AuthenticateNode(ctx context.Context, credential string) (string, error) {
	hash := identity.HashToken(credential)
	now := s.cfg.Clock.Now()
	if id, ok := s.credCache.get(hash, now); ok {
		return id, nil
	}
	var id string
	// Not through agentView: a request with a made-up credential would
	// take one of the agents' few tokens, and a flood of them would hold
	// up real heartbeats.
	err := s.store.View(ctx, func(tx store.Tx) error {
		n, err := tx.FindNodeByCredentialHash(hash)
		if core.ErrorCode(err) == core.ENOTFOUND {
			return core.Errorf(core.EUNAUTHORIZED, "the node credential is not valid")
		} else if err != nil {
			return err
		}
		id = n.ID
		return nil
	})
	if err == nil {
		s.credCache.put(hash, id, now, credTTL(s.leaseTTL(ctx)))
	}
	return id, err
}

// SyncNode is an agent's heartbeat and work poll. It renews the node's
// lease, then answers with what the node should start, stop or whether it
// should exit; when there is nothing to do it waits up to wait for news.
func (s *Server) SyncNode(ctx context.Context, nodeID string, req *nodekind.AgentSyncRequest, wait time.Duration) (*nodekind.AgentSyncResponse, error) {
	resp, parked, err := s.BeginSync(ctx, nodeID, req, wait)
	if parked == nil {
		return resp, err
	}
	return parked.Wait(ctx)
}

// syncOnce computes the answer to a sync; renew renews the lease.
func (s *Server) syncOnce(ctx context.Context, nodeID string, req *nodekind.AgentSyncRequest, renew bool) (*nodekind.AgentSyncResponse, error) {
	if renew && req.Instance != nil {
		s.computes.RecordInstanceReport(ctx, nodeID, req.Instance)
	}
	lease := s.leaseTTL(ctx)
	// The node is read after this: a credential it still holds is
	// trusted again from here (credCache.renew).
	readFrom := s.cfg.Clock.Now()
	var credential string
	resp := &nodekind.AgentSyncResponse{Servers: s.servers(ctx), HeartbeatInterval: nodelease.Interval(lease), ReportsTakeLog: true}
	writeBeat := false
	var unstarted *nodekind.RankRef
	var unstartedReason string
	var refused *nodekind.RankRef
	var refusal *TaskFailure
	var vanished *nodekind.RankRef
	sshPortChanged, resync := false, false
	fn := func(tx store.Tx) error {
		n, err := tx.GetNode(nodeID)
		if err != nil {
			if core.ErrorCode(err) == core.ENOTFOUND {
				resp.Exit = true // the node was released while away
				return nil
			}
			return err
		}
		credential = n.CredentialHash
		now := tx.Now()
		if renew {
			if n.State == nodekind.NodeUnusable {
				// Declared lost but back: its work was requeued; it is
				// released rather than trusted again.
				resp.Exit = true
			}
			// The lease is written at most every heartbeatWriteEvery: a
			// busy node syncs after every job, and a write per sync would
			// queue behind every other writer.
			if now.Sub(n.LastHeartbeat) >= heartbeatWriteEvery(lease) {
				writeBeat = true
				n.LastHeartbeat = now
			}
		}
		resp.LeaseExpires = n.LastHeartbeat.Add(lease + s.cfg.NodeLeaseGrace)
		running := map[nodekind.RankRef]bool{}
		for _, r := range req.Running {
			running[r] = true
		}
		pending := map[nodekind.RankRef]bool{}
		for _, r := range req.Pending {
			pending[r] = true
		}
		// Ranks the agent runs that are no longer its assignment are stopped.
		for r := range running {
			if r.AttemptID != n.CurrentAttemptID || r.Rank != n.CurrentRank {
				resp.Stop = append(resp.Stop, nodekind.StopOrder{RankRef: r, Reason: "superseded"})
			}
		}
		if n.CurrentAttemptID != "" {
			a, j, err := AttemptWithJob(tx, n.CurrentAttemptID)
			if err != nil {
				return err
			}
			ref := nodekind.RankRef{AttemptID: a.ID, Rank: n.CurrentRank}
			order, reason := jobrun.RankOrder(jobrun.SyncView{
				NodeState: n.State, Job: j, Attempt: a, Rank: n.CurrentRank,
				Running: running[ref], Pending: pending[ref], FirstSync: req.First, Fresh: renew,
			})
			switch order {
			case jobrun.Stop:
				resp.Stop = append(resp.Stop, nodekind.StopOrder{RankRef: ref, Reason: reason})
			case jobrun.Resync:
				resync = true
			case jobrun.EndUnstarted:
				unstarted, unstartedReason = &ref, reason
			case jobrun.Vanished:
				vanished = &ref
			case jobrun.StartRank:
				t, err := s.jobs.AgentTask(tx, j, a, n)
				if f, ok := AsTaskFailure(err); ok {
					refused, refusal = &ref, f
					break
				} else if err != nil {
					return err
				}
				if c, err := tx.GetCompute(j.Workspace, j.Compute); err == nil {
					t.Identities = access.JobIdentities(tx, c, j)
				}
				resp.Start = append(resp.Start, t)
			}
		}
		if n.CurrentAttemptID == "" && (n.State == nodekind.NodeLeaving || n.State == nodekind.NodePreempted) {
			resp.Exit = true
		}
		if n.Role == nodekind.NodeRoleInstance && !resp.Exit {
			t, err := s.computes.InstanceTask(tx, n)
			if err != nil {
				return err
			}
			resp.Instance = t
		}
		if n.Role == "" && req.First && !resp.Exit {
			// A cluster's SSH settings are fixed at creation: the agent
			// learns them once, on its first sync.
			c, err := tx.GetCompute(n.Workspace, n.Compute)
			if err == nil {
				resp.SSH = s.computes.NodeSSH(c)
			} else if core.ErrorCode(err) != core.ENOTFOUND {
				return err // the agent asks again (First) on its next sync
			}
		}
		// A restarted agent's first sync reports no port yet.
		sshPortChanged = renew && n.Role == "" && !req.First && req.SSHPort != n.SSHPort
		return nil
	}
	if err := s.agentView(ctx, fn); err != nil {
		return nil, err
	}
	// A fleet whose lease is longer than the cache's trust would read its
	// credential again every few syncs (at 10,000 nodes a third of them,
	// a read each): the sync's own read of the node vouches for it.
	s.credCache.renew(credential, nodeID, readFrom, credTTL(lease))
	if resync {
		resp.Resync = true
	}
	if unstarted != nil {
		state := nodekind.RankCanceled
		if unstartedReason == jobrun.StopPreempted {
			state = nodekind.RankPreempted
		}
		if err := s.jobs.EndRankForNode(ctx, nodeID, *unstarted, job.AttemptPreparing, state, unstartedReason+" before it started"); err != nil {
			return nil, err
		}
	}
	if refused != nil {
		if err := s.jobs.FailRankForNode(ctx, nodeID, *refused, job.AttemptPreparing, refusal.Failure, refusal.Msg); err != nil {
			return nil, err
		}
	}
	if vanished != nil {
		if err := s.jobs.EndRankForNode(ctx, nodeID, *vanished, job.AttemptRunning, nodekind.RankLost,
			"the node's agent was restarted and the rank's processes did not survive it"); err != nil {
			return nil, err
		}
	}
	if sshPortChanged && !resp.Exit {
		if err := s.computes.RecordNodeSSHPort(ctx, nodeID, req.SSHPort); err != nil {
			// Written again on the next sync; the heartbeat goes on.
			s.log.Warn("recording a node's SSH port failed", slog.String("node", nodeID), slog.Any("err", err))
		}
	}
	if writeBeat {
		// A sync that answers at once does not wait for other leases
		// to gather: its node waits for the answer (a job to start).
		if err := s.beats.beat(ctx, s.store, nodeID, answerNow(resp, req, 1)); err != nil {
			return nil, err
		}
	}
	return resp, nil
}

// heartbeatWriteEvery is how stale a stored heartbeat may get before a sync
// writes it again: a sixth of the lease, at most a second.
func heartbeatWriteEvery(lease time.Duration) time.Duration {
	return min(lease/6, time.Second)
}

// nodeRank returns the attempt and rank a node may act on, refusing a node
// that reports for work that is not its current assignment (fencing: a
// partitioned agent cannot overwrite a newer attempt's state).
func nodeRank(tx store.Tx, n *nodekind.Node, attemptID string, rank int) (*job.Attempt, *job.RankStatus, error) {
	a, err := tx.GetAttempt(attemptID)
	if core.ErrorCode(err) == core.ENOTFOUND {
		return nil, nil, core.Errorf(core.EFORBIDDEN, "attempt %s is not assigned to node %s", attemptID, n.ID)
	} else if err != nil {
		return nil, nil, err
	}
	return rankOf(n, a, attemptID, rank)
}

// rankOf returns rank of attempt a, refused unless it is node n's.
func rankOf(n *nodekind.Node, a *job.Attempt, attemptID string, rank int) (*job.Attempt, *job.RankStatus, error) {
	if rank < 0 || rank >= len(a.Ranks) || a.Ranks[rank].NodeID != n.ID {
		return nil, nil, core.Errorf(core.EFORBIDDEN, "rank %d of attempt %s is not assigned to node %s", rank, attemptID, n.ID)
	}
	return a, a.Ranks[rank], nil
}

// RankWork is one rank of an attempt as its node sees it: what an agent's
// report is checked against (and what the job services change for it).
type RankWork struct {
	Node    *nodekind.Node
	Attempt *job.Attempt
	Rank    *job.RankStatus
	Job     *job.Job
}

// LoadRankWork reads a node, the rank of an attempt it claims (refused
// unless the rank is assigned to it) and the attempt's job. It is
// exported for the job services, which fence a rank's report the same
// way.
func LoadRankWork(tx store.Tx, nodeID, attemptID string, rank int) (*RankWork, error) {
	// The node, the attempt and its job in one round trip (every report
	// reads them); should any be missing, the reads one by one say
	// which, in the order the checks are made (an attempt not the node's
	// is refused before its job is looked for).
	if n, a, j, err := tx.GetNodeWork(nodeID, attemptID); err == nil {
		_, rs, err := rankOf(n, a, attemptID, rank)
		if err != nil {
			return nil, err
		}
		return &RankWork{Node: n, Attempt: a, Rank: rs, Job: j}, nil
	} else if core.ErrorCode(err) != core.ENOTFOUND {
		return nil, err
	}
	n, err := tx.GetNode(nodeID)
	if err != nil {
		return nil, err
	}
	a, rs, err := nodeRank(tx, n, attemptID, rank)
	if err != nil {
		return nil, err
	}
	j, err := tx.GetJob(a.Workspace, a.JobName)
	if err != nil {
		return nil, err
	}
	return &RankWork{Node: n, Attempt: a, Rank: rs, Job: j}, nil
}

// AttemptWithJob reads an attempt and the job it belongs to: how a node's
// current work (Node.CurrentAttemptID) is followed to its job. Exported
// for the job services, which follow a lost node's work the same way.
func AttemptWithJob(tx store.Tx, attemptID string) (*job.Attempt, *job.Job, error) {
	return tx.GetAttemptWithJob(attemptID)
}

// CheckNodeRank verifies that a node may upload logs or outputs for a rank.
func (s *Server) CheckNodeRank(ctx context.Context, nodeID, attemptID string, rank int) (*job.Attempt, error) {
	var a *job.Attempt
	err := s.store.View(ctx, func(tx store.Tx) error {
		n, err := tx.GetNode(nodeID)
		if err != nil {
			return err
		}
		a, _, err = nodeRank(tx, n, attemptID, rank)
		return err
	})
	return a, err
}

// WriteRankLog appends (at offset) to the log of a rank, for its node.
func (s *Server) WriteRankLog(ctx context.Context, nodeID, attemptID string, rank int, offset int64, data []byte) error {
	// The workspace's cap and storage quota hold whatever the agent
	// does: past either, the log keeps one marker line and nothing more.
	// Read in the check's own transaction: one read transaction per
	// chunk, not two (on PostgreSQL each is round trips of its own).
	var a *job.Attempt
	var l money.WorkspaceLimits
	if err := s.store.View(ctx, func(tx store.Tx) error {
		n, err := tx.GetNode(nodeID)
		if err != nil {
			return err
		}
		if a, _, err = nodeRank(tx, n, attemptID, rank); err != nil {
			return err
		}
		l, err = tx.GetWorkspaceLimits(a.Workspace)
		return err
	}); err != nil {
		return err
	}
	return s.storage.WriteCappedLog(l, store.LogFile{
		Workspace: a.Workspace,
		Write: func(off int64, data []byte) error {
			return s.cfg.Files.WriteLog(a.Workspace, a.JobName, a.Number, rank, off, data)
		},
		Open: func() (io.ReadSeekCloser, error) { return s.cfg.Files.OpenLog(a.Workspace, a.JobName, a.Number, rank) },
	}, offset, data)
}

// MaxOutputBytes bounds one rank's output archive.
const MaxOutputBytes = 8 << 30

// PutRankOutputs stores the output archive of a rank, for its node.
func (s *Server) PutRankOutputs(ctx context.Context, nodeID, attemptID string, rank int, r io.Reader) error {
	a, err := s.CheckNodeRank(ctx, nodeID, attemptID, rank)
	if err != nil {
		return err
	}
	return s.storage.PutWithinQuota(ctx, a.Workspace, r, MaxOutputBytes, func(r io.Reader, max int64) error {
		return s.cfg.Files.PutOutputs(a.Workspace, a.JobName, a.Number, rank, r, max)
	})
}

// OpenRestoreOutputs opens the newest outputs an earlier attempt of the job
// left for this rank, so the new attempt resumes from its checkpoint.
func (s *Server) OpenRestoreOutputs(ctx context.Context, nodeID, attemptID string, rank int) (io.ReadCloser, error) {
	a, err := s.CheckNodeRank(ctx, nodeID, attemptID, rank)
	if err != nil {
		return nil, err
	}
	for n := a.Number - 1; n >= 1; n-- {
		if f, err := s.cfg.Files.OpenOutputs(a.Workspace, a.JobName, n, rank); err == nil {
			return f, nil
		}
	}
	return nil, core.Errorf(core.ENOTFOUND, "no earlier outputs for rank %d of job %s", rank, a.JobName)
}

// OpenArtifactForNode opens an artifact that the node's current job uses
// (its code, an input, or the build context of its environment, which
// the node builds); nodes cannot read other jobs' code or data.
func (s *Server) OpenArtifactForNode(ctx context.Context, nodeID, id string) (io.ReadCloser, error) {
	allowed, workspace := false, ""
	err := s.store.View(ctx, func(tx store.Tx) error {
		n, err := tx.GetNode(nodeID)
		if err != nil {
			return err
		}
		if n.CurrentAttemptID == "" {
			return nil
		}
		_, j, err := AttemptWithJob(tx, n.CurrentAttemptID)
		if err != nil {
			return err
		}
		workspace = j.Workspace
		allowed = j.Code == id
		for _, in := range j.Inputs {
			if in != nil && in.Path == id {
				allowed = true
			}
		}
		if env := j.ResolvedEnvironment; env != nil && env.Build != nil && env.Build.Path == id {
			allowed = true
		}
		if !allowed && strings.HasPrefix(id, "sha256:") {
			for _, a := range s.jobs.InputArtifacts(tx, j) {
				allowed = allowed || a == id
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if !allowed {
		return nil, core.Errorf(core.EFORBIDDEN, "artifact %s is not used by this node's job", id)
	}
	return s.cfg.Files.OpenArtifact(workspace, id)
}

// servers lists where agents reach the servers sharing the store.
func (s *Server) servers(ctx context.Context) []string {
	if s.cfg.Servers != nil {
		if l := s.cfg.Servers(ctx); len(l) > 0 {
			return l
		}
	}
	if s.cfg.ServerURL == "" {
		return nil
	}
	return []string{s.cfg.ServerURL}
}

// agentView is store.View for agents' syncs, at most Config.AgentReads at
// a time; the others wait here, in turn.
// 10,000 agents sync 3,000 times a second: left to the store's pool of
// read connections, 150 of them waited there at once, and a placement
// pass or a user's request waiting among them got a freed connection at
// random (database/sql hands one to any waiter) — a submission's scale-up
// decision took up to 430 ms where its median was 30. Held to half the
// pool, syncs leave the other half to everything else.
func (s *Server) agentView(ctx context.Context, fn func(tx store.Tx) error) error {
	select {
	case s.agentReads <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-s.agentReads }()
	return s.store.View(ctx, fn)
}
