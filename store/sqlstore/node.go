package sqlstore

import (
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/store/sqlstore/entitydoc"
	"github.com/shoal-ml/shoal/store/sqlstore/sqlq"
)

// nodeColumns are the columns scanNode reads, in order.
const nodeColumns = `workspace, provider_ref, join_token_hash, join_token_expires, credential_hash, version, last_heartbeat, doc`

// nodeComputeKey is the stored compute_key of a node (sqlq.NodeComputeKey).
var nodeComputeKey = sqlq.NodeComputeKey

// scanNodeRow scans a row of nodeColumns: the columns into cols, and
// returns the document.
func scanNodeRow(sc scanner, cols *node.Node) ([]byte, error) {
	var (
		expires int64
		hb      int64
		doc     []byte
	)
	if err := sc.Scan(&cols.Workspace, &cols.ProviderRef, &cols.JoinTokenHash, &expires, &cols.CredentialHash, &cols.Version, &hb, &doc); err != nil {
		return nil, err
	}
	if hb != 0 {
		// Else the lease is in the document (a row from before the
		// column).
		cols.LastHeartbeat = sqlq.FromMicros(hb)
	}
	cols.JoinTokenExpires = sqlq.FromMicros(expires)
	return doc, nil
}

func scanNode(sc scanner) (*node.Node, error) {
	var n node.Node
	doc, err := scanNodeRow(sc, &n)
	if err != nil {
		return nil, err
	}
	// Decoding leaves the json:"-" fields just scanned alone.
	if err := entitydoc.DecodeNode(doc, &n); err != nil {
		return nil, fmt.Errorf("decode node of workspace %q: %w", n.Workspace, err)
	}
	return &n, nil
}

// scanNodeShared is scanNode for a reader that keeps the nodes it reads
// and never changes them (entitydoc.DecodeNodeShared): the node it
// returns is shared.
func scanNodeShared(sc scanner) (*node.Node, error) {
	var cols node.Node
	doc, err := scanNodeRow(sc, &cols)
	if err != nil {
		return nil, err
	}
	n, err := entitydoc.DecodeNodeShared(doc, &cols)
	if err != nil {
		return nil, fmt.Errorf("decode node of workspace %q: %w", cols.Workspace, err)
	}
	return n, nil
}

// GetNode returns a node by ID. Returns ENOTFOUND.
func (t *tx) GetNode(id string) (*node.Node, error) {
	n, err := scanNode(t.queryRow(`SELECT `+nodeColumns+` FROM nodes WHERE id = $1`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, core.Errorf(core.ENOTFOUND, "node %q not found", id)
	} else if err != nil {
		return nil, fmt.Errorf("store: get node %q: %w", id, err)
	}
	return n, nil
}

// ListNodes returns the nodes matching filter ordered by ID. Workspace and
// compute names compare case-insensitively, locations exactly.
func (t *tx) ListNodes(filter node.NodeFilter) ([]*node.Node, error) {
	q, args := listNodesQuery(filter)
	rows, err := t.query(q, args...)
	if err != nil {
		return nil, fmt.Errorf("store: list nodes: %w", err)
	}
	out, err := collect(rows, scanNode)
	if err != nil {
		return nil, fmt.Errorf("store: list nodes: %w", err)
	}
	return out, nil
}

// queryNodesDue is ListNodesDue's query. last_heartbeat = 0 is a row
// whose lease is still in its document (migration 0014): it may be due.
//
// On SQLite the nodes are found in the index nodes_due (migration 0040),
// which holds the three columns the search reads, and only they are read
// from the table. PostgreSQL has no such index (its 0040 says why) and
// scans the table's columns, as before.
const queryNodesDue = `SELECT ` + nodeColumns + ` FROM nodes WHERE id IN (SELECT id FROM nodes
	WHERE state NOT IN ('idle', 'running') OR last_heartbeat <= $1 OR last_heartbeat = 0) ORDER BY id`

// ListNodesDue returns, ordered by ID, the nodes the node loop may have
// to act on at a pass: every node neither idle nor running (by the state
// column), and every node whose last heartbeat is at or before
// heardBefore. The node loop read every node's document on each pass to
// find the few due (a sixth of a server's CPU at 2,000 nodes); this
// reads two small columns of each row and decodes only the nodes it
// returns.
func (t *tx) ListNodesDue(heardBefore time.Time) ([]*node.Node, error) {
	rows, err := t.query(queryNodesDue, sqlq.Micros(heardBefore))
	if err != nil {
		return nil, fmt.Errorf("store: list nodes due: %w", err)
	}
	out, err := collect(rows, scanNode)
	if err != nil {
		return nil, fmt.Errorf("store: list nodes due: %w", err)
	}
	return out, nil
}

// listNodesQuery returns the query of ListNodes and its arguments. Its text
// depends only on which filters are set.
func listNodesQuery(filter node.NodeFilter) (string, []any) {
	var where []string
	var args []any
	add := func(cond string, arg any) {
		args = append(args, arg)
		where = append(where, strings.ReplaceAll(cond, "?", "$"+strconv.Itoa(len(args))))
	}
	switch {
	case filter.Workspace != "" && filter.Compute != "":
		add(`compute_key = ?`, nodeComputeKey(filter.Workspace, filter.Compute))
	case filter.Workspace != "":
		add(`workspace_key = ?`, key(filter.Workspace))
	case filter.Compute != "":
		// The compute of any workspace: the part of compute_key after
		// "workspace_key/".
		add(`substr(compute_key, length(workspace_key) + 2) = ?`, key(filter.Compute))
	}
	if filter.Location != "" {
		add(`location = ?`, filter.Location)
	}
	if filter.State != "" {
		add(`state = ?`, filter.State)
	}
	q := `SELECT ` + nodeColumns + ` FROM nodes`
	if len(where) > 0 {
		q += ` WHERE ` + strings.Join(where, ` AND `)
	}
	q += ` ORDER BY id`
	return q, args
}

// InsertNode adds a node; a zero CreatedOn takes the transaction time.
// Returns ECONFLICT if the ID exists.
func (t *tx) InsertNode(n *node.Node) error {
	if err := t.writable("insert node"); err != nil {
		return err
	}
	if n.CreatedOn.IsZero() {
		n.CreatedOn = t.now
	}
	doc, err := entitydoc.EncodeNode(n)
	if err != nil {
		return fmt.Errorf("store: insert node %q: %w", n.ID, err)
	}
	gen, err := t.bumpGen(false)
	if err != nil {
		return err
	}
	res, err := t.exec(`INSERT INTO nodes (id, workspace, workspace_key, compute_key, location, provider_ref,
			join_token_hash, join_token_expires, credential_hash, version, doc, last_heartbeat, gen, live, state, draining, pulling)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)
		ON CONFLICT (id) DO NOTHING`,
		n.ID, n.Workspace, key(n.Workspace), nodeComputeKey(n.Workspace, n.Compute), n.Location, n.ProviderRef,
		n.JoinTokenHash, sqlq.Micros(n.JoinTokenExpires), n.CredentialHash, n.Version, doc, sqlq.Micros(n.LastHeartbeat), gen, boolInt(n.Live()), n.State,
		boolInt(n.Draining), boolInt(len(n.PullingImages) > 0))
	if err != nil {
		return fmt.Errorf("store: insert node %q: %w", n.ID, err)
	}
	if k, err := affected(res); err != nil {
		return fmt.Errorf("store: insert node %q: %w", n.ID, err)
	} else if k == 0 {
		return core.Errorf(core.ECONFLICT, "node %q already exists", n.ID)
	}
	// The node's life starts in the usage ledger, in the same transaction.
	if _, err := t.exec(`INSERT INTO node_usage (node_id, created_on, workspace, compute, size, low_priority)
		VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (node_id, created_on) DO NOTHING`,
		n.ID, sqlq.Micros(n.CreatedOn), n.Workspace, n.Compute, n.Size, boolInt(n.LowPriority)); err != nil {
		return fmt.Errorf("store: insert node %q: usage: %w", n.ID, err)
	}
	return nil
}

// UpdateNode replaces the stored node of n's ID with n as written. Returns
// ENOTFOUND.
func (t *tx) UpdateNode(n *node.Node) error {
	if err := t.writable("update node"); err != nil {
		return err
	}
	doc, err := entitydoc.EncodeNode(n)
	if err != nil {
		return fmt.Errorf("store: update node %q: %w", n.ID, err)
	}
	gen, err := t.bumpGen(false)
	if err != nil {
		return err
	}
	k, err := t.update(
		// Heartbeats and state changes leave the indexed columns as they
		// are: then no index entry moves but nodes_gen's (gen is set on
		// every write) and, on SQLite, nodes_due's, whose state and
		// last_heartbeat are set here (a second statement, to match them
		// unchanged, would cost more than the small index's write: a
		// job's placement and end change the state).
		`UPDATE nodes SET workspace = $2, provider_ref = $3, join_token_expires = $4, version = $5, doc = $6, last_heartbeat = $12, gen = $13,
			state = $15, draining = $16, pulling = $17
		WHERE id = $1 AND workspace_key = $7 AND compute_key = $8 AND location = $9
			AND join_token_hash = $10 AND credential_hash = $11 AND live = $14`,
		`UPDATE nodes SET workspace = $2, provider_ref = $3, join_token_expires = $4, version = $5, doc = $6,
			workspace_key = $7, compute_key = $8, location = $9, join_token_hash = $10, credential_hash = $11, last_heartbeat = $12, gen = $13, live = $14,
			state = $15, draining = $16, pulling = $17
		WHERE id = $1`,
		n.ID, n.Workspace, n.ProviderRef, sqlq.Micros(n.JoinTokenExpires), n.Version, doc,
		key(n.Workspace), nodeComputeKey(n.Workspace, n.Compute), n.Location, n.JoinTokenHash, n.CredentialHash, sqlq.Micros(n.LastHeartbeat), gen, boolInt(n.Live()), n.State,
		boolInt(n.Draining), boolInt(len(n.PullingImages) > 0))
	if err != nil {
		return fmt.Errorf("store: update node %q: %w", n.ID, err)
	}
	if k == 0 {
		return core.Errorf(core.ENOTFOUND, "node %q not found", n.ID)
	}
	return nil
}

// leaseBatches are the sizes of RenewNodeLeases' statements: a batch
// is padded (its last ID repeated, which matches no row twice) to the
// smallest that holds it, so that three statement texts, each prepared
// once, serve every batch.
var leaseBatches = [...]int{1, 16, 128}

// renewLeasesQuery is the statement renewing size leases at once.
var renewLeasesQuery = func() map[int]string {
	m := map[int]string{}
	for _, n := range leaseBatches {
		var b strings.Builder
		b.WriteString(`UPDATE nodes SET last_heartbeat = $1 WHERE id IN (`)
		for i := range n {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "$%d", i+2)
		}
		b.WriteString(")")
		m[n] = b.String()
	}
	return m
}()

// RenewNodeLeases sets the LastHeartbeat of every node in ids to the
// transaction's time, writing nothing else, in one statement per
// leaseBatches' largest size: a round of heartbeats is a statement, not a
// statement a node. IDs of nodes no longer stored are skipped.
func (t *tx) RenewNodeLeases(ids []string) error {
	if err := t.writable("renew node leases"); err != nil {
		return err
	}
	now := sqlq.Micros(t.now)
	for len(ids) > 0 {
		size := leaseBatches[len(leaseBatches)-1]
		for _, s := range leaseBatches {
			if s >= len(ids) {
				size = s
				break
			}
		}
		chunk := ids[:min(size, len(ids))]
		ids = ids[len(chunk):]
		args := make([]any, 0, size+1)
		args = append(args, now)
		for i := range size {
			args = append(args, chunk[min(i, len(chunk)-1)])
		}
		if _, err := t.exec(renewLeasesQuery[size], args...); err != nil {
			return fmt.Errorf("store: renew the leases of %d nodes: %w", len(chunk), err)
		}
	}
	return nil
}

// DeleteNode removes a node. Returns ENOTFOUND.
func (t *tx) DeleteNode(id string) error {
	if err := t.deleteOne(fmt.Sprintf("node %q", id), fmt.Sprintf("node %q not found", id),
		`DELETE FROM nodes WHERE id = $1`, id); err != nil {
		return err
	}
	// Views learn of the deletion by its generation (viewgen.go).
	gen, err := t.bumpGen(false)
	if err != nil {
		return err
	}
	if _, err := t.exec(`INSERT INTO node_deletions (gen, id) VALUES ($1, $2)`, gen, id); err != nil {
		return fmt.Errorf("store: delete node %q: %w", id, err)
	}
	// Its life ends in the usage ledger.
	if _, err := t.exec(`UPDATE node_usage SET released_on = $2 WHERE node_id = $1 AND released_on IS NULL`, id, sqlq.Micros(t.now)); err != nil {
		return fmt.Errorf("store: delete node %q: usage: %w", id, err)
	}
	return nil
}

// The queries of FindNodeByCredentialHash and FindNodeByJoinTokenHash.
const (
	queryNodeByCredentialHash = `SELECT ` + nodeColumns + ` FROM nodes WHERE credential_hash = $1 ORDER BY id LIMIT 1`
	queryNodeByJoinTokenHash  = `SELECT ` + nodeColumns + ` FROM nodes WHERE join_token_hash = $1 ORDER BY id LIMIT 1`
)

// FindNodeByCredentialHash returns the node whose credential hash is hash
// (the first by ID should several share it). The empty hash matches no node.
// Returns ENOTFOUND.
func (t *tx) FindNodeByCredentialHash(hash string) (*node.Node, error) {
	return t.findNode(queryNodeByCredentialHash, "credential", hash)
}

// FindNodeByJoinTokenHash returns the node whose join token hash is hash
// (the first by ID should several share it). The empty hash matches no node.
// Returns ENOTFOUND.
func (t *tx) FindNodeByJoinTokenHash(hash string) (*node.Node, error) {
	return t.findNode(queryNodeByJoinTokenHash, "join token", hash)
}

func (t *tx) findNode(query, what, hash string) (*node.Node, error) {
	// The hash is a credential's fingerprint: keep it out of messages.
	if hash == "" {
		return nil, core.Errorf(core.ENOTFOUND, "node not found for %s", what)
	}
	n, err := scanNode(t.queryRow(query, hash))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, core.Errorf(core.ENOTFOUND, "node not found for %s", what)
	} else if err != nil {
		return nil, fmt.Errorf("store: find node by %s hash: %w", what, err)
	}
	return n, nil
}
