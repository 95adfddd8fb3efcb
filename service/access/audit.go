package access

import (
	"context"
	"net"
	"strings"

	"github.com/shoal-ml/shoal/domain/identity"
	"github.com/shoal-ml/shoal/store"
)

// AuditingStore records the change a request makes in the audit log, in the
// same transaction as the change: a change whose audit record cannot be
// written is not made.
type AuditingStore struct {
	store.Store
}

// Update runs fn and, for a request that carries RequestInfo and has not
// been recorded yet, appends its audit record before committing.
func (a AuditingStore) Update(ctx context.Context, fn func(tx store.Tx) error) error {
	ri := identity.RequestInfoFrom(ctx)
	p := identity.PrincipalFrom(ctx)
	if ri == nil || ri.Audited || p == nil || p.Kind == identity.PrincipalNode || p.Kind == identity.PrincipalSystem {
		return a.Store.Update(ctx, fn)
	}
	detail := ri.Detail
	err := a.Store.Update(ctx, func(tx store.Tx) error {
		// fn may say more of the request (identity.SetAuditDetail); a
		// run again (store.Store.Update) starts from what it said before.
		ri.Detail = detail
		if err := fn(tx); err != nil {
			return err
		}
		return tx.AppendAudit(auditRecord(tx, p, ri, identity.AuditSucceeded, ""))
	})
	if err == nil {
		ri.Audited = true
	}
	return err
}

func auditRecord(tx store.Tx, p *identity.Principal, ri *identity.RequestInfo, outcome, detail string) *identity.AuditRecord {
	id := "anonymous"
	if detail == "" {
		detail = ri.Detail
	} else if ri.Detail != "" {
		detail = ri.Detail + ": " + detail
	}
	if p != nil {
		id = p.ID
		if p.OnBehalfOf != "" {
			detail = strings.TrimSpace(detail + " (workload of " + p.OnBehalfOf + ", attempt " + p.AttemptID + ")")
		}
	}
	return &identity.AuditRecord{
		Time: tx.Now(), PrincipalID: id, Action: ri.Action, Target: ri.Target,
		Workspace: ri.Workspace, Source: sourceHost(ri.Source), Outcome: outcome, Detail: detail,
	}
}

func sourceHost(addr string) string {
	if h, _, err := net.SplitHostPort(addr); err == nil {
		return h
	}
	return addr
}

// RecordAudit writes an audit record on its own: a denied request, a
// failed change, a login. p may be nil (anonymous).
func (s *Service) RecordAudit(ctx context.Context, p *identity.Principal, ri *identity.RequestInfo, outcome, detail string) error {
	ri.Audited = true // this is the request's record; the decorator must not add another
	return s.store.Update(ctx, func(tx store.Tx) error {
		return tx.AppendAudit(auditRecord(tx, p, ri, outcome, detail))
	})
}

// ListAudit returns audit records.
func (s *Service) ListAudit(ctx context.Context, f identity.AuditFilter) (out []*identity.AuditRecord, err error) {
	err = s.store.View(ctx, func(tx store.Tx) error {
		out, err = tx.ListAudit(f)
		return err
	})
	if out == nil {
		out = []*identity.AuditRecord{}
	}
	return out, err
}
