package blobstore

import (
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/shoal-ml/shoal/domain/blobs"
	"github.com/shoal-ml/shoal/domain/core"
)

// Blobs and their staged blocks live in tables of their own (migration
// 0033), keyed by the hex of the name so that listing orders and pages
// in byte order under either database's collation.

// nameHex is a blob name's key.
func nameHex(name string) string { return hex.EncodeToString([]byte(name)) }

func scanBlob(sc scanner) (*blobs.Blob, error) {
	var (
		b   blobs.Blob
		doc []byte
	)
	if err := sc.Scan(&b.Workspace, &b.Container, &b.Name, &doc); err != nil {
		return nil, err
	}
	ws, c, n := b.Workspace, b.Container, b.Name
	if err := json.Unmarshal(doc, &b); err != nil {
		return nil, fmt.Errorf("decode blob: %w", err)
	}
	b.Workspace, b.Container, b.Name = ws, c, n
	return &b, nil
}

// PutBlob stores a committed blob, replacing one of the same name.
func (t *Blobs) PutBlob(b *blobs.Blob) error {
	if err := t.Writable("put blob"); err != nil {
		return err
	}
	if b.Created.IsZero() {
		b.Created = t.Now
	}
	b.Modified = t.Now
	normTime(&b.Created)
	normTime(&b.Modified)
	doc, err := json.Marshal(b)
	if err != nil {
		return fmt.Errorf("store: encode blob %s: %w", b.Name, err)
	}
	if _, err := t.Q.Exec(`INSERT INTO blobs (workspace_key, container, name_hex, workspace, name, doc)
		VALUES ($1, $2, $3, $4, $5, $6)
		ON CONFLICT (workspace_key, container, name_hex) DO UPDATE SET workspace = excluded.workspace, doc = excluded.doc`,
		key(b.Workspace), strings.ToLower(b.Container), nameHex(b.Name), b.Workspace, b.Name, string(doc)); err != nil {
		return fmt.Errorf("store: put blob %s/%s in %s: %w", b.Container, b.Name, b.Workspace, err)
	}
	return nil
}

// GetBlob returns a committed blob. Returns ENOTFOUND.
func (t *Blobs) GetBlob(workspace, container, name string) (*blobs.Blob, error) {
	b, err := scanBlob(t.Q.QueryRow(`SELECT workspace, container, name, doc FROM blobs
		WHERE workspace_key = $1 AND container = $2 AND name_hex = $3`, key(workspace), strings.ToLower(container), nameHex(name)))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, core.Errorf(core.ENOTFOUND, "blob %s is not in container %s", name, container)
	} else if err != nil {
		return nil, fmt.Errorf("store: get blob %s/%s in %s: %w", container, name, workspace, err)
	}
	return b, nil
}

// ListBlobs returns up to limit blobs whose names start with prefix and
// sort after marker, in byte order.
func (t *Blobs) ListBlobs(workspace, container, prefix, marker string, limit int) ([]*blobs.Blob, error) {
	if limit <= 0 {
		return []*blobs.Blob{}, nil
	}
	ph := nameHex(prefix)
	rows, err := t.Q.Query(`SELECT workspace, container, name, doc FROM blobs
		WHERE workspace_key = $1 AND container = $2 AND substr(name_hex, 1, $3) = $4 AND name_hex > $5
		ORDER BY name_hex LIMIT $6`,
		key(workspace), strings.ToLower(container), len(ph), ph, nameHex(marker), limit)
	if err != nil {
		return nil, fmt.Errorf("store: list blobs of %s/%s: %w", workspace, container, err)
	}
	out, err := collect(rows, scanBlob)
	if err != nil {
		return nil, fmt.Errorf("store: list blobs of %s/%s: %w", workspace, container, err)
	}
	return out, nil
}

// PutBlobBlock stages a block, replacing one of the same ID.
func (t *Blobs) PutBlobBlock(b *blobs.Block) error {
	if err := t.Writable("put block"); err != nil {
		return err
	}
	if _, err := t.Q.Exec(`INSERT INTO blob_blocks (workspace_key, container, name_hex, block_id, artifact, size, staged_on)
		VALUES ($1, $2, $3, $4, $5, $6, $7)
		ON CONFLICT (workspace_key, container, name_hex, block_id) DO UPDATE SET artifact = excluded.artifact, size = excluded.size, staged_on = excluded.staged_on`,
		key(b.Workspace), strings.ToLower(b.Container), nameHex(b.Blob), b.ID, b.Artifact, b.Size, micros(t.Now)); err != nil {
		return fmt.Errorf("store: put block of %s/%s in %s: %w", b.Container, b.Blob, b.Workspace, err)
	}
	return nil
}

// ListBlobBlocks returns the blocks staged for a blob, by ID.
func (t *Blobs) ListBlobBlocks(workspace, container, blob string) ([]*blobs.Block, error) {
	rows, err := t.Q.Query(`SELECT block_id, artifact, size FROM blob_blocks
		WHERE workspace_key = $1 AND container = $2 AND name_hex = $3 ORDER BY block_id`,
		key(workspace), strings.ToLower(container), nameHex(blob))
	if err != nil {
		return nil, fmt.Errorf("store: list blocks of %s/%s: %w", container, blob, err)
	}
	out, err := collect(rows, func(sc scanner) (*blobs.Block, error) {
		b := &blobs.Block{Workspace: workspace, Container: container, Blob: blob}
		return b, sc.Scan(&b.ID, &b.Artifact, &b.Size)
	})
	if err != nil {
		return nil, fmt.Errorf("store: list blocks of %s/%s: %w", container, blob, err)
	}
	return out, nil
}

// DeleteBlobBlocks removes the blocks staged for a blob.
func (t *Blobs) DeleteBlobBlocks(workspace, container, blob string) error {
	if err := t.Writable("delete blocks"); err != nil {
		return err
	}
	if _, err := t.Q.Exec(`DELETE FROM blob_blocks WHERE workspace_key = $1 AND container = $2 AND name_hex = $3`,
		key(workspace), strings.ToLower(container), nameHex(blob)); err != nil {
		return fmt.Errorf("store: delete blocks of %s/%s: %w", container, blob, err)
	}
	return nil
}

// DeleteBlobBlocksStagedBefore removes the blocks of every workspace
// staged before a time (and not committed since: a commit removes its
// blob's blocks) and returns how many it removed.
func (t *Blobs) DeleteBlobBlocksStagedBefore(before time.Time) (int64, error) {
	if err := t.Writable("delete stale blocks"); err != nil {
		return 0, err
	}
	res, err := t.Q.Exec(`DELETE FROM blob_blocks WHERE staged_on < $1`, micros(before))
	if err != nil {
		return 0, fmt.Errorf("store: delete blocks staged before %s: %w", before.UTC().Format(time.RFC3339), err)
	}
	return res.RowsAffected()
}
