package watch

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/store"
)

// watchGPUs records gpu_underutilized on a running job on GPU nodes whose
// GPU samples
// (core.EventGPUUtilization, which its nodes' agents send) all stayed
// under th.GPUIdlePercent for the whole th.GPUIdleWindow — at most once
// per window and job — and returns each running job's last sample for
// the metrics. A sample's utilisation is the mean over its GPUs (one GPU
// busy of eight is a job using an eighth of what it holds).
//
// "The whole window": the job started at least a window ago, and its
// samples in the window are at least two, the first of them in the
// window's first quarter and the last in its last (a job whose samples
// stopped is not called idle on old samples).
func (l *Loop) watchGPUs(ctx context.Context, now time.Time, th Thresholds) ([]GPUUtilization, error) {
	since := now.Add(-th.GPUIdleWindow)
	type idleJob struct {
		ws, name string
		mean     float64
		n        int
	}
	var idle []idleJob
	var gauges []GPUUtilization
	err := l.s.Store().View(ctx, func(tx store.Tx) error {
		idle, gauges = idle[:0], gauges[:0]
		jobs, err := gpuJobs(tx)
		if err != nil {
			return err
		}
		for _, j := range jobs {
			events, err := tx.ListEvents(core.EventFilter{Workspace: j.Workspace, ResourceType: core.ResourceJob, ResourceName: j.Name, Since: since})
			if err != nil {
				return err
			}
			var samples []float64
			var first, last time.Time
			told := false
			for _, e := range events {
				switch e.Kind {
				case core.EventGPUUnderutilized:
					told = true
				case core.EventGPUUtilization:
					if p, ok := SampleMean(e.Reason); ok {
						if len(samples) == 0 {
							first = e.Time
						}
						samples, last = append(samples, p), e.Time
					}
				}
			}
			if len(samples) == 0 {
				continue
			}
			gauges = append(gauges, GPUUtilization{Workspace: j.Workspace, Compute: j.Compute, Job: j.Name, Percent: samples[len(samples)-1]})
			if told || j.StartTime == nil || j.StartTime.After(since) || len(samples) < 2 ||
				first.After(since.Add(th.GPUIdleWindow/4)) || last.Before(now.Add(-th.GPUIdleWindow/4)) {
				continue
			}
			sum, under := 0.0, true
			for _, p := range samples {
				sum += p
				under = under && p < th.GPUIdlePercent
			}
			if under {
				idle = append(idle, idleJob{ws: j.Workspace, name: j.Name, mean: sum / float64(len(samples)), n: len(samples)})
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("watching running jobs' GPUs: %w", err)
	}
	for _, ij := range idle {
		err := l.s.Store().Update(ctx, func(tx store.Tx) error {
			j, err := tx.GetJob(ij.ws, ij.name)
			if core.ErrorCode(err) == core.ENOTFOUND {
				return nil
			} else if err != nil {
				return err
			}
			if j.Status != job.JobRunning {
				return nil
			}
			// Once per window, whoever wrote since the read.
			events, err := tx.ListEvents(core.EventFilter{Workspace: j.Workspace, ResourceType: core.ResourceJob, ResourceName: j.Name, Since: since})
			if err != nil {
				return err
			}
			for _, e := range events {
				if e.Kind == core.EventGPUUnderutilized {
					return nil
				}
			}
			return tx.AppendEvent(&core.Event{Time: tx.Now(), Workspace: j.Workspace, ResourceType: core.ResourceJob, ResourceName: j.Name,
				Kind: core.EventGPUUnderutilized, Actor: "controller",
				Reason: fmt.Sprintf("job %s's GPUs stayed under %s%% utilisation for %s (mean %.0f%% over %d samples; notifications.gpu_idle): it holds GPUs it does not use",
					j.Name, strconv.FormatFloat(th.GPUIdlePercent, 'f', -1, 64), th.GPUIdleWindow, ij.mean, ij.n)})
		})
		if err != nil {
			return gauges, fmt.Errorf("recording job %s/%s's idle GPUs: %w", ij.ws, ij.name, err)
		}
	}
	return gauges, nil
}

// gpuJobs returns the running jobs that hold GPU nodes: only they are
// sampled, and reading only them keeps the pass to the GPU jobs (not
// every running job's events) on a server with thousands of CPU jobs.
func gpuJobs(tx store.Tx) ([]*job.Job, error) {
	nodes, err := tx.ListNodes(node.NodeFilter{})
	if err != nil {
		return nil, err
	}
	seen := map[[2]string]bool{}
	var out []*job.Job
	for _, n := range nodes {
		k := [2]string{n.Workspace, n.CurrentJobName}
		if n.GPUs == 0 || n.CurrentJobName == "" || seen[k] {
			continue
		}
		seen[k] = true
		j, err := tx.GetJob(n.Workspace, n.CurrentJobName)
		if core.ErrorCode(err) == core.ENOTFOUND {
			continue
		} else if err != nil {
			return nil, err
		}
		if j.Status == job.JobRunning {
			out = append(out, j)
		}
	}
	return out, nil
}

// SampleMean reads a GPU sample event's reason, as service/agentapi
// writes it ("attempt 1, rank 0 on n1: GPU 0 NVIDIA A100 87%, GPU 1
// NVIDIA A100 91%"), and returns the mean utilisation of its GPUs.
func SampleMean(reason string) (float64, bool) {
	_, list, ok := strings.Cut(reason, ": GPU ")
	if !ok {
		return 0, false
	}
	sum, n := 0.0, 0
	for _, part := range strings.Split(list, ", GPU ") {
		i := strings.LastIndexByte(part, ' ')
		if i < 0 || !strings.HasSuffix(part, "%") {
			return 0, false
		}
		v, err := strconv.Atoi(part[i+1 : len(part)-1])
		if err != nil || v < 0 || v > 100 {
			return 0, false
		}
		sum += float64(v)
		n++
	}
	return sum / float64(n), n > 0
}
