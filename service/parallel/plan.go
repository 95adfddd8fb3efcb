package parallel

import (
	"context"
	"strings"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job"
	pproto "github.com/shoal-ml/shoal/domain/parallel"
	"github.com/shoal-ml/shoal/store"
)

// maxDescribe bounds one mini-batch's description.
const maxDescribe = 200

// Plan takes the job's plan: the first rank's proposal is kept for good
// (across attempts); a later one with the same listing gets it back, one
// with another listing ECONFLICT (the input changed under the job).
func (s *Service) Plan(ctx context.Context, c *Caller, req pproto.PlanRequest) (*pproto.PlanResponse, error) {
	if err := c.checkRank(req.Rank); err != nil {
		return nil, err
	}
	if err := checkPlan(&req); err != nil {
		return nil, err
	}
	var out *pproto.PlanResponse
	err := s.store.Update(ctx, func(tx store.Tx) error {
		p := &pproto.Plan{Workspace: c.Workspace, Job: c.Job, Kind: req.Kind, Items: req.Items,
			MiniBatches: req.MiniBatches, Fingerprint: req.Fingerprint, Describe: req.Describe}
		err := tx.InsertParallelPlan(p)
		if core.ErrorCode(err) == core.ECONFLICT {
			if p, err = tx.GetParallelPlan(c.Workspace, c.Job); err != nil {
				return err
			}
			if p.Kind != req.Kind || p.Items != req.Items || p.MiniBatches != req.MiniBatches || p.Fingerprint != req.Fingerprint {
				return core.Errorf(core.ECONFLICT, "input_data: rank %d lists %d %s in %d mini-batches (fingerprint %s), but the job's plan has %d %s in %d (fingerprint %s): the input changed under the job",
					req.Rank, req.Items, req.Kind, req.MiniBatches, req.Fingerprint, p.Items, p.Kind, p.MiniBatches, p.Fingerprint)
			}
		} else if err != nil {
			return err
		}
		out = &pproto.PlanResponse{Kind: p.Kind, Items: p.Items, MiniBatches: p.MiniBatches, Fingerprint: p.Fingerprint}
		return nil
	})
	return out, err
}

// checkPlan refuses a proposal the ledger cannot keep, naming the field.
func checkPlan(req *pproto.PlanRequest) error {
	switch req.Kind {
	case pproto.KindFiles, pproto.KindRows, pproto.KindPartitions:
	default:
		return core.FieldErrorf("kind", "%q is not a plan kind (files, rows, partitions)", req.Kind)
	}
	switch {
	case req.Rank < 0:
		return core.FieldErrorf("rank", "must be 0 or more, not %d", req.Rank)
	case req.Items < 0 || req.MiniBatches < 0:
		return core.FieldErrorf("items", "items and mini_batches must be 0 or more")
	case req.MiniBatches == 0 || req.Items == 0:
		return core.FieldErrorf("input_data", "the input holds no %s: there is nothing to score", map[string]string{
			pproto.KindFiles: "files", pproto.KindRows: "rows", pproto.KindPartitions: "rows"}[req.Kind])
	case req.MiniBatches > job.MaxMiniBatches:
		return core.FieldErrorf("mini_batch_size", "the input makes %d mini-batches, over the %d one job may have: raise mini_batch_size", req.MiniBatches, job.MaxMiniBatches)
	case req.MiniBatches > req.Items:
		return core.FieldErrorf("mini_batches", "%d mini-batches cannot hold %d items", req.MiniBatches, req.Items)
	case req.Fingerprint == "" || len(req.Fingerprint) > 128 || strings.Trim(req.Fingerprint, "0123456789abcdefABCDEF") != "":
		return core.FieldErrorf("fingerprint", "must be 1 to 128 hex digits")
	case len(req.Describe) > req.MiniBatches:
		return core.FieldErrorf("describe", "has %d entries for %d mini-batches", len(req.Describe), req.MiniBatches)
	}
	for i, d := range req.Describe {
		req.Describe[i] = prefix(cut(d), maxDescribe)
	}
	return nil
}
