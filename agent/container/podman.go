package container

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// PodmanConfig says how to start a private podman service.
type PodmanConfig struct {
	// Binary is podman's path; "podman" on the PATH when empty.
	Binary string
	// Dir holds the service's socket, its configuration and its log;
	// required, and private to this service.
	Dir string
	// Root and RunRoot are the image store and its run state; podman's
	// defaults (/var/lib/containers/storage as root) when empty, the
	// store the host's podman CLI and its other services use.
	Root, RunRoot string
	// OCIRuntime is the OCI runtime; "runc" when empty (crun refuses to
	// start containers under hybrid cgroups).
	OCIRuntime string
	// InsecureRegistries are registries (host:port) reached over plain
	// HTTP.
	InsecureRegistries []string
	// StartTimeout bounds the wait for the socket; 30 s when zero.
	StartTimeout time.Duration
}

// Podman is a running `podman system service`; Open(ctx,
// Config{Host: p.Host}) reaches it.
type Podman struct {
	// Host is the service's address, "unix://<Dir>/podman.sock".
	Host string
	cmd  *exec.Cmd
	done chan error
	cfg  PodmanConfig
}

// StartPodman starts `podman system service` on a socket of its own,
// with a containers.conf whose default ulimits are within this host's
// hard limits (podman's own defaults exceed some hosts', and then every
// container and build step fails to start) and a registries.conf that
// lists cfg.InsecureRegistries. It returns once the socket answers;
// ErrRuntimeMissing when podman is not installed.
func StartPodman(ctx context.Context, cfg PodmanConfig) (*Podman, error) {
	const op = "start podman service"
	bin := cfg.Binary
	if bin == "" {
		bin = "podman"
	}
	path, err := exec.LookPath(bin)
	if err != nil {
		return nil, errorf(ErrRuntimeMissing, op, "%s is not installed: %v", bin, err)
	}
	if cfg.Dir == "" {
		return nil, errorf(ErrInvalid, op, "Dir is required")
	}
	if cfg.OCIRuntime == "" {
		cfg.OCIRuntime = "runc"
	}
	if cfg.StartTimeout == 0 {
		cfg.StartTimeout = 30 * time.Second
	}
	if err := os.MkdirAll(cfg.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	containersConf, registriesConf, err := writePodmanConfs(cfg)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	sock := filepath.Join(cfg.Dir, "podman.sock")
	_ = os.Remove(sock)
	args := []string{"--runtime", cfg.OCIRuntime}
	if cfg.Root != "" {
		args = append(args, "--root", cfg.Root)
	}
	if cfg.RunRoot != "" {
		args = append(args, "--runroot", cfg.RunRoot)
	}
	// A store of its own gets a temporary dir of its own too: podman's
	// default (/run/libpod for root) is shared by every podman on the
	// host, and another one's `system reset` removes it from under this
	// one. The host's default store keeps the default: every podman on
	// that store must share it, since one that finds no "alive" file in
	// its temporary dir takes the host for rebooted and resets the state
	// of every container in the store, other services' running ones too.
	if cfg.Root != "" {
		args = append(args, "--tmpdir", TmpDir(cfg.Dir))
	}
	args = append(args, "system", "service", "--time", "0", "unix://"+sock)
	logf, err := os.OpenFile(filepath.Join(cfg.Dir, "podman.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	defer logf.Close()
	cmd := exec.Command(path, args...)
	cmd.Env = append(os.Environ(), "CONTAINERS_CONF="+containersConf, "CONTAINERS_REGISTRIES_CONF="+registriesConf)
	cmd.Stdout, cmd.Stderr = logf, logf
	// Its own process group: a signal to the agent's group does not
	// take the service (and the containers it supervises) down with it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, errorf(ErrRuntimeMissing, op, "%v", err)
	}
	p := &Podman{Host: "unix://" + sock, cmd: cmd, done: make(chan error, 1), cfg: cfg}
	go func() { p.done <- cmd.Wait() }()
	if err := p.waitReady(ctx, cfg.StartTimeout); err != nil {
		_ = p.Close()
		log, _ := os.ReadFile(filepath.Join(cfg.Dir, "podman.log"))
		return nil, errorf(ErrRuntimeMissing, op, "%v; its log: %s", err, strings.TrimSpace(string(log)))
	}
	return p, nil
}

// TmpDir is the temporary dir of the podman service StartPodman starts
// in dir; a podman CLI run on the same store passes it as --tmpdir.
func TmpDir(dir string) string { return filepath.Join(dir, "tmp") }

// waitReady polls the socket until the service answers.
func (p *Podman) waitReady(ctx context.Context, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		e, err := Open(ctx, Config{Host: p.Host})
		if err == nil {
			return e.Close()
		}
		select {
		case err := <-p.done:
			p.done <- err
			return fmt.Errorf("podman exited: %v", err)
		case <-ctx.Done():
			return fmt.Errorf("no answer on %s within %s", p.Host, timeout)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// Close stops the service (SIGTERM, then SIGKILL after 10 s). The
// containers it started keep running under their conmon monitors.
func (p *Podman) Close() error {
	if p.cmd.Process == nil {
		return nil
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
	return nil
}

// SetInsecureRegistries makes the running service reach regs (host:port)
// over plain HTTP: it rewrites the service's registries.conf and sends
// it SIGHUP, on which podman reloads its configuration (podman 4.3 and
// later; its Docker-compatible pull has no per-pull TLS switch). The
// reload is asynchronous: a caller that must see it polls Info.
func (p *Podman) SetInsecureRegistries(regs []string) error {
	cfg := p.cfg
	cfg.InsecureRegistries = regs
	if _, _, err := writePodmanConfs(cfg); err != nil {
		return err
	}
	p.cfg = cfg
	return p.cmd.Process.Signal(syscall.SIGHUP)
}

// podmanNprocCap is the nproc podman sets itself when its hard limit is
// higher.
const podmanNprocCap = 32768

// PID is the service's process id (for Config.EnginePID).
func (p *Podman) PID() int { return p.cmd.Process.Pid }

// writePodmanConfs writes the service's containers.conf and
// registries.conf into cfg.Dir and returns their paths.
func writePodmanConfs(cfg PodmanConfig) (string, string, error) {
	limits, err := hardLimits(0)
	if err != nil {
		return "", "", err
	}
	// podman lowers its own nproc to at most 32768 when it starts (seen
	// with podman 4.3), and what it starts inherits that: its build
	// steps' default must not exceed it.
	if v := limits["nproc"]; v < 0 || v > podmanNprocCap {
		limits["nproc"] = podmanNprocCap
	}
	var ulimits []string
	for _, name := range []string{"nofile", "nproc"} {
		if v := limits[name]; v >= 0 {
			ulimits = append(ulimits, fmt.Sprintf("%q", fmt.Sprintf("%s=%d:%d", name, v, v)))
		}
	}
	// The events go to a file: journald may be absent (a container, a
	// minimal host) and podman then fails every event it writes.
	containers := fmt.Sprintf("[containers]\ndefault_ulimits = [%s]\n\n[engine]\nevents_logger = \"file\"\nruntime = %q\n",
		strings.Join(ulimits, ", "), cfg.OCIRuntime)
	var registries strings.Builder
	registries.WriteString("# Written by shoal: the registries this podman service reaches over plain HTTP.\n")
	for _, r := range cfg.InsecureRegistries {
		if r == "" || strings.ContainsAny(r, "\"\n[]") {
			return "", "", errors.New("insecure registry " + fmt.Sprintf("%q", r) + " must be host or host:port")
		}
		fmt.Fprintf(&registries, "\n[[registry]]\nlocation = %q\ninsecure = true\n", r)
	}
	cc := filepath.Join(cfg.Dir, "containers.conf")
	rc := filepath.Join(cfg.Dir, "registries.conf")
	if err := os.WriteFile(cc, []byte(containers), 0o600); err != nil {
		return "", "", err
	}
	if err := os.WriteFile(rc, []byte(registries.String()), 0o600); err != nil {
		return "", "", err
	}
	return cc, rc, nil
}
