package studio

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/identity"
	"github.com/shoal-ml/shoal/domain/job"
)

// livePoll is how often a live view re-reads what it shows.
const livePoll = 500 * time.Millisecond

// sse streams Server-Sent Events: read is called every livePoll and its
// value sent whenever it changes, until the client goes or done says so.
func (s *Studio) sse(q *req, read func() (any, bool, error)) error {
	// The server's writers unwrap to one that flushes.
	fl := http.NewResponseController(q.w)
	q.w.Header().Set("Content-Type", "text/event-stream")
	q.w.Header().Set("Cache-Control", "no-store")
	q.w.WriteHeader(http.StatusOK)
	last := ""
	tick := time.NewTicker(livePoll)
	defer tick.Stop()
	keepalive := time.Now()
	for {
		v, done, err := read()
		if err != nil {
			fmt.Fprintf(q.w, "event: error\ndata: %s\n\n", jsonString(map[string]string{"message": core.ErrorMessage(err)}))
			_ = fl.Flush()
			return nil
		}
		if b := jsonString(v); b != last {
			last = b
			fmt.Fprintf(q.w, "data: %s\n\n", b)
			_ = fl.Flush()
			keepalive = time.Now()
		} else if time.Since(keepalive) > 15*time.Second {
			fmt.Fprint(q.w, ": keepalive\n\n")
			_ = fl.Flush()
			keepalive = time.Now()
		}
		if done {
			fmt.Fprint(q.w, "event: end\ndata: {}\n\n")
			_ = fl.Flush()
			return nil
		}
		select {
		case <-q.r.Context().Done():
			return nil
		case <-tick.C:
		}
	}
}

func jsonString(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// liveCompute streams a compute's state: an instance's state and last
// operation, a cluster's node counts.
func (s *Studio) liveCompute(q *req) error {
	if err := s.allow(q, identity.ActComputesRead); err != nil {
		return err
	}
	name := q.r.PathValue("name")
	return s.sse(q, func() (any, bool, error) {
		c, err := s.cfg.Svc.FindCompute(q.ctx, q.workspace, name)
		if err != nil {
			return nil, core.ErrorCode(err) == core.ENOTFOUND, err
		}
		out := map[string]any{"state": computeState(c), "nodes": c.NodeStateCounts, "current": c.CurrentNodeCount}
		if c.LastOperation != nil {
			out["last_operation"] = c.LastOperation
		}
		if c.IdleState != nil {
			out["idle"] = c.IdleState
		}
		if c.IsInstance() {
			// What the instance page refreshes when it changes: whether
			// SSH answers (not the address: that is its user's) and each
			// application's readiness.
			out["ssh"] = c.SSHConnectionString != ""
			apps := make([]map[string]any, 0, len(c.Applications))
			for _, a := range c.Applications {
				apps = append(apps, map[string]any{"name": a.DisplayName, "running": a.Running, "ready": a.Ready})
			}
			out["apps"] = apps
			out["sso"] = c.EnableSSO != nil && *c.EnableSSO
		}
		return out, false, nil
	})
}

// liveJob streams a job's status and reason until it ends.
func (s *Studio) liveJob(q *req) error {
	if err := s.allow(q, identity.ActJobsRead); err != nil {
		return err
	}
	name := q.r.PathValue("name")
	return s.sse(q, func() (any, bool, error) {
		j, err := s.cfg.Svc.FindJob(q.ctx, q.workspace, name)
		if err != nil {
			return nil, false, err
		}
		return map[string]any{"status": j.Status, "status_reason": j.StatusReason, "attempts": j.AttemptCount}, job.JobTerminal(j.Status), nil
	})
}
