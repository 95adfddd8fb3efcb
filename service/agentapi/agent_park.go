package agentapi

import (
	"context"
	"sync"
	"time"

	"github.com/shoal-ml/shoal/domain/identity"
	"github.com/shoal-ml/shoal/domain/node"
)

// A ParkedSync is an agent's sync that found nothing to say and waits for
// news (a wake of its node) or the end of its wait, without a goroutine
// of its own: at 10,000 nodes every agent is parked in a sync almost all
// the time, and a goroutine (with its stack) and a connection's buffers
// per parked sync were most of the server's memory. The API parks the
// connection too (api.Parking) and answers through Await's function.
type ParkedSync struct {
	s *Server
	// who is the sync's principal (the node): a recheck acts as it. Not
	// the request's context: kept for the whole wait, its chain of
	// values and cancellations (the connection's and the request's, the
	// admission's, the audit's) was about a kilobyte a parked sync.
	who    *identity.Principal
	nodeID string
	req    *node.AgentSyncRequest

	mu       sync.Mutex
	resp     *node.AgentSyncResponse // the latest answer, sent at the deadline
	deadline time.Time
	stop     func() bool // the pending wake's Notify, nil when none
	woken    bool        // a wake came before Await
	timer    *time.Timer
	done     func(*node.AgentSyncResponse, error) // nil until Await
	finished bool
	counted  bool // in Server.parked until finished
}

// answerNow reports whether a sync's answer goes back at once rather than
// waiting for news.
func answerNow(resp *node.AgentSyncResponse, req *node.AgentSyncRequest, wait time.Duration) bool {
	// An instance's agent that has not reported yet has not started
	// serving: it gets its task at once.
	return len(resp.Start) > 0 || len(resp.Stop) > 0 || resp.Exit || wait <= 0 ||
		(resp.Instance != nil && req.Instance == nil) || resp.SSH != nil || resp.Resync
}

// BeginSync is SyncNode without its wait: it renews the node's lease and
// returns the answer when there is one at once, or else the sync parked,
// whose Await gives the answer later. A wake that comes between the two
// is not lost.
func (s *Server) BeginSync(ctx context.Context, nodeID string, req *node.AgentSyncRequest, wait time.Duration) (*node.AgentSyncResponse, *ParkedSync, error) {
	if req.Leaving != "" {
		if err := s.computes.NodeLeaving(ctx, nodeID, req.Leaving); err != nil {
			return nil, nil, err
		}
		wait = 0
	}
	if err := s.recordNodeReport(ctx, nodeID, req); err != nil {
		return nil, nil, err
	}
	// The deadline is the poll's timeout, no decision: the wall clock.
	p := &ParkedSync{s: s, who: identity.PrincipalFrom(ctx), nodeID: nodeID, req: req, deadline: time.Now().Add(wait)}
	if wait > 0 {
		p.listen()
	}
	resp, err := s.syncOnce(ctx, nodeID, req, true)
	p.mu.Lock()
	defer p.mu.Unlock()
	if err != nil || answerNow(resp, req, wait) {
		p.finished = true
		p.unlisten()
		return resp, nil, err
	}
	if !s.parked.take(nodeID) {
		// This node has enough syncs parked already: a hostile or
		// confused agent does not pile them up (each holds a socket, a
		// timer and a place in the node's wake-ups); it is answered at
		// once, as at the end of a wait.
		p.finished = true
		p.unlisten()
		return resp, nil, nil
	}
	p.counted = true
	p.resp = resp
	return nil, p, nil
}

// maxParkedPerNode bounds the syncs one node may have parked at once. An
// agent has one, and two for a moment when a connection broke and it
// synced again before the first's wait ended.
const maxParkedPerNode = 4

// parkedCounts counts the syncs parked per node.
type parkedCounts struct {
	mu sync.Mutex
	n  map[string]int
}

// take counts a sync of node parked; false when it has maxParkedPerNode.
func (c *parkedCounts) take(node string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = map[string]int{}
	}
	if c.n[node] >= maxParkedPerNode {
		return false
	}
	c.n[node]++
	return true
}

// done uncounts a parked sync of node.
func (c *parkedCounts) done(node string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n[node] <= 1 {
		delete(c.n, node)
		return
	}
	c.n[node]--
}

// listen asks for the node's next wake.
func (p *ParkedSync) listen() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.finished && p.stop == nil {
		p.stop = p.s.wakes.Notify(p.nodeID, p.onWake)
	}
}

// unlisten drops the pending wake; p.mu is held.
func (p *ParkedSync) unlisten() {
	if p.stop != nil {
		p.stop()
		p.stop = nil
	}
}

// onWake runs in the waker's goroutine: it must not block.
func (p *ParkedSync) onWake() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stop = nil
	if p.finished {
		return
	}
	if p.done == nil {
		p.woken = true // Await looks again
		return
	}
	go p.recheck()
}

// Await calls done once, in a goroutine of its own, with the answer: at
// the first wake whose sync has something to say, or with the latest
// answer when the wait ends.
func (p *ParkedSync) Await(done func(*node.AgentSyncResponse, error)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done = done
	if p.finished {
		// Released before Await (a server shutting down between parking
		// the connection and waiting on it): the answer goes at once.
		go done(p.resp, nil)
		return
	}
	p.timer = time.AfterFunc(time.Until(p.deadline), p.expire)
	if p.woken {
		p.woken = false
		go p.recheck()
	}
}

// Wait is Await for a caller that has a goroutine to spend (a request the
// API could not park): it returns the answer, or the latest one when ctx
// ends.
func (p *ParkedSync) Wait(ctx context.Context) (*node.AgentSyncResponse, error) {
	type answer struct {
		resp *node.AgentSyncResponse
		err  error
	}
	ch := make(chan answer, 1)
	p.Await(func(resp *node.AgentSyncResponse, err error) { ch <- answer{resp, err} })
	select {
	case a := <-ch:
		return a.resp, a.err
	case <-ctx.Done():
		p.mu.Lock()
		defer p.mu.Unlock()
		if !p.finished {
			p.finishLocked()
			return p.resp, nil
		}
		a := <-ch // finished meanwhile: its answer is on the way
		return a.resp, a.err
	}
}

// expire answers with the latest answer at the end of the wait.
func (p *ParkedSync) expire() {
	p.mu.Lock()
	if p.finished {
		p.mu.Unlock()
		return
	}
	p.finishLocked()
	resp, done := p.resp, p.done
	p.mu.Unlock()
	if done != nil { // else Await, still to come, answers
		done(resp, nil)
	}
}

// finishLocked marks p answered and drops its wake and timer.
func (p *ParkedSync) finishLocked() {
	p.finished = true
	if p.counted {
		p.counted = false
		p.s.parked.done(p.nodeID)
	}
	p.unlisten()
	if p.timer != nil {
		p.timer.Stop()
	}
}

// recheck syncs again after a wake (without renewing the lease, as
// SyncNode does) and answers if there is news, or parks again.
func (p *ParkedSync) recheck() {
	p.listen()
	resp, err := p.s.syncOnce(identity.WithPrincipal(context.Background(), p.who), p.nodeID, p.req, false)
	p.mu.Lock()
	if p.finished {
		p.mu.Unlock()
		return
	}
	if err == nil && !answerNow(resp, p.req, time.Until(p.deadline)) {
		p.resp = resp
		p.mu.Unlock()
		return
	}
	p.finishLocked()
	done := p.done
	p.mu.Unlock()
	done(resp, err)
}

// Release answers at once with the latest answer, as at the end of the
// wait (a server shutting down); nothing if p is answered already.
func (p *ParkedSync) Release() { p.expire() }
