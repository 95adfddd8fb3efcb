// Package entitydoc encodes the entities the SQL stores keep as a JSON
// document (nodes, jobs, attempts; a compute's JSON columns) and decodes node documents through a
// cache, apart from the queries (sqlstore) that store and read them.
package entitydoc

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/node"
)

// nodeDocs caches decoded node documents by their exact text. Every
// controller pass reads every node, and decoding their JSON was a fifth
// of a 10,000-node server's CPU; most documents are unchanged between
// passes, and looking one up by its text costs a hash of it. Being keyed by
// content, the cache is never stale, whichever store the text came from.
//
// It is keyed by the text's SHA-256, not the text (which cost as much
// memory again as the decoded node), and kept in two generations so that
// the documents of nodes that changed or are gone leave it: each node's
// every change (preparing, idle, running, ...) is a new document, and a
// cache that only grew held several per node. A lookup that finds its
// document in the old generation moves it to the current one; once the
// lookups since the last turn reach nodeDocsTurn times the current
// generation's size (every cached node read that many times, about as
// many controller passes), the current generation becomes the old one
// and what was not read since is dropped.
var nodeDocs = struct {
	mu       sync.Mutex
	cur, old map[[sha256.Size]byte]*node.Node
	lookups  int
}{cur: map[[sha256.Size]byte]*node.Node{}}

const (
	// nodeDocsTurn is how many lookups per cached document turn the
	// generations.
	nodeDocsTurn = 8
	// nodeDocsMax bounds a generation; past it, it turns at once.
	nodeDocsMax = 50_000
)

// nodeDocGet returns the cached node of the document whose hash is key.
func nodeDocGet(key [sha256.Size]byte) *node.Node {
	nodeDocs.mu.Lock()
	defer nodeDocs.mu.Unlock()
	nodeDocs.lookups++
	if nodeDocs.lookups >= nodeDocsTurn*len(nodeDocs.cur)+1024 {
		nodeDocs.old, nodeDocs.cur, nodeDocs.lookups = nodeDocs.cur, make(map[[sha256.Size]byte]*node.Node, len(nodeDocs.cur)), 0
	}
	if n, ok := nodeDocs.cur[key]; ok {
		return n
	}
	if n, ok := nodeDocs.old[key]; ok {
		nodeDocs.cur[key] = n
		return n
	}
	return nil
}

// nodeDocPut caches a decoded node under its document's hash.
func nodeDocPut(key [sha256.Size]byte, n *node.Node) {
	nodeDocs.mu.Lock()
	defer nodeDocs.mu.Unlock()
	if len(nodeDocs.cur) >= nodeDocsMax {
		nodeDocs.old, nodeDocs.cur, nodeDocs.lookups = nodeDocs.cur, map[[sha256.Size]byte]*node.Node{}, 0
	}
	nodeDocs.cur[key] = n
}

// DecodeNode sets the document's fields of n (those stored in the
// JSON document; the columns scanned into n stay as they are).
func DecodeNode(doc []byte, n *node.Node) error {
	key := sha256.Sum256(doc)
	cached := nodeDocGet(key)
	if cached == nil {
		var d node.Node
		if err := json.Unmarshal(doc, &d); err != nil {
			return err
		}
		// Kept with this read's columns, which the next reads of the
		// same row mostly have too: a shared read (DecodeNodeShared)
		// then finds the record it can share.
		setColumns(&d, n)
		cached = &d
		nodeDocPut(key, cached)
	}
	// A copy: callers change the nodes they read, and the cache's record
	// is shared (with the scheduling view, DecodeNodeShared). The columns
	// scanned before the document are kept; the pointers and the slice
	// get copies of their own.
	c := *cached
	c.Workspace, c.ProviderRef, c.JoinTokenHash, c.CredentialHash, c.Version = n.Workspace, n.ProviderRef, n.JoinTokenHash, n.CredentialHash, n.Version
	c.JoinTokenExpires = n.JoinTokenExpires
	if !n.LastHeartbeat.IsZero() {
		c.LastHeartbeat = n.LastHeartbeat // from its column
	}
	if c.ReadyOn != nil {
		t := *c.ReadyOn
		c.ReadyOn = &t
	}
	if c.IdleSince != nil {
		t := *c.IdleSince
		c.IdleSince = &t
	}
	c.PullingImages = slices.Clone(c.PullingImages)
	if c.Runtime != nil {
		rt := *c.Runtime
		rt.GPUs = slices.Clone(rt.GPUs)
		c.Runtime = &rt
	}
	*n = c
	return nil
}

// DecodeNodeShared returns the node of doc with the columns of cols (the
// fields a node's row keeps outside its document, as scanned), shared:
// the cache's own record when it has the same columns, so that a reader
// that keeps every node and never changes one (the scheduling view)
// holds no copy beside the cache's. With 10,000 nodes the view's copies
// and their columns' strings were some 7 MB of a server's live heap.
// Its LastHeartbeat may be older than the row's lease column: a shared
// reader does not keep the lease current. The caller must not modify
// the node.
func DecodeNodeShared(doc []byte, cols *node.Node) (*node.Node, error) {
	key := sha256.Sum256(doc)
	cached := nodeDocGet(key)
	if cached != nil && sameColumns(cached, cols) {
		return cached, nil
	}
	// A record of its own, which the cache keeps from now on: DecodeNode
	// copies it and sets the columns it read, whatever these are.
	c := new(node.Node)
	if cached != nil {
		*c = *cached
	} else if err := json.Unmarshal(doc, c); err != nil {
		return nil, err
	}
	setColumns(c, cols)
	nodeDocPut(key, c)
	return c, nil
}

// setColumns sets n's fields stored outside its document to cols'; a
// zero lease column leaves the document's (a row from before the
// column).
func setColumns(n, cols *node.Node) {
	n.Workspace, n.ProviderRef, n.JoinTokenHash, n.CredentialHash, n.Version = cols.Workspace, cols.ProviderRef, cols.JoinTokenHash, cols.CredentialHash, cols.Version
	n.JoinTokenExpires = cols.JoinTokenExpires
	if !cols.LastHeartbeat.IsZero() {
		n.LastHeartbeat = cols.LastHeartbeat
	}
}

// sameColumns reports whether n has the columns of cols. The lease is
// not compared: it moves with every heartbeat written, without a new
// document, and a shared reader does not keep it current (the
// scheduling view reads only the nodes written since it last looked).
func sameColumns(n, cols *node.Node) bool {
	return n.Workspace == cols.Workspace && n.ProviderRef == cols.ProviderRef && n.JoinTokenHash == cols.JoinTokenHash &&
		n.CredentialHash == cols.CredentialHash && n.Version == cols.Version && n.JoinTokenExpires.Equal(cols.JoinTokenExpires)
}

// EncodeNode sets n's times to their stored form and returns its document.
func EncodeNode(n *node.Node) (string, error) {
	normTime(&n.CreatedOn)
	normTime(&n.LastHeartbeat)
	normTime(&n.JoinTokenExpires)
	normTimePtr(&n.ReadyOn)
	normTimePtr(&n.IdleSince)
	// The lease is stored in its own column: the document leaves it out,
	// so that it does not change with every heartbeat.
	hb := n.LastHeartbeat
	n.LastHeartbeat = time.Time{}
	doc, err := json.Marshal(n)
	n.LastHeartbeat = hb
	if err != nil {
		return "", fmt.Errorf("encode node: %w", err)
	}
	// Stored as TEXT, not a BLOB.
	return string(doc), nil
}

// EncodeJob sets j's times to their stored form and returns its document.
func EncodeJob(j *job.Job) (string, error) {
	normTime(&j.CreatedOn)
	normTimePtr(&j.StartTime)
	normTimePtr(&j.EndTime)
	doc, err := json.Marshal(j)
	if err != nil {
		return "", fmt.Errorf("encode job: %w", err)
	}
	// Stored as TEXT, not a BLOB.
	return string(doc), nil
}

// EncodeAttempt sets a's times, and those of its ranks, to their stored form
// and returns its document.
func EncodeAttempt(a *job.Attempt) (string, error) {
	normTime(&a.CreatedOn)
	normTimePtr(&a.StartTime)
	normTimePtr(&a.EndTime)
	for _, r := range a.Ranks {
		if r != nil {
			normTimePtr(&r.StartTime)
			normTimePtr(&r.EndTime)
		}
	}
	doc, err := json.Marshal(a)
	if err != nil {
		return "", fmt.Errorf("encode attempt: %w", err)
	}
	// Stored as TEXT, not a BLOB.
	return string(doc), nil
}

// ComputeColumns are a compute's JSON columns, in their stored form.
type ComputeColumns struct {
	// Spec is the compute's spec, Errors its provisioning errors and
	// Instance its instance state ("" when it has none).
	Spec, Errors, Instance string
}

// EncodeCompute returns the JSON columns of c and makes c's ProvisioningErrors
// non-nil, as it reads back.
func EncodeCompute(c *compute.Compute) (ComputeColumns, error) {
	if c.ProvisioningErrors == nil {
		c.ProvisioningErrors = []compute.ProvisioningError{}
	}
	spec, err := json.Marshal(&c.ComputeSpec)
	if err != nil {
		return ComputeColumns{}, fmt.Errorf("encode spec: %w", err)
	}
	errs, err := json.Marshal(c.ProvisioningErrors)
	if err != nil {
		return ComputeColumns{}, fmt.Errorf("encode provisioning errors: %w", err)
	}
	r := ComputeColumns{Spec: string(spec), Errors: string(errs)}
	if c.Instance != nil {
		b, err := json.Marshal(c.Instance)
		if err != nil {
			return ComputeColumns{}, fmt.Errorf("encode instance state: %w", err)
		}
		r.Instance = string(b)
	}
	return r, nil
}
