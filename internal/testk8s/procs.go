package testk8s

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// proc is one of the cluster's processes, its output in a log file.
type proc struct {
	name string
	cmd  *exec.Cmd
	log  string
	done chan struct{}
}

// startProc starts bin with args (and env added to the test's own),
// logging to dir/name.log. The process
// dies with the test process (PDEATHSIG), so that a test killed by its
// timeout leaves no cluster behind.
func startProc(dir, name string, sys *syscall.SysProcAttr, env []string, bin string, args ...string) (*proc, error) {
	p := &proc{name: name, log: filepath.Join(dir, name+".log"), done: make(chan struct{})}
	f, err := os.Create(p.log)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	p.cmd = exec.Command(bin, args...)
	p.cmd.Stdout, p.cmd.Stderr = f, f
	if env != nil {
		p.cmd.Env = append(os.Environ(), env...)
	}
	if sys == nil {
		sys = &syscall.SysProcAttr{}
	}
	sys.Pdeathsig = syscall.SIGKILL
	p.cmd.SysProcAttr = sys
	if err := p.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	go func() { p.cmd.Wait(); close(p.done) }()
	return p, nil
}

// exited reports whether the process has ended.
func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// logTail is the end of the process's log, for errors.
func (p *proc) logTail() string {
	b, _ := os.ReadFile(p.log)
	return tail(string(b), 3000)
}

// stop kills the process (for the namespace's first process, everything
// in its PID namespace) and waits for it.
func (p *proc) stop() {
	if p == nil || p.cmd.Process == nil {
		return
	}
	_ = p.cmd.Process.Kill()
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
	}
}

// waitFor polls ready until it returns nil, p exits (an error with the
// end of its log) or ctx ends.
func waitFor(ctx context.Context, p *proc, what string, ready func() error) error {
	var last error
	for {
		if last = ready(); last == nil {
			return nil
		}
		if p != nil && p.exited() {
			return fmt.Errorf("%s exited before %s (%v): %s", p.name, what, p.cmd.ProcessState, p.logTail())
		}
		select {
		case <-ctx.Done():
			msg := fmt.Sprintf("%s: %v (last: %v)", what, ctx.Err(), last)
			if p != nil {
				msg += ": " + p.logTail()
			}
			return fmt.Errorf("%s", msg)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// httpOK is a readiness check: GET url answers 200.
func httpOK(c *http.Client, url, token string) func() error {
	return func() error {
		req, err := http.NewRequest(http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := c.Do(req)
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("GET %s: %s", url, resp.Status)
		}
		return nil
	}
}

// freePorts returns n distinct free TCP ports on 127.0.0.1 (free when
// asked: the usual small race with other processes is accepted).
func freePorts(n int) ([]int, error) {
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	var ports []int
	for i := 0; i < n; i++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// kubeconfig is a kubeconfig for server, trusting caPEM, authenticating
// with token.
func kubeconfig(server string, caPEM []byte, user, token string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: shoal-test
  cluster:
    server: %s
    certificate-authority-data: %s
users:
- name: %s
  user:
    token: %s
contexts:
- name: shoal-test
  context:
    cluster: shoal-test
    user: %s
current-context: shoal-test
`, server, b64(caPEM), user, token, user)
}

// flags renders name=value pairs as --name=value arguments.
func flags(kv ...string) []string {
	var out []string
	for i := 0; i+1 < len(kv); i += 2 {
		out = append(out, "--"+kv[i]+"="+kv[i+1])
	}
	return out
}

// joinLines joins lines with newlines, ending with one.
func joinLines(lines ...string) string { return strings.Join(lines, "\n") + "\n" }
