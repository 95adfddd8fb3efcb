package scaling

import (
	"context"
	"strings"
	"time"

	"github.com/shoal-ml/shoal/decide/autoscaler"
	"github.com/shoal-ml/shoal/decide/scalewindow"
	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/identity"
	"github.com/shoal-ml/shoal/store"
)

// applyWindow gives cl the bounds comp's scale windows set at now, and
// reports whether they differ from what the compute's stored state says
// (a window began since it was last told).
func applyWindow(cl *autoscaler.Cluster, comp *compute.Compute, now time.Time) (changed bool) {
	b, ok := scalewindow.Of(comp, now)
	if !ok {
		return comp.ScaleWindow != nil && comp.ScaleWindow.Window != "" // windows removed while one was in force
	}
	cl.MinInstances, cl.MaxInstances = b.Min, b.Max
	if b.Window != nil {
		cl.Window, cl.WindowName = b.WaitReason(now), b.Window.Spec.Name
	}
	return b.Changed(comp.ScaleWindow)
}

// recordWindows stores, for each cluster in keys, the scale window in
// force at now and appends a scale_window event — both in one
// transaction that re-reads the compute, so that a change is told once,
// also across restarts and by a server that takes over (the store fences
// a server that no longer leads).
func (ctl *Loop) recordWindows(ctx context.Context, keys []string, now time.Time) error {
	if len(keys) == 0 {
		return nil
	}
	ctx = identity.WithPrincipal(ctx, autoscalerPrincipal)
	return ctl.s.Store().Update(ctx, func(tx store.Tx) error {
		for _, key := range keys {
			ws, name, _ := strings.Cut(key, "/")
			comp, err := tx.GetCompute(ws, name)
			if core.ErrorCode(err) == core.ENOTFOUND {
				continue
			} else if err != nil {
				return err
			}
			b, ok := scalewindow.Of(comp, now)
			if !ok {
				b = scalewindow.Bounds{Min: *comp.MinInstances, Max: *comp.MaxInstances}
			}
			if !b.Changed(comp.ScaleWindow) {
				continue // told already (by this server or another)
			}
			st := b.State()
			st.NextChange, st.NextWindow = nil, "" // computed when read
			comp.ScaleWindow = st
			if !ok {
				comp.ScaleWindow = nil
			}
			// Not a change of the user's spec: the version (ETag) stays.
			if err := tx.UpdateCompute(comp); err != nil {
				return err
			}
			if err := compute.AppendComputeEvent(ctx, tx, comp, core.EventScaleWindow, b.Began(now)); err != nil {
				return err
			}
		}
		return nil
	})
}
