package rank

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/shoal-ml/shoal/agent/container"
	"github.com/shoal-ml/shoal/agent/ctrhost"
	"github.com/shoal-ml/shoal/agent/files"
	"github.com/shoal-ml/shoal/agent/runner"
	"github.com/shoal-ml/shoal/domain/asset"
	"github.com/shoal-ml/shoal/domain/catalog"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/internal/archive"
)

// preparingInterval is how often a pull or build in progress is reported
// (besides each change of phase).
const preparingInterval = 2 * time.Second

// wantsContainer says whether the task's rank runs in a container: it
// names an image (or a build). A location whose mode is off refuses
// such a job at submit; one that reaches the node anyway fails with the
// reason.
//
// On an agent that runs in a container of nodeImage (a kubernetes node's
// pod) a rank of that image runs as a process here, already in its
// image; any other image cannot run here.
func wantsContainer(t *node.AgentTask, nodeImage string) (bool, error) {
	env := t.Environment
	if env == nil || (env.Image == "" && env.Build == nil) {
		return false, nil
	}
	if nodeImage != "" {
		if env.Build == nil && env.Image == nodeImage {
			return false, nil
		}
		return false, fmt.Errorf("the job's environment names %s but this node is a container of image %s: its ranks run only in that image",
			imageName(env), nodeImage)
	}
	if t.Container != nil && t.Container.Mode == catalog.ContainersOff {
		return false, fmt.Errorf("the job's environment names an image (%s) but its location runs no containers (mode %q)",
			imageName(env), catalog.ContainersOff)
	}
	return true, nil
}

// imageName is what an environment runs, for messages.
func imageName(env *asset.EnvironmentSpec) string {
	if env.Build != nil {
		return "a build of " + env.Build.Path
	}
	return env.Image
}

// prepareImage makes the rank's image local, reporting Preparing while
// it pulls or builds; stopping the rank ends it.
func (r *Rank) prepareImage(ctx context.Context, logPath string) (string, error) {
	t := r.t
	prepCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	r.mu.Lock()
	if r.stopReason != "" {
		r.mu.Unlock()
		return "", errors.New("stopped: " + r.stopReason)
	}
	r.cancelPrep = cancel
	r.mu.Unlock()
	if r.n.Ctr == nil {
		return "", &container.Error{Kind: container.ErrRuntimeMissing, Op: "run a container", Msg: "this agent has no container engine"}
	}
	tmp, err := os.MkdirTemp(r.dir, "image-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	log := r.n.Log.With("job", t.JobName, "attempt", t.AttemptID, "rank", t.Rank)
	progress := &ctrhost.ProgressReporter{Interval: preparingInterval, Now: time.Now, Send: func(reason string) {
		// Progress only: a server that does not record it (or is away)
		// holds nothing up.
		go func() {
			c, done := context.WithTimeout(ctx, 10*time.Second)
			defer done()
			if _, err := r.n.Client.Report(c, t.RankRef, &node.RankReport{State: node.RankPreparing, Reason: reason}); err != nil {
				log.Debug("a Preparing report was not taken", "err", err)
			}
		}()
	}}
	r.appendLog(logPath, "shoal agent: the job runs in a container of "+imageName(t.Environment)+"\n")
	ref, err := r.n.Ctr.PrepareImage(prepCtx, ctrhost.ImageJob{
		Env: t.Environment, Task: t.Container, Tmp: tmp, Progress: progress.Report,
		Log: func(line string) { r.appendLog(logPath, line+"\n") },
		Fetch: func(ctx context.Context, id string, w io.Writer, dst string) error {
			body, err := r.n.Client.Artifact(ctx, id)
			if err != nil {
				return err
			}
			defer body.Close()
			return archive.Unpack(io.TeeReader(body, w), dst, archive.Limits{})
		},
	})
	if err != nil && errors.Is(err, context.Canceled) && ctx.Err() == nil {
		return "", fmt.Errorf("stopped while preparing the image: %w", err)
	}
	return ref, err
}

// stoppedBeforeStart ends a rank that was stopped while its image was
// being prepared, as stopped before start; false when it was not.
func (r *Rank) stoppedBeforeStart(ctx context.Context, logPath string) bool {
	r.mu.Lock()
	reason := r.stopReason
	r.mu.Unlock()
	if reason == "" {
		return false
	}
	end := r.n.Clock.Now()
	r.n.Agent.Finish(ctx, &files.Result{Ref: r.t.RankRef, JobName: r.t.JobName, LogPath: logPath,
		Report: node.RankReport{State: stateFor(reason, -1), Reason: reason + " before start", EndTime: &end}})
	return true
}

// startInContainer starts the rank's processes in containers of image:
// as the run-as account (never root), its folders mounted where the host
// run has them, in a network namespace of the rank's own (its subnet's
// network when it has one; the host's network for a rank of a multi-node
// job), within the node's size, with the node's GPUs only.
func (r *Rank) startInContainer(ctx context.Context, task runner.Task, image, outDir string) (*ctrhost.Run, error) {
	t := r.t
	rt, _, err := r.n.Ctr.Runtime(ctx)
	if err != nil {
		return nil, err
	}
	if r.account == nil || r.account.UID == 0 {
		return nil, errors.New("containers never run as root, and this node's agent runs work as root " +
			"(start the agent as root to give each user an account of its own, or as an unprivileged user)")
	}
	cr := ctrhost.Rank{
		Task: task, Image: image, User: fmt.Sprintf("%d:%d", r.account.UID, r.account.GID),
		Labels: r.n.Ctr.NodeLabels(r.n.NodeID),
	}
	cr.Labels[ctrhost.LabelAttempt], cr.Labels[ctrhost.LabelRank] = t.AttemptID, strconv.Itoa(t.Rank)
	for _, d := range []string{filepath.Join(r.dir, "code"), filepath.Join(r.dir, "inputs"), outDir} {
		if _, err := os.Stat(d); errors.Is(err, fs.ErrNotExist) {
			continue // no inputs folder: the task has no file inputs
		}
		cr.Mounts = append(cr.Mounts, container.Mount{Source: d, Target: d})
	}
	if d, ok := parallelMount(t, r.dir); ok {
		cr.Mounts = append(cr.Mounts, container.Mount{Source: d, Target: d, ReadOnly: true})
	}
	// Read-only inputs again as read-only volumes of their own: the
	// inputs folder's volume would carry their mounts, but a volume of
	// each says so whatever the engine does with submounts.
	r.dataMu.Lock()
	for _, m := range r.roInputs {
		cr.Mounts = append(cr.Mounts, container.Mount{Source: m[0], Target: m[1], ReadOnly: true})
	}
	r.dataMu.Unlock()
	if home := r.accountEnv["HOME"]; home != "" {
		cr.Mounts = append(cr.Mounts, container.Mount{Source: home, Target: home})
	}
	if bundle := r.n.Agent.CABundle(); bundle != "" {
		cr.Mounts = append(cr.Mounts, container.Mount{Source: bundle, Target: bundle, ReadOnly: true})
	}
	if c := t.Container; c != nil {
		cr.NanoCPUs = int64(c.VCPUs) * 1e9
		cr.MemoryBytes = int64(c.MemoryGB * (1 << 30))
		if n := c.Network; n != nil {
			nw, ok := rt.(container.Networker)
			if !ok {
				return nil, fmt.Errorf("the compute is in virtual network %q, subnet %q, and this node's engine makes no networks", n.VNet, n.Subnet)
			}
			if err := nw.EnsureNetwork(ctx, n.Name, n.Internal, map[string]string{ctrhost.LabelNetwork: n.VNet + "/" + n.Subnet}); err != nil {
				return nil, fmt.Errorf("the subnet's network %s: %w", n.Name, err)
			}
			cr.Network = n.Name
			// The container's loopback is its own: what a job finds on
			// the host's loopback is served there too.
			cr.Loopback = r.loopbackServices
		}
	}
	if cr.Network == "" && t.NodeCount <= 1 {
		// A namespace of its own, as a host-process rank has (netns.go):
		// the host's loopback, and another user's listeners on it, out
		// of reach; what a job finds there is served on its own.
		cr.Network, cr.Loopback = container.NetworkOwn, r.loopbackServices
	}
	env := make(map[string]string, len(task.Env))
	for k, v := range task.Env {
		env[k] = v
	}
	delete(env, "CUDA_VISIBLE_DEVICES")
	delete(env, "NVIDIA_VISIBLE_DEVICES")
	devs, visible := ctrhost.GPUDevices(r.n.GPUDevices, r.n.Ctr.GPUs(ctx), files.Exists)
	cr.Devices = devs
	if visible != "" {
		env["CUDA_VISIBLE_DEVICES"], env["NVIDIA_VISIBLE_DEVICES"] = visible, visible
	}
	cr.Task.Env = env
	return ctrhost.StartRank(ctx, rt, cr)
}
