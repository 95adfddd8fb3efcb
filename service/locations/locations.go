// Package locations serves the location requests: a location with its
// quota use, its provider's hosts and the machines joined by hand, as the
// caller may see them (the nodes of the workspaces where they may read
// computes). Package service embeds Locations, so its methods are the
// services' own to api/, arm/ and studio/.
package locations

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/shoal-ml/shoal/domain/catalog"
	"github.com/shoal-ml/shoal/domain/identity"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/store"
)

// Config wires Locations to what it reads.
type Config struct {
	Store   store.Store
	Catalog *catalog.Catalog
	Auth    identity.Authorizer
	// Provider is the provider of a location's nodes (computes.Service's).
	Provider func(loc *catalog.Location) node.Provider
	// Usages is a location's quota use (quota.Quotas' ListUsages).
	Usages func(ctx context.Context, location string) ([]catalog.Usage, error)
}

// Locations serves the location requests.
type Locations struct{ cfg Config }

// New returns the location requests' service over cfg.
func New(cfg Config) *Locations { return &Locations{cfg: cfg} }

// FindLocation returns a location (by name or alias) with its quota use,
// its provider's hosts and the machines joined by hand. Its nodes (the
// count, the machines joined by hand, what a host runs) are those of the
// workspaces where the caller may read computes (nodesShownTo). Returns
// ENOTFOUND.
func (l *Locations) FindLocation(ctx context.Context, name string) (*catalog.LocationDetail, error) {
	loc, err := l.cfg.Catalog.Location(name)
	if err != nil {
		return nil, err
	}
	d := &catalog.LocationDetail{Location: loc, Hosts: []*catalog.Host{}}
	if d.Usage, err = l.cfg.Usages(ctx, loc.Name); err != nil {
		return nil, err
	}
	if r, ok := l.cfg.Provider(loc).(catalog.WorkIsolationReporter); ok {
		d.WorkIsolation = r.WorkIsolation()
	}
	if hl, ok := l.cfg.Provider(loc).(catalog.HostLister); ok {
		hosts, err := hl.Hosts(ctx)
		if err != nil {
			return nil, err
		}
		d.Hosts = append(d.Hosts, hosts...)
	}
	var nodes []*node.Node
	err = l.cfg.Store.View(ctx, func(tx store.Tx) error {
		var err error
		nodes, err = tx.ListNodes(node.NodeFilter{Location: loc.Name})
		return err
	})
	if err != nil {
		return nil, err
	}
	nodes = l.nodesShownTo(ctx, nodes)
	d.Nodes = len(nodes)
	since := map[*catalog.Host]time.Time{}
	for _, n := range nodes {
		if n.Role == node.NodeRoleStatic {
			// A machine joined by hand is a host of its own.
			h := &catalog.Host{Name: n.ID, Address: n.PrivateIPAddress, Kind: "joined by hand", Nodes: 1, State: catalog.HostReady}
			noteRuntime(h, n, since)
			switch n.State {
			case node.NodeUnusable:
				h.State, h.Reason = catalog.HostUnusable, n.StateReason
			case node.NodePreparing:
				h.State, h.Reason = catalog.HostUnusable, fmt.Sprintf("not joined yet: its join command is valid until %s", n.JoinTokenExpires.UTC().Format("2006-01-02 15:04 MST"))
			}
			d.Hosts = append(d.Hosts, h)
			continue
		}
		// The provider's nodes run on its hosts: the one whose address
		// the node's agent reported, or the only one (local).
		var providerHosts []*catalog.Host
		for _, h := range d.Hosts {
			if h.Kind == "provider" {
				providerHosts = append(providerHosts, h)
			}
		}
		for _, h := range providerHosts {
			if len(providerHosts) == 1 || h.Address == n.PrivateIPAddress {
				h.Nodes++
				h.UsedVCPUs += n.VCPUs
				noteRuntime(h, n, since)
				break
			}
		}
	}
	return d, nil
}

// nodesShownTo keeps the nodes of the workspaces where the caller may
// read computes: all of them for an administrator or the server itself.
// A node's ID, address and runtime are its workspace's, as its compute
// is.
func (l *Locations) nodesShownTo(ctx context.Context, nodes []*node.Node) []*node.Node {
	p := identity.PrincipalFrom(ctx)
	if p == nil || p.Admin {
		return nodes
	}
	readable := map[string]bool{}
	var out []*node.Node
	for _, n := range nodes {
		k := strings.ToLower(n.Workspace)
		ok, seen := readable[k]
		if !seen {
			ok = l.cfg.Auth.Authorize(ctx, p, n.Workspace, identity.ActComputesRead) == nil
			readable[k] = ok
		}
		if ok {
			out = append(out, n)
		}
	}
	return out
}

// noteRuntime keeps node n's container runtime report on its host h when
// n joined after the node whose report h shows: the latest word on the
// host's engine.
// since holds, per host, when the node it shows joined.
func noteRuntime(h *catalog.Host, n *node.Node, since map[*catalog.Host]time.Time) {
	if n.Runtime == nil || n.ReadyOn == nil {
		return
	}
	if t, ok := since[h]; ok && t.After(*n.ReadyOn) {
		return
	}
	h.ContainerRuntime, h.ContainerRuntimeNode = n.Runtime, n.ID
	since[h] = *n.ReadyOn
}

// ListLocations returns every location with its detail.
func (l *Locations) ListLocations(ctx context.Context) ([]*catalog.LocationDetail, error) {
	var out []*catalog.LocationDetail
	for _, loc := range l.cfg.Catalog.Locations() {
		d, err := l.FindLocation(ctx, loc.Name)
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, nil
}
