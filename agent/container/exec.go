package container

import (
	"context"
	"io"
	"net"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/docker/docker/api/types"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/pkg/stdcopy"
)

// Execer is a Runtime that also runs processes inside a running
// container and reaches its network: what the SSH server of an instance
// that is a container needs. The engine must run on this host (its
// process ids and namespaces are this host's).
type Execer interface {
	// Exec starts spec's command in the running container id, its
	// standard streams attached. ErrInvalid for a bad spec (the field
	// named), ErrNotFound for an unknown container.
	Exec(ctx context.Context, id string, spec ExecSpec) (Process, error)
	// Dial connects to addr from inside the container's network
	// namespace, so that "127.0.0.1:8888" is the container's loopback.
	Dial(ctx context.Context, id, network, addr string) (net.Conn, error)
	// Listen listens on addr inside the container's network namespace
	// (an SSH -R forward's port, where the container's processes reach
	// it); the listener outlives ctx.
	Listen(ctx context.Context, id, network, addr string) (net.Listener, error)
}

// ExecSpec is a process to start in a running container.
type ExecSpec struct {
	Command []string // required: argv, Command[0] looked up in the container's PATH
	// User is a user name of the image ("azureuser") or "uid[:gid]";
	// the container's user when empty.
	User string
	// Env is "KEY=value" entries added to the container's environment.
	Env        []string
	WorkingDir string // absolute; the user's or the container's default when empty
	// TTY gives the process a terminal of Cols×Rows (80×24 when 0):
	// its output is then one stream, Stdout.
	TTY        bool
	Cols, Rows uint
}

// Process is a process started by Exec.
type Process interface {
	// Stdin is the process's standard input; Close ends it (EOF) while
	// the output keeps coming.
	Stdin() io.WriteCloser
	// Stdout and Stderr are its output until it ends (with a terminal
	// everything is on Stdout, and Stderr is empty).
	Stdout() io.Reader
	Stderr() io.Reader
	// Resize changes the terminal's size; nothing without a terminal.
	Resize(ctx context.Context, cols, rows uint) error
	// PID is the process's id on this host.
	PID(ctx context.Context) (int, error)
	// Signal sends sig to the process, or to its process group when it
	// leads one (a terminal's session: the shell and its jobs).
	Signal(ctx context.Context, sig syscall.Signal) error
	// Wait waits until the process has exited, after its output ended,
	// and returns its exit code (128+n for a death by signal n).
	Wait(ctx context.Context) (int, error)
	// Close drops the connection to the process's streams.
	Close() error
}

var _ Execer = (*Engine)(nil)

// userName is a POSIX user name, or "uid[:gid]".
var userName = regexp.MustCompile(`^([a-z_][a-z0-9_.-]*[$]?|[0-9]+(:[0-9]+)?)$`)

// validateExec refuses a spec the engine would refuse less clearly,
// naming the field and the rule.
func validateExec(op string, s ExecSpec) error {
	bad := func(format string, args ...any) error { return errorf(ErrInvalid, op, format, args...) }
	if len(s.Command) == 0 || s.Command[0] == "" {
		return bad("exec.Command is required")
	}
	if s.User != "" && !userName.MatchString(s.User) {
		return bad("exec.User %q must be a user name or uid[:gid]", s.User)
	}
	for i, kv := range s.Env {
		k, _, ok := strings.Cut(kv, "=")
		if !ok || !envKey.MatchString(k) {
			return bad("exec.Env[%d] %q must be KEY=value with KEY a letter or _ followed by letters, digits or _", i, kv)
		}
	}
	if s.WorkingDir != "" && !strings.HasPrefix(s.WorkingDir, "/") {
		return bad("exec.WorkingDir %q must be an absolute path", s.WorkingDir)
	}
	return nil
}

// Exec creates the exec and starts it attached: the hijacked connection
// carries stdin one way and the output the other (multiplexed into
// stdout and stderr frames without a terminal, raw with one).
func (e *Engine) Exec(ctx context.Context, id string, spec ExecSpec) (Process, error) {
	op := "exec in " + id
	if err := validateExec(op, spec); err != nil {
		return nil, err
	}
	cols, rows := spec.Cols, spec.Rows
	if cols == 0 || rows == 0 {
		cols, rows = 80, 24
	}
	opts := container.ExecOptions{
		User: spec.User, Tty: spec.TTY, AttachStdin: true, AttachStdout: true, AttachStderr: true,
		Env: spec.Env, WorkingDir: spec.WorkingDir, Cmd: spec.Command,
	}
	if spec.TTY {
		opts.ConsoleSize = &[2]uint{rows, cols}
		opts.Cmd = append([]string{"/bin/sh", "-c", awaitSize, "sh"}, spec.Command...)
	}
	created, err := e.cli.ContainerExecCreate(ctx, id, opts)
	if err != nil {
		return nil, classify(op, err)
	}
	hj, err := e.cli.ContainerExecAttach(ctx, created.ID, container.ExecAttachOptions{Tty: spec.TTY, ConsoleSize: opts.ConsoleSize})
	if err != nil {
		return nil, classify(op, err)
	}
	p := &process{e: e, id: created.ID, op: op, tty: spec.TTY, hj: hj}
	if spec.TTY {
		p.stdout, p.stderr = hj.Reader, strings.NewReader("")
		// API 1.41 (podman 4) drops the console size at creation: set it
		// now, while awaitSize waits for it.
		_ = p.Resize(ctx, cols, rows)
	} else {
		outR, outW := io.Pipe()
		errR, errW := io.Pipe()
		p.stdout, p.stderr = outR, errR
		go func() {
			_, err := stdcopy.StdCopy(outW, errW, hj.Reader)
			outW.CloseWithError(err)
			errW.CloseWithError(err)
		}()
	}
	return p, nil
}

// awaitSize holds a terminal's process back until the terminal has its
// size (half a second at most), then becomes the process (exec keeps the
// pid). API 1.41 (podman 4's service) drops the size given at creation,
// and the resize can only follow the start: without the wait, `ssh -t
// host stty size` could read 0 0. A terminal exec therefore needs
// /bin/sh in the image (stty too, or the wait is skipped).
const awaitSize = `i=0; while [ "$(stty size 2>/dev/null)" = "0 0" ] && [ $i -lt 50 ]; do sleep 0.01; i=$((i+1)); done; exec "$@"`

// process is an exec of Engine.
type process struct {
	e              *Engine
	id, op         string
	tty            bool
	hj             types.HijackedResponse
	stdout, stderr io.Reader

	mu  sync.Mutex
	pid int
}

func (p *process) Stdin() io.WriteCloser { return stdinOf{p} }
func (p *process) Stdout() io.Reader     { return p.stdout }
func (p *process) Stderr() io.Reader     { return p.stderr }
func (p *process) Close() error          { return p.hj.Conn.Close() }

// stdinOf writes to the hijacked connection; Close half-closes it, so
// that the output still comes back after the input's end.
type stdinOf struct{ p *process }

func (s stdinOf) Write(b []byte) (int, error) { return s.p.hj.Conn.Write(b) }
func (s stdinOf) Close() error                { return s.p.hj.CloseWrite() }

func (p *process) Resize(ctx context.Context, cols, rows uint) error {
	if !p.tty {
		return nil
	}
	return classify(p.op, p.e.cli.ContainerExecResize(ctx, p.id, container.ResizeOptions{Width: cols, Height: rows}))
}

// PID asks the engine once; the process keeps its id.
func (p *process) PID(ctx context.Context) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.pid > 0 {
		return p.pid, nil
	}
	// The engine may not know the id in the first moments of the start.
	for {
		in, err := p.e.cli.ContainerExecInspect(ctx, p.id)
		if err != nil {
			return 0, classify(p.op, err)
		}
		if in.Pid > 0 {
			p.pid = in.Pid
			return p.pid, nil
		}
		if !in.Running {
			return 0, errorf(ErrNotFound, p.op, "the process has ended")
		}
		select {
		case <-ctx.Done():
			return 0, classify(p.op, ctx.Err())
		case <-time.After(10 * time.Millisecond):
		}
	}
}

func (p *process) Signal(ctx context.Context, sig syscall.Signal) error {
	pid, err := p.PID(ctx)
	if err != nil {
		return err
	}
	if pg, err := syscall.Getpgid(pid); err == nil && pg == pid {
		return syscall.Kill(-pid, sig)
	}
	return syscall.Kill(pid, sig)
}

// Wait polls the engine: the output ends with the process, but the
// engine records the exit a moment later.
func (p *process) Wait(ctx context.Context) (int, error) {
	for {
		in, err := p.e.cli.ContainerExecInspect(ctx, p.id)
		if err != nil {
			return -1, classify(p.op, err)
		}
		if !in.Running {
			return in.ExitCode, nil
		}
		select {
		case <-ctx.Done():
			return -1, classify(p.op, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}
