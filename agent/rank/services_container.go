package rank

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/shoal-ml/shoal/agent/container"
	"github.com/shoal-ml/shoal/agent/ctrhost"
	"github.com/shoal-ml/shoal/agent/runner"
	"github.com/shoal-ml/shoal/domain/node"
)

// serviceProgramNames are the programs of the known services, looked for
// in a job's container.
var serviceProgramNames = []string{"jupyter-lab", "jupyter-notebook", "tensorboard", "code-server"}

// containerLook finds the known services' programs on the PATH of the
// rank's container (the image's, as the job's account sees it), for a
// service started there.
func (s *rankServices) containerLook(task runner.Task, crun *ctrhost.Run) (container.Execer, func(string) string, error) {
	rt, _, err := s.r.n.Ctr.Runtime(s.ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("the job's container engine: %v", err)
	}
	ex, ok := rt.(container.Execer)
	if !ok || len(crun.IDs()) == 0 {
		return nil, nil, fmt.Errorf("this node's container engine cannot start a program in the job's container")
	}
	script := "for p in " + strings.Join(serviceProgramNames, " ") + `; do command -v "$p" || true; done`
	p, err := ex.Exec(s.ctx, crun.IDs()[0], container.ExecSpec{Command: []string{"/bin/sh", "-c", script}, User: s.containerUser(), WorkingDir: task.Dir})
	if err != nil {
		return nil, nil, fmt.Errorf("looking for the service's program in the job's container: %v", err)
	}
	defer p.Close()
	_ = p.Stdin().Close()
	go func() { _, _ = io.Copy(io.Discard, p.Stderr()) }()
	found := map[string]string{}
	sc := bufio.NewScanner(io.LimitReader(p.Stdout(), 64<<10))
	for sc.Scan() {
		if path := strings.TrimSpace(sc.Text()); strings.HasPrefix(path, "/") {
			found[filepath.Base(path)] = path
		}
	}
	_, _ = p.Wait(s.ctx)
	return ex, func(name string) string { return found[name] }, nil
}

// containerUser is the job's account as the container runs it.
func (s *rankServices) containerUser() string {
	if a := s.r.account; a != nil {
		return fmt.Sprintf("%d:%d", a.UID, a.GID)
	}
	return ""
}

// execInContainer starts a known service's program (argv) inside the
// rank's container id, as the job's account in its folder: a process of
// the container, which the proxy's check at each dial then recognizes.
// Its output goes beside the rank's log; its end makes the service
// Failed.
func (s *rankServices) execInContainer(ex container.Execer, id string, st node.ServiceTask, argv []string, task runner.Task) error {
	logPath := filepath.Join(filepath.Dir(task.LogPath), "service_"+st.Name+".txt")
	lf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	// The container's own environment (the rank's) plus the token, which
	// only the container's processes can read.
	p, err := ex.Exec(context.WithoutCancel(s.ctx), id, container.ExecSpec{Command: argv, User: s.containerUser(), WorkingDir: task.Dir,
		Env: []string{"JUPYTER_TOKEN=" + st.Token}})
	if err != nil {
		lf.Close()
		return fmt.Errorf("starting %s in the job's container: %v", programOf(st.Type), err)
	}
	_ = p.Stdin().Close()
	go func() {
		defer lf.Close()
		defer p.Close()
		done := make(chan struct{})
		go func() { _, _ = io.Copy(lf, p.Stderr()); close(done) }()
		_, _ = io.Copy(lf, p.Stdout())
		<-done
		code, err := p.Wait(context.WithoutCancel(s.ctx))
		if err == nil {
			err = fmt.Errorf("exit status %d", code)
		}
		s.exitedWith(st, err)
	}()
	return nil
}
