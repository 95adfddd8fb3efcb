package ctrhost

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/shoal-ml/shoal/agent/container"
	"github.com/shoal-ml/shoal/agent/runner"
	"github.com/shoal-ml/shoal/domain/core"
)

// Rank is how one rank runs in containers: one container per
// local process, each with the environment the host runner would give
// that process.
type Rank struct {
	Task  runner.Task // as for the host runner (Credential unused)
	Image string
	// User is the run-as account's "uid:gid".
	User string
	// Mounts are the rank's folders, at the paths the host run uses.
	Mounts []container.Mount
	// NanoCPUs and MemoryBytes are the node's size as limits.
	NanoCPUs, MemoryBytes int64
	Devices               []container.Device
	Labels                map[string]string
	// Network is the container network: "host" (the default, ""),
	// container.NetworkOwn (a namespace of the rank's own: its first
	// container gets it and the others share it, so that the rank's
	// processes meet on its loopback as on a host) or the subnet's
	// network of a compute in a virtual network.
	Network string
	// Loopback, when set, is called with each container's first process
	// once it runs and before its command starts (the command waits for
	// a gate the call opens): the agent listens there, in the
	// container's own network namespace, for what a job finds on its
	// loopback (the identity endpoint, the server). A failure ends the
	// rank before its command ran.
	Loopback func(pid int) error
}

// gateDir is where a gated rank's container finds its gate: a folder of
// the agent's, mounted read-only; the command starts once "open" is in
// it.
const gateDir = "/run/shoal-gate"

// gatedShell waits for the gate (a minute at most: the agent opens it
// within moments of the start, or ends the container), then runs the
// command as rankShell does.
const gatedShell = `i=0; while [ ! -e ` + gateDir + `/open ]; do i=$((i+1)); ` +
	`if [ $i -gt 1200 ]; then echo "shoal: the job's start gate never opened" >&2; exit 125; fi; sleep 0.05; done; ` + rankShell

// Run is a rank running in containers. Its methods are safe for
// concurrent use.
type Run struct {
	rt    container.Runtime
	grace time.Duration
	ids   []string
	log   *os.File

	mu       sync.Mutex
	reason   string
	timer    *time.Timer
	done     chan struct{}
	result   runner.Result
	started  time.Time  // just before the first process could start, by clock
	clock    core.Clock // the task's
	stopOnce sync.Once
}

// rankShell runs the command with bash where the image has it (as the
// host runner does), else sh.
const rankShell = `if command -v bash >/dev/null 2>&1; then exec bash -c "$1"; else exec sh -c "$1"; fi`

// StartRank starts the rank's containers, its output appended to
// the task's log file; a failure removes those already started.
func StartRank(ctx context.Context, rt container.Runtime, cr Rank) (*Run, error) {
	t, err := runner.Normalize(cr.Task)
	if err != nil {
		return nil, err
	}
	logf, err := os.OpenFile(t.LogPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("log: %w", err)
	}
	r := &Run{rt: rt, grace: t.KillGrace, log: logf, done: make(chan struct{}), clock: t.Clock}
	// starting stamps the rank's start just before its first process
	// can start (its container's, or a gated one's command when its gate
	// opens): stamped once the containers were running, the start would
	// be late by however long the engine took to say so, and the rank's
	// start to end shorter than its processes ran.
	starting := func() {
		if r.started.IsZero() {
			r.started = r.clock.Now()
		}
	}
	shell, mounts := rankShell, cr.Mounts
	var gates []string
	if cr.Loopback != nil {
		shell = gatedShell
	}
	for local := range t.ProcessesPerNode {
		env := runner.ProcessEnv(t, local)
		env["PWD"] = t.Dir
		labels := map[string]string{"shoal.local_rank": strconv.Itoa(local)}
		for k, v := range cr.Labels {
			labels[k] = v
		}
		ms := mounts
		if cr.Loopback != nil {
			// Beside the log, in the agent's folder of the rank, not in
			// the job's working directory.
			gate := filepath.Join(filepath.Dir(t.LogPath), "gate-"+strconv.Itoa(local))
			// Searchable by the run-as account whatever the agent's
			// umask (the server's is 077).
			err := os.MkdirAll(gate, 0o755)
			if err == nil {
				err = os.Chmod(gate, 0o755)
			}
			if err != nil {
				r.removeAll()
				logf.Close()
				return nil, fmt.Errorf("the start gate: %w", err)
			}
			gates = append(gates, gate)
			ms = append(append([]container.Mount(nil), mounts...), container.Mount{Source: gate, Target: gateDir, ReadOnly: true})
		}
		network, loopback := OrHost(cr.Network), cr.Loopback
		if cr.Network == container.NetworkOwn && local > 0 {
			// The first container's namespace, whose loopback services
			// are already there.
			network, loopback = "container:"+r.ids[0], nil
		}
		if cr.Loopback == nil {
			starting()
		}
		id, err := rt.Run(ctx, container.Spec{
			Image: cr.Image, Entrypoint: []string{"/bin/sh", "-c", shell, "shoal-rank", t.Command},
			Env: env, WorkingDir: t.Dir, Mounts: ms, User: cr.User,
			NanoCPUs: cr.NanoCPUs, MemoryBytes: cr.MemoryBytes, Devices: cr.Devices,
			Network: network, Labels: labels, Stdout: logf, Stderr: logf,
		})
		if err != nil {
			r.removeAll()
			logf.Close()
			return nil, fmt.Errorf("start process %d of %d in a container: %w", local, t.ProcessesPerNode, err)
		}
		r.ids = append(r.ids, id)
		if cr.Loopback != nil {
			if err := openGate(ctx, rt, id, gates[local], loopback, starting); err != nil {
				r.removeAll()
				logf.Close()
				return nil, fmt.Errorf("process %d of %d: %w", local, t.ProcessesPerNode, err)
			}
		}
	}
	if t.Timeout > 0 {
		r.timer = time.AfterFunc(t.Timeout, func() { r.Stop(runner.ReasonTimeout) })
	}
	go r.wait()
	return r, nil
}

// wait waits for every container, ends the others when one fails (as
// torchrun does), and removes them all.
func (r *Run) wait() {
	codes := make([]int, len(r.ids))
	var wg sync.WaitGroup
	for i, id := range r.ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			code, err := r.rt.Wait(context.Background(), id)
			if err != nil {
				fmt.Fprintf(r.log, "shoal agent: waiting for container %s failed: %v\n", ShortID(id), err)
				code = -1
			}
			codes[i] = code
			if code != 0 && len(r.ids) > 1 {
				r.Stop(runner.ReasonFailed)
			}
		}()
	}
	wg.Wait()
	r.removeAll()
	res := runner.Result{StartedAt: r.started, EndedAt: r.clock.Now()}
	for _, c := range codes {
		if c != 0 {
			res.ExitCode = c
			break
		}
	}
	r.mu.Lock()
	if r.timer != nil {
		r.timer.Stop()
	}
	res.Reason = r.reason
	r.mu.Unlock()
	if res.Reason == "" {
		res.Reason = runner.ReasonCompleted
		if res.ExitCode != 0 {
			res.Reason = runner.ReasonFailed
		}
	}
	r.result = res
	r.log.Close()
	close(r.done)
}

// removeAll removes the rank's containers: nothing is left behind.
func (r *Run) removeAll() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	// Last first: the others may share the first's network namespace,
	// and the engine keeps a container whose namespace another uses.
	for i := len(r.ids) - 1; i >= 0; i-- {
		id := r.ids[i]
		if err := r.rt.Remove(ctx, id); err != nil {
			fmt.Fprintf(r.log, "shoal agent: removing container %s failed: %v\n", ShortID(id), err)
		}
	}
}

// Done is closed once every container has exited and been removed.
func (r *Run) Done() <-chan struct{} { return r.done }

// Wait returns how the rank ended, once its containers are gone.
func (r *Run) Wait() runner.Result {
	<-r.done
	return r.result
}

// Stop stops the containers (SIGTERM, SIGKILL after the grace); the
// result's reason is reason unless the rank already ended or was being
// stopped.
func (r *Run) Stop(reason string) {
	if reason == "" {
		reason = runner.ReasonCanceled
	}
	select {
	case <-r.done:
		return
	default:
	}
	r.mu.Lock()
	if r.reason == "" {
		r.reason = reason
	}
	r.mu.Unlock()
	r.stopOnce.Do(func() {
		for _, id := range r.ids {
			go func() {
				ctx, cancel := context.WithTimeout(context.Background(), r.grace+30*time.Second)
				defer cancel()
				_ = r.rt.Stop(ctx, id, r.grace)
			}()
		}
	})
}

// IDs are the rank's containers.
func (r *Run) IDs() []string { return r.ids }

// ShortID is a container id as engines print it.
func ShortID(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}

// GPUDevices are the devices a container of this node gets and what
// CUDA_VISIBLE_DEVICES says inside: the node's GPUs (nodeGPUs, host
// indices "0,2"; empty: all the host's) as CDI devices where the host
// declares them, else their /dev/nvidia<N> nodes with the control nodes
// that exist, renumbered from 0 as the container sees them.
func GPUDevices(nodeGPUs string, host container.GPUs, exists func(string) bool) ([]container.Device, string) {
	var idx []string
	if nodeGPUs != "" {
		for _, s := range strings.Split(nodeGPUs, ",") {
			if s = strings.TrimSpace(s); s != "" {
				idx = append(idx, s)
			}
		}
	} else {
		for _, n := range host.DevNodes {
			idx = append(idx, strings.TrimPrefix(filepath.Base(n), "nvidia"))
		}
		if len(idx) == 0 {
			for _, c := range host.CDI {
				if _, name, ok := strings.Cut(c, "="); ok && name != "all" {
					idx = append(idx, name)
				}
			}
		}
	}
	if len(idx) == 0 {
		return nil, ""
	}
	var devs []container.Device
	visible := make([]string, len(idx))
	for i, n := range idx {
		visible[i] = strconv.Itoa(i)
		if cdi := "nvidia.com/gpu=" + n; containsString(host.CDI, cdi) {
			devs = append(devs, container.Device{Path: cdi, CDI: true})
		} else if node := "/dev/nvidia" + n; exists(node) {
			devs = append(devs, container.Device{Path: node})
		}
	}
	if len(devs) > 0 && !devs[0].CDI {
		for _, ctl := range []string{"/dev/nvidiactl", "/dev/nvidia-uvm", "/dev/nvidia-uvm-tools", "/dev/nvidia-modeset"} {
			if exists(ctl) {
				devs = append(devs, container.Device{Path: ctl})
			}
		}
	}
	return devs, strings.Join(visible, ",")
}

// containsString reports whether list holds s.
func containsString(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// OrHost is network, or "host" when none is named.
func OrHost(network string) string {
	if network == "" {
		return "host"
	}
	return network
}

// openGate gives a gated container its loopback services, then lets its
// command start. The gate is an empty file whose existence the command,
// running as the job's account, waits for: readable by all on purpose,
// it holds nothing. starting is called just before the gate opens.
func openGate(ctx context.Context, rt container.Runtime, id, gate string, loopback func(int) error, starting func()) error {
	if loopback == nil {
		starting()
		return os.WriteFile(filepath.Join(gate, "open"), nil, 0o644)
	}
	p, ok := rt.(container.PIDer)
	if !ok {
		return fmt.Errorf("this node's engine (%T) does not tell a container's process, and the job's loopback services need it", rt)
	}
	pid, err := p.ContainerPID(ctx, id)
	if err != nil {
		return fmt.Errorf("the container's process: %w", err)
	}
	if err := loopback(pid); err != nil {
		return fmt.Errorf("the job's loopback services in its container's network: %w", err)
	}
	starting()
	return os.WriteFile(filepath.Join(gate, "open"), nil, 0o644)
}
