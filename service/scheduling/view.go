package scheduling

import (
	"slices"
	"sync"

	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/store"
)

// View is a controller's in-memory copy of the computes, workspace quotas
// and nodes that placement and scaling passes plan from, so that a pass
// does not read every node from the store (10,000 nodes took about 35 ms
// a read, and a full pass read them three times).
//
// It is checked against the store's view generation (shoal.ViewGen) on
// every read: each transaction that writes a node, compute, workspace or
// quota raises the generation and stamps the nodes it wrote, so the view
// reads only the nodes written since its own generation — the server's
// own writes (placements, scale-ups, agents' reports) and any other
// server's alike — and the few computes again when one of them changed.
// A view older than the store's floor (deletions pruned), or one
// invalidated (a replica taking the lead), reads everything again.
//
// What it does not keep current: a node's LastHeartbeat (lease renewals
// do not raise the generation; the node loop reads leases itself). The
// records it hands out are shared and must not be modified.
type View struct {
	mu       sync.Mutex
	loaded   bool
	gen      int64 // the store generation the nodes are current to
	compGen  int64 // the Computes generation the computes are current to
	computes computeSet
	nodes    map[string]viewNode
	ids      []string // the nodes' IDs, sorted: a State lists nodes by ID
	// list is the nodes in the order of ids when listed (a read copies
	// it: a lookup of each of 10,000 IDs was most of a read); a refresh
	// that adds or removes nodes unlists it, one that changes nodes
	// replaces them in place.
	list   []*node.Node
	listed bool
	// reads and full count refreshes, for tests and the docs' figures.
	reads, full int
}

// viewNode is a node and the generation that wrote it.
type viewNode struct {
	n   *node.Node
	gen int64
}

// NewView returns an empty view; its first read loads everything.
func NewView() *View { return &View{} }

// Invalidate makes the next read load everything again: a replica that
// takes the lead calls it, whatever it knew before.
func (v *View) Invalidate() {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.loaded = false
}

// Gen is the store generation the view is current to (0: not loaded).
func (v *View) Gen() int64 {
	v.mu.Lock()
	defer v.mu.Unlock()
	if !v.loaded {
		return 0
	}
	return v.gen
}

// Stats returns how many reads the view served and how many of them
// loaded every node.
func (v *View) Stats() (reads, full int) {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.reads, v.full
}

// ReadNodes is ReadNodes(tx) through the view: it brings the view up to
// date in tx and returns a State of the clusters and their nodes.
func (v *View) ReadNodes(tx store.Tx) (*State, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if err := v.refresh(tx); err != nil {
		// A half-applied refresh is not trusted: load again next time.
		v.loaded = false
		return nil, err
	}
	v.reads++
	if !v.listed {
		v.list = slices.Grow(v.list[:0], len(v.ids))[:len(v.ids)]
		for i, id := range v.ids {
			v.list[i] = v.nodes[id].n
		}
		v.listed = true
	}
	return v.computes.state(slices.Clone(v.list)), nil
}

// refresh brings the view up to the generation tx sees.
func (v *View) refresh(tx store.Tx) error {
	g, err := tx.ViewGeneration()
	if err != nil {
		return err
	}
	if !v.loaded || v.gen < g.Floor {
		return v.load(tx, g)
	}
	if g.Gen <= v.gen {
		// Nothing written since (or tx's snapshot is older than the
		// view: another pass read a newer one; never go back).
		return nil
	}
	if g.Computes > v.compGen {
		cs, err := readComputes(tx)
		if err != nil {
			return err
		}
		v.computes, v.compGen = cs, g.Computes
	}
	changed, deleted, err := tx.ListNodesChangedSince(v.gen)
	if err != nil {
		return err
	}
	var added, removed []string
	for _, c := range changed {
		old, known := v.nodes[c.Node.ID]
		if known && old.gen > c.Gen {
			continue
		} else if !known {
			added = append(added, c.Node.ID)
		}
		v.nodes[c.Node.ID] = viewNode{c.Node, c.Gen}
		if v.listed && known {
			if i, found := slices.BinarySearch(v.ids, c.Node.ID); found {
				v.list[i] = c.Node
			}
		}
	}
	for _, d := range deleted {
		// A deletion older than the node's record is of an earlier node
		// of the same ID.
		if old, ok := v.nodes[d.ID]; ok && old.gen < d.Gen {
			delete(v.nodes, d.ID)
			removed = append(removed, d.ID)
		}
	}
	v.updateIDs(added, removed)
	if len(added)+len(removed) > 0 {
		v.listed = false
	}
	v.gen = g.Gen
	return nil
}

// updateIDs keeps v.ids sorted after the nodes in added joined v.nodes
// and those in removed left it. A few are placed by binary search: a
// cluster's node coming or going sorted all 10,000 IDs again on every
// pass that saw it. Many at once are sorted whole.
func (v *View) updateIDs(added, removed []string) {
	if len(added)+len(removed) > 64 {
		v.sortIDs()
		return
	}
	// What v.nodes holds decides, whatever the lists say: an ID both
	// added and removed in one refresh is listed if and only if its
	// node is there.
	for _, id := range removed {
		if _, there := v.nodes[id]; there {
			continue
		}
		if i, found := slices.BinarySearch(v.ids, id); found {
			v.ids = slices.Delete(v.ids, i, i+1)
		}
	}
	for _, id := range added {
		if _, there := v.nodes[id]; !there {
			continue
		}
		if i, found := slices.BinarySearch(v.ids, id); !found {
			v.ids = slices.Insert(v.ids, i, id)
		}
	}
}

// load reads every compute and node, at generation g.
func (v *View) load(tx store.Tx, g node.ViewGen) error {
	cs, err := readComputes(tx)
	if err != nil {
		return err
	}
	changed, _, err := tx.ListNodesChangedSince(-1)
	if err != nil {
		return err
	}
	v.nodes = make(map[string]viewNode, len(changed))
	for _, c := range changed {
		v.nodes[c.Node.ID] = viewNode{c.Node, c.Gen}
	}
	v.sortIDs()
	v.listed = false
	v.computes, v.compGen, v.gen, v.loaded = cs, g.Computes, g.Gen, true
	v.full++
	return nil
}

func (v *View) sortIDs() {
	v.ids = v.ids[:0]
	for id := range v.nodes {
		v.ids = append(v.ids, id)
	}
	slices.Sort(v.ids)
}
