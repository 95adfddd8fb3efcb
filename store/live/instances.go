// Package live keeps the state that agents and passes refresh all the
// time, so that every server replica answers the same: the live state of
// compute instances (InstanceState), why queued jobs wait (WaitReasons,
// reasons.go) and the wake-ups of agents' long polls (Wakes, wakes.go).
//
// The live state of compute instances is what each instance's agent
// reported last and when the application proxy last carried a request to
// it. Agents sync with whichever replica they reach and any replica may
// serve the proxy, while the leader's controllers decide from this state
// (setup done, where applications listen, idle activity): it is stored
// (shoal.InstanceLive), not kept in the memory of the replica that heard
// it.
//
// Writes are bounded: a report is written when what it says changes
// (phase, setup, SSH port, applications, which kernels, terminals and SSH
// sessions there are), while activity that moves on every heartbeat
// (activity times, kernels' execution states, CPU use) and the proxy's
// request times are written at most every WriteEvery. The replica that
// heard them also keeps them in memory and reads them over the stored
// state, so a single server decides from exactly what its agents said, as
// before; another replica sees them at most WriteEvery late.
package live

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"time"

	"github.com/shoal-ml/shoal/domain/core"
	nodekind "github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/store"
)

// InstanceState is the live state of compute instances, the same on every
// replica. Names compare case-insensitively.
type InstanceState interface {
	// Get returns an instance's live state as of tx (a zero value with
	// names set when none is stored).
	Get(tx store.Tx, workspace, name string) (nodekind.InstanceLive, error)
	// Report records what the agent of node reported at at. It returns
	// whether the report moves the instance (a new phase, applications
	// listening elsewhere, or the first report): the controllers should
	// then run soon.
	Report(ctx context.Context, workspace, name, node string, r *nodekind.InstanceReport, at time.Time) (bool, error)
	// TouchProxy records a request through the application proxy at at.
	TouchProxy(ctx context.Context, workspace, name string, at time.Time) error
	// Forget drops the report of an instance whose node is released, as
	// of at; the proxy's time stays (activity of the instance, not of a
	// node).
	Forget(ctx context.Context, workspace, name string, at time.Time) error
	// Delete removes the live state of a deleted instance in tx.
	Delete(tx store.Tx, workspace, name string) error
}

// Config configures Instances.
type Config struct {
	// Store keeps the state.
	Store store.Store
	// WriteEvery bounds how often activity alone is written for one
	// instance, and so how late another replica sees it.
	WriteEvery time.Duration
}

// Instances is the store-backed InstanceState.
type Instances struct {
	store store.Store
	every time.Duration

	mu    sync.Mutex
	local map[string]*heard
}

var _ InstanceState = (*Instances)(nil)

// heard is what this replica heard of one instance, written or not.
type heard struct {
	node         string
	report       *nodekind.InstanceReport
	at           time.Time // of report; a forget's time when report is nil
	proxy        time.Time
	proxyWritten time.Time
}

// NewInstances returns the live state of instances kept in cfg.Store.
func NewInstances(cfg Config) *Instances {
	return &Instances{store: cfg.Store, every: cfg.WriteEvery, local: map[string]*heard{}}
}

func key(workspace, name string) string {
	return strings.ToLower(workspace) + "/" + strings.ToLower(name)
}

// Get returns an instance's stored live state with what this replica
// heard since over it. With nothing stored, what it heard is stale (the
// instance was deleted: a first report is always written) and is not
// used.
func (l *Instances) Get(tx store.Tx, workspace, name string) (nodekind.InstanceLive, error) {
	st, err := stored(tx, workspace, name)
	if err != nil {
		return nodekind.InstanceLive{Workspace: workspace, Compute: name}, err
	}
	return l.over(st, workspace, name), nil
}

// stored reads an instance's stored live state, nil when none.
func stored(tx store.Tx, workspace, name string) (*nodekind.InstanceLive, error) {
	st, err := tx.GetInstanceLive(workspace, name)
	if core.ErrorCode(err) == core.ENOTFOUND {
		return nil, nil
	}
	return st, err
}

// over returns st with what this replica heard since over it.
func (l *Instances) over(st *nodekind.InstanceLive, workspace, name string) nodekind.InstanceLive {
	if st == nil {
		return nodekind.InstanceLive{Workspace: workspace, Compute: name}
	}
	out := *st
	l.mu.Lock()
	defer l.mu.Unlock()
	if h := l.local[key(workspace, name)]; h != nil {
		if h.at.After(out.ReportedAt) {
			out.Node, out.Report, out.ReportedAt = h.node, h.report, h.at
		}
		if h.proxy.After(out.ProxyLastRequest) {
			out.ProxyLastRequest = h.proxy
		}
	}
	return out
}

// Report records a report; see InstanceState.
func (l *Instances) Report(ctx context.Context, workspace, name, node string, r *nodekind.InstanceReport, at time.Time) (bool, error) {
	var st *nodekind.InstanceLive
	err := l.store.View(ctx, func(tx store.Tx) (err error) {
		st, err = stored(tx, workspace, name)
		return err
	})
	if err != nil {
		return false, err
	}
	prev := l.over(st, workspace, name)
	k := key(workspace, name)
	l.mu.Lock()
	h := l.local[k]
	if h == nil {
		h = &heard{}
		l.local[k] = h
	}
	if !at.Before(h.at) {
		h.node, h.report, h.at = node, r, at
	}
	l.mu.Unlock()
	moved := prev.Report == nil || prev.Node != node || prev.Report.Phase != r.Phase || !strings.EqualFold(appsKey(prev.Report), appsKey(r))
	write := st == nil || st.Report == nil || st.Node != node || shape(st.Report) != shape(r) ||
		(at.Sub(st.ReportedAt) >= l.every && activity(st.Report) != activity(r))
	if !write {
		return moved, nil
	}
	err = l.store.Update(ctx, func(tx store.Tx) error {
		_, err := tx.PutInstanceReport(&nodekind.InstanceLive{Workspace: workspace, Compute: name, Node: node, Report: r, ReportedAt: at})
		return err
	})
	return moved, err
}

// TouchProxy records a proxied request; see InstanceState.
func (l *Instances) TouchProxy(ctx context.Context, workspace, name string, at time.Time) error {
	k := key(workspace, name)
	l.mu.Lock()
	h := l.local[k]
	if h == nil {
		h = &heard{}
		l.local[k] = h
	}
	if at.After(h.proxy) {
		h.proxy = at
	}
	write := at.Sub(h.proxyWritten) >= l.every
	if write {
		h.proxyWritten = at
	}
	l.mu.Unlock()
	if !write {
		return nil
	}
	err := l.store.Update(ctx, func(tx store.Tx) error { return tx.TouchInstanceProxy(workspace, name, at) })
	if err != nil {
		l.mu.Lock()
		h.proxyWritten = time.Time{} // written on the next request
		l.mu.Unlock()
	}
	return err
}

// Forget drops an instance's report; see InstanceState.
func (l *Instances) Forget(ctx context.Context, workspace, name string, at time.Time) error {
	l.mu.Lock()
	if h := l.local[key(workspace, name)]; h != nil && !at.Before(h.at) {
		h.node, h.report, h.at = "", nil, at
	}
	l.mu.Unlock()
	return l.store.Update(ctx, func(tx store.Tx) error {
		_, err := tx.PutInstanceReport(&nodekind.InstanceLive{Workspace: workspace, Compute: name, ReportedAt: at})
		return err
	})
}

// Delete removes a deleted instance's live state in tx.
func (l *Instances) Delete(tx store.Tx, workspace, name string) error {
	l.mu.Lock()
	delete(l.local, key(workspace, name))
	l.mu.Unlock()
	return tx.DeleteInstanceLive(workspace, name)
}

// shape is what a report says that is written at once when it changes:
// everything but the activity that moves on every heartbeat.
func shape(r *nodekind.InstanceReport) string {
	c := *r
	c.SSHLogins, c.SSHLastActivity, c.CPUPercent = nil, nil, nil
	c.Kernels = names(r.Kernels)
	c.Terminals = names(r.Terminals)
	b, _ := json.Marshal(&c)
	return string(b)
}

// names keeps the names of kernels or terminals only.
func names(ks []nodekind.KernelActivity) []nodekind.KernelActivity {
	var out []nodekind.KernelActivity
	for _, k := range ks {
		out = append(out, nodekind.KernelActivity{Name: k.Name})
	}
	return out
}

// activity is all a report says (but SSH logins, which go to the audit
// log).
func activity(r *nodekind.InstanceReport) string {
	c := *r
	c.SSHLogins = nil
	b, _ := json.Marshal(&c)
	return string(b)
}

// appsKey says where a report's applications listen and whether they are
// ready.
func appsKey(r *nodekind.InstanceReport) string {
	if r == nil {
		return ""
	}
	var b strings.Builder
	for _, a := range r.Apps {
		b.WriteString(a.Name + "=" + a.Addr)
		if a.Ready {
			b.WriteString("+")
		}
		b.WriteString(";")
	}
	return b.String()
}
