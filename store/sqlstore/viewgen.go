package sqlstore

import (
	"fmt"

	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/store/sqlstore/sqlq"
)

// The view generation (migration 0027): every transaction that writes a
// node, compute, workspace or quota raises view_gen.gen once, on its first
// such write, and stamps the nodes it writes with it. The row lock that
// raise takes is held to the commit, so generations are given out in
// commit order (also on PostgreSQL, where a sequence's numbers are not):
// a reader that sees generation g has seen every write of g and before.

// bumpGen gives t its generation, raising view_gen once per transaction;
// computes also stamps computes_gen (a compute, workspace or quota
// changed).
//
// The Updates a batch runs in one database transaction (they share t.cache)
// commit together, so they share its generation too: the first to write
// raises it, the others stamp with it (one round trip less each), unless
// a rollback to a savepoint undid the raise (ReadCache.Reset).
func (t *tx) bumpGen(computes bool) (int64, error) {
	if t.gen == 0 && t.cache != nil {
		t.gen, t.genComputes = t.cache.Gen, t.cache.GenComputes
	}
	if t.gen == 0 {
		if err := t.queryRow(`UPDATE view_gen SET gen = gen + 1 WHERE id = 1 RETURNING gen`).Scan(&t.gen); err != nil {
			return 0, fmt.Errorf("store: view generation: %w", err)
		}
	}
	if computes && !t.genComputes {
		if _, err := t.exec(`UPDATE view_gen SET computes_gen = gen WHERE id = 1`); err != nil {
			return 0, fmt.Errorf("store: view generation: %w", err)
		}
		t.genComputes = true
	}
	if t.cache != nil {
		t.cache.Gen, t.cache.GenComputes = t.gen, t.genComputes
	}
	return t.gen, nil
}

// ViewGeneration implements shoal.Tx.
func (t *tx) ViewGeneration() (node.ViewGen, error) {
	var g node.ViewGen
	if err := t.queryRow(`SELECT gen, computes_gen, floor FROM view_gen WHERE id = 1`).Scan(&g.Gen, &g.Computes, &g.Floor); err != nil {
		return g, fmt.Errorf("store: view generation: %w", err)
	}
	return g, nil
}

// queryNodesChangedSince reads the nodes written after a generation,
// ordered by the generation, whose index the range reads: ordered by ID,
// SQLite chose the primary key's index for the order and read every node
// to test its generation (each placement pass at 10,000 nodes read all
// of them to find the few written since it last looked).
const queryNodesChangedSince = `SELECT gen, ` + nodeColumns + ` FROM nodes WHERE gen > $1 ORDER BY gen`

// ListNodesChangedSince implements shoal.Tx.
func (t *tx) ListNodesChangedSince(gen int64) ([]node.NodeChange, []node.NodeDeletion, error) {
	rows, err := t.query(queryNodesChangedSince, gen)
	if err != nil {
		return nil, nil, fmt.Errorf("store: nodes changed since %d: %w", gen, err)
	}
	var changed []node.NodeChange
	for rows.Next() {
		var c node.NodeChange
		if err := sqlq.ScanJoined(rows, sqlq.Columns(&c.Gen), sqlq.Into(&c.Node, scanNodeShared)); err != nil {
			rows.Close()
			return nil, nil, fmt.Errorf("store: nodes changed since %d: %w", gen, err)
		}
		changed = append(changed, c)
	}
	if err := rows.Close(); err != nil {
		return nil, nil, err
	}
	if err := rows.Err(); err != nil {
		return nil, nil, fmt.Errorf("store: nodes changed since %d: %w", gen, err)
	}
	if gen < 0 {
		return changed, nil, nil
	}
	rows, err = t.query(`SELECT id, gen FROM node_deletions WHERE gen > $1 ORDER BY gen`, gen)
	if err != nil {
		return nil, nil, fmt.Errorf("store: nodes deleted since %d: %w", gen, err)
	}
	defer rows.Close()
	var deleted []node.NodeDeletion
	for rows.Next() {
		var d node.NodeDeletion
		if err := rows.Scan(&d.ID, &d.Gen); err != nil {
			return nil, nil, fmt.Errorf("store: nodes deleted since %d: %w", gen, err)
		}
		deleted = append(deleted, d)
	}
	if err := rows.Err(); err != nil {
		return nil, nil, fmt.Errorf("store: nodes deleted since %d: %w", gen, err)
	}
	return changed, deleted, nil
}

// PruneNodeDeletions implements shoal.Tx.
func (t *tx) PruneNodeDeletions(gen int64) error {
	if err := t.writable("prune node deletions"); err != nil {
		return err
	}
	if _, err := t.exec(`DELETE FROM node_deletions WHERE gen <= $1`, gen); err != nil {
		return fmt.Errorf("store: prune node deletions: %w", err)
	}
	if _, err := t.exec(`UPDATE view_gen SET floor = $1 WHERE id = 1 AND floor < $1`, gen); err != nil {
		return fmt.Errorf("store: prune node deletions: %w", err)
	}
	return nil
}
