package container

import (
	"context"
	"encoding/json"
	"io"
	"maps"
	"slices"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/pkg/stdcopy"
)

var _ ExecRunner = (*Engine)(nil)

// ExecWait creates an exec instance and starts it attached (or detached),
// copying its output until it ends, then reads its exit code.
func (e *Engine) ExecWait(ctx context.Context, id string, opts ExecOptions) (int, error) {
	op := "exec in " + id
	if len(opts.Command) == 0 {
		return -1, errorf(ErrInvalid, op, "opts.Command is required")
	}
	if opts.User != "" && !userPattern.MatchString(opts.User) {
		return -1, errorf(ErrInvalid, op, "opts.User %q must be uid or uid:gid (numbers)", opts.User)
	}
	env := make([]string, 0, len(opts.Env))
	for _, k := range slices.Sorted(maps.Keys(opts.Env)) {
		if !envKey.MatchString(k) {
			return -1, errorf(ErrInvalid, op, "opts.Env key %q must be a letter or _ followed by letters, digits or _", k)
		}
		env = append(env, k+"="+opts.Env[k])
	}
	cfg := container.ExecOptions{
		User: opts.User, Env: env, WorkingDir: opts.WorkingDir, Cmd: opts.Command, Tty: opts.Tty,
		AttachStdin: opts.Stdin != nil && !opts.Detach, AttachStdout: !opts.Detach, AttachStderr: !opts.Detach,
		Detach: opts.Detach,
	}
	created, err := e.cli.ContainerExecCreate(ctx, id, cfg)
	if err != nil {
		return -1, classify(op, err)
	}
	if opts.Detach {
		if err := e.cli.ContainerExecStart(ctx, created.ID, container.ExecStartOptions{Detach: true}); err != nil {
			return -1, classify(op, err)
		}
		return 0, nil
	}
	resp, err := e.cli.ContainerExecAttach(ctx, created.ID, container.ExecAttachOptions{Tty: opts.Tty})
	if err != nil {
		return -1, classify(op, err)
	}
	defer resp.Close()
	if opts.Stdin != nil {
		go func() {
			_, _ = io.Copy(resp.Conn, opts.Stdin)
			_ = resp.CloseWrite()
		}()
	}
	// A context that ends stops the copy: the process goes on in the
	// container until it ends (the caller stops the container to end it).
	copied := make(chan error, 1)
	go func() {
		stdout, stderr := orDiscard(opts.Stdout), orDiscard(opts.Stderr)
		var err error
		if opts.Tty {
			_, err = io.Copy(stdout, resp.Reader)
		} else {
			_, err = stdcopy.StdCopy(stdout, stderr, resp.Reader)
		}
		copied <- err
	}()
	select {
	case <-ctx.Done():
		resp.Close()
		return -1, classify(op, ctx.Err())
	case err := <-copied:
		if err != nil {
			return -1, classify(op, err)
		}
	}
	ins, err := e.cli.ContainerExecInspect(ctx, created.ID)
	if err != nil {
		return -1, classify(op, err)
	}
	return ins.ExitCode, nil
}

// State inspects the container and, while it runs, reads its CPU time
// from the engine's one-shot stats.
func (e *Engine) State(ctx context.Context, id string) (State, error) {
	op := "state of " + id
	ins, err := e.cli.ContainerInspect(ctx, id)
	if err != nil {
		return State{}, classify(op, err)
	}
	if ins.State == nil || !ins.State.Running {
		return State{}, nil
	}
	st := State{Running: true, Pid: ins.State.Pid}
	cpu, err := e.cpuNanos(ctx, id)
	if err != nil {
		// A container that ended between the inspect and the stats has
		// no stats to give (podman answers an empty body): it is not
		// running, which is no engine error.
		if again, ierr := e.cli.ContainerInspect(ctx, id); ierr == nil && (again.State == nil || !again.State.Running) {
			return State{}, nil
		}
		if cpu, err = e.cpuNanos(ctx, id); err != nil {
			return st, classify(op, err)
		}
	}
	st.CPUNanos = cpu
	return st, nil
}

// cpuNanos reads a running container's CPU time from the engine's
// one-shot stats.
func (e *Engine) cpuNanos(ctx context.Context, id string) (uint64, error) {
	stats, err := e.cli.ContainerStatsOneShot(ctx, id)
	if err != nil {
		return 0, err
	}
	defer stats.Body.Close()
	var s container.StatsResponse
	if err := json.NewDecoder(stats.Body).Decode(&s); err != nil {
		return 0, errorf(errOther, "stats of "+id, "reading stats: %v", err)
	}
	return s.CPUStats.CPUUsage.TotalUsage, nil
}
