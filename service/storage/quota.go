package storage

import (
	"context"
	"fmt"
	"io"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/money"
	"github.com/shoal-ml/shoal/store"
)

// A workspace's storage quota (set with its limits, package quota) holds
// every write of its files: uploads here, outputs (package agentapi)
// and logs (logs.go), each within the reservations of reserve.go.

// workspaceQuota returns a workspace's storage quota.
func (s *Service) workspaceQuota(ctx context.Context, workspace string) (int64, error) {
	var l money.WorkspaceLimits
	err := s.store.View(ctx, func(tx store.Tx) error {
		var err error
		l, err = tx.GetWorkspaceLimits(workspace)
		return err
	})
	return l.StorageQuota(), err
}

// storageQuotaError is the refusal of a write past a workspace's quota.
func storageQuotaError(workspace string, quota, used int64) error {
	return &core.Error{Code: core.EQUOTA, Field: "storage_quota", Message: fmt.Sprintf(
		"storage_quota: workspace %s's storage quota of %s (artifacts, job outputs and logs) would be exceeded: %s stored or being written; an administrator can raise it with `shoal workspace update --storage-quota-bytes`",
		workspace, money.FormatBytes(quota), money.FormatBytes(used))}
}

// PutWithinQuota runs put (a store's upload of at most max bytes) on a
// reader that reserves the workspace's quota for each byte before put
// sees it (reserve.go), so parallel uploads cannot together pass
// the quota. An upload into a full workspace is refused before it
// streams; one that reaches the quota midway fails with EQUOTA
// (storage_quota), whatever error the store made of it.
func (s *Service) PutWithinQuota(ctx context.Context, workspace string, r io.Reader, max int64, put func(r io.Reader, max int64) error) error {
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
	if q.err != nil && core.ErrorCode(q.err) == core.EQUOTA {
		return q.err
	}
	return err
}

// PutArtifact stores an upload (code, inputs) in a workspace, within the
// workspace's storage quota and max bytes.
func (s *Service) PutArtifact(ctx context.Context, workspace string, r io.Reader, max int64) (string, error) {
	if s.files == nil {
		return "", core.Errorf(core.EINTERNAL, "this server has no file store")
	}
	var id string
	err := s.PutWithinQuota(ctx, workspace, r, max, func(r io.Reader, max int64) error {
		var err error
		id, err = s.files.PutArtifact(workspace, r, max)
		return err
	})
	return id, err
}
