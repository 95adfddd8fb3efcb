package quota

import (
	"context"

	"github.com/shoal-ml/shoal/domain/identity"
	"github.com/shoal-ml/shoal/domain/money"
	"github.com/shoal-ml/shoal/store"
)

// A workspace's limits (the cap of a rank's log, the storage quota of its
// artifacts, outputs and logs) are stored per workspace, so that
// every server sharing the store enforces the same ones. The service
// enforces them where it writes files (service/storage/quota.go).

// FindWorkspaceLimits returns a workspace's limits and storage use.
func (q *Quotas) FindWorkspaceLimits(ctx context.Context, workspace string) (*money.WorkspaceLimitsView, error) {
	var out *money.WorkspaceLimitsView
	err := q.cfg.Store.View(ctx, func(tx store.Tx) error {
		ws, err := tx.GetWorkspace(workspace)
		if err != nil {
			return err
		}
		l, err := tx.GetWorkspaceLimits(ws.Name)
		if err != nil {
			return err
		}
		out = &money.WorkspaceLimitsView{Workspace: ws.Name, MaxLogBytes: l.LogCap(), StorageQuotaBytes: l.StorageQuota(), Own: l}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if q.cfg.StorageUsage != nil {
		if out.StorageUsedBytes, err = q.cfg.StorageUsage(out.Workspace); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// UpdateWorkspaceLimits sets a workspace's limits; a nil field is left as
// it is, 0 restores the default. Administrators only: the limits protect
// the server's disk, which every workspace shares, so a workspace's
// Owner cannot raise its own.
func (q *Quotas) UpdateWorkspaceLimits(ctx context.Context, workspace string, maxLog, quota *int64) (*money.WorkspaceLimitsView, error) {
	if err := requireAdmin(ctx, "changing a workspace's limits"); err != nil {
		return nil, err
	}
	err := q.cfg.Store.Update(ctx, func(tx store.Tx) error {
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
		if err := money.ValidateWorkspaceLimits(l); err != nil {
			return err
		}
		identity.SetAuditDetail(ctx, "workspace %s: log cap %s, storage quota %s", ws.Name, money.FormatBytes(l.LogCap()), money.FormatBytes(l.StorageQuota()))
		return tx.PutWorkspaceLimits(ws.Name, l)
	})
	if err != nil {
		return nil, err
	}
	return q.FindWorkspaceLimits(ctx, workspace)
}
