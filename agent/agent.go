// Package agent is the node agent, `shoal agent`: the same program on every
// kind of node. It joins the server with a single-use join token, then
// syncs (heartbeat and work poll in one long-poll), runs the ranks of job
// attempts it is given as real processes, streams their logs, uploads their
// outputs and reports every state change naming the attempt. It keeps
// running jobs alive while the server is away and reports back when it
// returns.
package agent

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/shoal-ml/shoal"
	"github.com/shoal-ml/shoal/api"
)

// Config configures an agent.
type Config struct {
	// ServerURL is the Shoal server.
	ServerURL string
	// NodeID is the node this agent is.
	NodeID string
	// JoinToken is the single-use token the provider handed over.
	JoinToken string
	// WorkDir holds the attempts' folders.
	WorkDir string
	// Address is where other nodes reach this one (default 127.0.0.1).
	Address string
	// Logger receives the agent's logs.
	Logger *slog.Logger
	// OrphanTimeout: an agent with no work that cannot reach the server for
	// this long exits (default 15 minutes), so a lost control plane does
	// not leave idle agents forever.
	OrphanTimeout time.Duration
}

// Agent is a running node agent.
type Agent struct {
	cfg    Config
	client *api.AgentClient
	log    *slog.Logger
	join   *shoal.JoinResponse

	mu    sync.Mutex
	ranks map[shoal.RankRef]*rankRun
	wg    sync.WaitGroup
}

// Run joins the server and serves until ctx is cancelled or the server
// tells the node to exit.
func Run(ctx context.Context, cfg Config) error {
	if cfg.Address == "" {
		cfg.Address = "127.0.0.1"
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.OrphanTimeout == 0 {
		cfg.OrphanTimeout = 15 * time.Minute
	}
	if cfg.NodeID == "" || cfg.ServerURL == "" || cfg.JoinToken == "" || cfg.WorkDir == "" {
		return errors.New("agent: --server, --node-id, --work-dir and SHOAL_JOIN_TOKEN are required")
	}
	if err := os.MkdirAll(cfg.WorkDir, 0o700); err != nil {
		return err
	}
	a := &Agent{cfg: cfg, client: api.NewAgentClient(cfg.ServerURL, cfg.JoinToken), log: cfg.Logger.With("node", cfg.NodeID), ranks: map[shoal.RankRef]*rankRun{}}
	port, err := freePort(cfg.Address)
	if err != nil {
		return err
	}
	if err := a.joinServer(ctx, port); err != nil {
		return err
	}
	a.log.Info("joined", "port", port)
	err = a.syncLoop(ctx)
	a.stopAll("preempted")
	a.wg.Wait()
	return err
}

// joinServer joins, retrying while the server is unreachable.
func (a *Agent) joinServer(ctx context.Context, port int) error {
	backoff := 100 * time.Millisecond
	for {
		resp, err := a.client.Join(ctx, shoal.JoinRequest{NodeID: a.cfg.NodeID, Address: a.cfg.Address, Port: port})
		if err == nil {
			a.join = resp
			return nil
		}
		if code := shoal.ErrorCode(err); code == shoal.EUNAUTHORIZED || code == shoal.EINVALID || code == shoal.EFORBIDDEN {
			return fmt.Errorf("join refused: %w", err)
		}
		a.log.Warn("join failed; retrying", "err", err)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, 5*time.Second)
	}
}

// syncLoop heartbeats and receives work until told to exit.
func (a *Agent) syncLoop(ctx context.Context) error {
	interval := a.join.HeartbeatInterval
	if interval <= 0 {
		interval = 3 * time.Second
	}
	lastContact := time.Now()
	for ctx.Err() == nil {
		resp, err := a.client.Sync(ctx, &shoal.AgentSyncRequest{Running: a.running()}, interval)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			if shoal.ErrorCode(err) == shoal.EUNAUTHORIZED {
				a.log.Warn("the server no longer knows this node; exiting", "err", err)
				return nil
			}
			if len(a.running()) == 0 && time.Since(lastContact) > a.cfg.OrphanTimeout {
				a.log.Warn("server unreachable and no work; exiting", "for", time.Since(lastContact))
				return nil
			}
			a.log.Warn("sync failed; jobs keep running", "err", err)
			select {
			case <-ctx.Done():
			case <-time.After(min(interval, time.Second)):
			}
			continue
		}
		lastContact = time.Now()
		for _, s := range resp.Stop {
			a.stopRank(s.RankRef, s.Reason)
		}
		for _, t := range resp.Start {
			a.startRank(ctx, t)
		}
		if resp.Exit {
			a.log.Info("released by the server; exiting")
			return nil
		}
	}
	return nil
}

func (a *Agent) running() []shoal.RankRef {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make([]shoal.RankRef, 0, len(a.ranks))
	for r := range a.ranks {
		out = append(out, r)
	}
	return out
}

func (a *Agent) stopRank(ref shoal.RankRef, reason string) {
	a.mu.Lock()
	r := a.ranks[ref]
	a.mu.Unlock()
	if r != nil {
		a.log.Info("stopping rank", "attempt", ref.AttemptID, "rank", ref.Rank, "reason", reason)
		r.stop(reason)
	}
}

func (a *Agent) stopAll(reason string) {
	for _, ref := range a.running() {
		a.stopRank(ref, reason)
	}
}

func (a *Agent) startRank(ctx context.Context, t *shoal.AgentTask) {
	a.mu.Lock()
	if _, ok := a.ranks[t.RankRef]; ok {
		a.mu.Unlock()
		return
	}
	r := newRankRun(a, t)
	a.ranks[t.RankRef] = r
	a.mu.Unlock()
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		r.run(context.WithoutCancel(ctx))
		a.mu.Lock()
		delete(a.ranks, t.RankRef)
		a.mu.Unlock()
	}()
}

// attemptDir is where one rank of an attempt runs.
func (a *Agent) attemptDir(t *shoal.AgentTask) string {
	return filepath.Join(a.cfg.WorkDir, "attempts", fmt.Sprintf("%s-r%d", t.AttemptID, t.Rank))
}

// freePort picks a port for this node's distributed jobs (MASTER_PORT when
// the node is rank 0).
func freePort(addr string) (int, error) {
	l, err := net.Listen("tcp", net.JoinHostPort(addr, "0"))
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
