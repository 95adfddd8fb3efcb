package service

import (
	"context"
	"fmt"
	"io"

	"github.com/shoal-ml/shoal"
)

// A workspace's limits (the cap of a rank's log, the storage quota of its
// artifacts, outputs and logs) are stored per workspace, so that
// every server sharing the store enforces the same ones.

// WorkspaceLimitsView is a workspace's limits and storage use; see
// shoal.WorkspaceLimitsView.
type WorkspaceLimitsView = shoal.WorkspaceLimitsView

// FindWorkspaceLimits returns a workspace's limits and storage use.
func (s *Services) FindWorkspaceLimits(ctx context.Context, workspace string) (*WorkspaceLimitsView, error) {
	var out *WorkspaceLimitsView
	err := s.store.View(ctx, func(tx shoal.Tx) error {
		ws, err := tx.GetWorkspace(workspace)
		if err != nil {
			return err
		}
		l, err := tx.GetWorkspaceLimits(ws.Name)
		if err != nil {
			return err
		}
		out = &WorkspaceLimitsView{Workspace: ws.Name, MaxLogBytes: l.LogCap(), StorageQuotaBytes: l.StorageQuota(), Own: l}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if s.cfg.Files != nil {
		if out.StorageUsedBytes, err = s.cfg.Files.Usage(out.Workspace); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// UpdateWorkspaceLimits sets a workspace's limits; a nil field is left as
// it is, 0 restores the default. Administrators only: the limits protect
// the server's disk, which every workspace shares, so a workspace's
// Owner cannot raise its own.
func (s *Services) UpdateWorkspaceLimits(ctx context.Context, workspace string, maxLog, quota *int64) (*WorkspaceLimitsView, error) {
	if err := shoal.RequireAdmin(ctx, "changing a workspace's limits"); err != nil {
		return nil, err
	}
	err := s.store.Update(ctx, func(tx shoal.Tx) error {
		ws, err := tx.GetWorkspace(workspace)
		if err != nil {
			return err
		}
		l, err := tx.GetWorkspaceLimits(ws.Name)
		if err != nil {
			return err
		}
		if maxLog != nil {
			l.MaxLogBytes = *maxLog
		}
		if quota != nil {
			l.StorageQuotaBytes = *quota
		}
		if err := shoal.ValidateWorkspaceLimits(l); err != nil {
			return err
		}
		shoal.SetAuditDetail(ctx, "workspace %s: log cap %s, storage quota %s", ws.Name, shoal.FormatBytes(l.LogCap()), shoal.FormatBytes(l.StorageQuota()))
		return tx.PutWorkspaceLimits(ws.Name, l)
	})
	if err != nil {
		return nil, err
	}
	return s.FindWorkspaceLimits(ctx, workspace)
}

// workspaceQuota returns a workspace's storage quota.
func (s *Services) workspaceQuota(ctx context.Context, workspace string) (int64, error) {
	var l shoal.WorkspaceLimits
	err := s.store.View(ctx, func(tx shoal.Tx) error {
		var err error
		l, err = tx.GetWorkspaceLimits(workspace)
		return err
	})
	return l.StorageQuota(), err
}

// storageQuotaError is the refusal of a write past a workspace's quota.
func storageQuotaError(workspace string, quota, used int64) error {
	return &shoal.Error{Code: shoal.EQUOTA, Field: "storage_quota", Message: fmt.Sprintf(
		"storage_quota: workspace %s's storage quota of %s (artifacts, job outputs and logs) would be exceeded: %s stored or being written; an administrator can raise it with `shoal workspace update --storage-quota-bytes`",
		workspace, shoal.FormatBytes(quota), shoal.FormatBytes(used))}
}

// putWithinQuota runs put (a store's upload of at most max bytes) on a
// reader that reserves the workspace's quota for each byte before put
// sees it (storage_reserve.go), so parallel uploads cannot together pass
// the quota. An upload into a full workspace is refused before it
// streams; one that reaches the quota midway fails with EQUOTA
// (storage_quota), whatever error the store made of it.
func (s *Services) putWithinQuota(ctx context.Context, workspace string, r io.Reader, max int64, put func(r io.Reader, max int64) error) error {
	quota, err := s.workspaceQuota(ctx, workspace)
	if err != nil {
		return err
	}
	// Nothing left: refused before a byte moves (an empty upload too).
	g, used, err := s.reserve(workspace, quota, 1)
	if err != nil {
		return err
	}
	s.release(workspace, g)
	if g == 0 {
		return storageQuotaError(workspace, quota, used)
	}
	q := &quotaReader{s: s, r: r, workspace: workspace, quota: quota}
	defer q.Close()
	err = put(q, max)
	if q.err != nil && shoal.ErrorCode(q.err) == shoal.EQUOTA {
		return q.err
	}
	return err
}

// PutArtifact stores an upload (code, inputs) in a workspace, within the
// workspace's storage quota and max bytes.
func (s *Services) PutArtifact(ctx context.Context, workspace string, r io.Reader, max int64) (string, error) {
	if s.cfg.Files == nil {
		return "", shoal.Errorf(shoal.EINTERNAL, "this server has no file store")
	}
	var id string
	err := s.putWithinQuota(ctx, workspace, r, max, func(r io.Reader, max int64) error {
		var err error
		id, err = s.cfg.Files.PutArtifact(workspace, r, max)
		return err
	})
	return id, err
}

// capLogWrite bounds a write at offset of a rank's log to limit bytes:
// what lies past it is dropped, and the cut is marked once, at limit
// itself (the same bytes the node's agent writes there), so retried or
// late chunks leave the stored log the same.
func capLogWrite(limit, offset int64, data []byte) (keep []byte, marker bool) {
	if offset+int64(len(data)) <= limit {
		return data, false
	}
	if offset >= limit {
		return nil, true
	}
	return data[:limit-offset], true
}
