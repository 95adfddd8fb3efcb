package e2e_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/internal/testpg"
)

// The server on PostgreSQL (store: postgres://...): the cluster tour runs,
// a restart finds everything where it was, and the URL's password is
// never logged.
func TestServerOnPostgres(t *testing.T) {
	t.Parallel()
	pg := testpg.Start(t)
	url := strings.Replace(pg.NewDatabase(t), "postgres://shoal@", "postgres://shoal:pw-not-for-logs@", 1)
	s := startServer(t, serverOpts{Config: fastJobsConfig + "store: " + url + "\n"})
	createCluster(t, s, "pg-cluster", "--max-instances", "1", "--idle-time-before-scale-down", "60")
	file := writeJobFile(t, "type: command\ncommand: echo hello from postgres\ncompute: azureml:pg-cluster\n")
	first := submitJob(t, s, file)
	waitJob(t, s, first, 60*time.Second, "Completed")
	s.restart()
	if j := waitJob(t, s, first, 10*time.Second, "Completed"); j.AttemptCount != 1 {
		t.Errorf("after a restart: %s", j)
	}
	second := submitJob(t, s, file)
	waitJob(t, s, second, 60*time.Second, "Completed")
	if log := jobLog(t, s, second); !strings.Contains(log, "hello from postgres") {
		t.Errorf("log %q", log)
	}
	if strings.Contains(s.log(), "pw-not-for-logs") {
		t.Error("the store URL's password is in the server's log")
	}
	if !strings.Contains(s.log(), "store opened") {
		t.Error("the server's log does not say which store it opened")
	}
}

// A store URL's password stays off the server's command line, which every
// process on the host reads (/proc/PID/cmdline), jobs included: as root
// `--store` with a password is refused before anything starts, and
// SHOAL_STORE takes the URL instead; not as root it is a warning.
func TestServerStorePasswordOffTheCommandLine(t *testing.T) {
	t.Parallel()
	pg := testpg.Start(t)
	url := strings.Replace(pg.NewDatabase(t), "postgres://shoal@", "postgres://shoal:pw-not-for-cmdline@", 1)
	if os.Geteuid() == 0 {
		dir := t.TempDir()
		// Bounded: a server that is not refused would run until killed.
		ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, shoalBin, "server", "--listen", freeAddr(t), "--data-dir", filepath.Join(dir, "data"), "--store", url)
		cmd.Env = childEnv(dir)
		out, err := cmd.CombinedOutput()
		errOut, code := string(out), cmd.ProcessState.ExitCode()
		if err == nil || ctx.Err() != nil || !strings.Contains(errOut, "--store: a password on the command line is readable by every process on this host, including jobs: put the URL in SHOAL_STORE") || strings.Contains(errOut, "pw-not-for-cmdline") {
			t.Errorf("the server as root with a password in --store: exit %d, %s", code, errOut)
		}
		if _, err := os.Stat(filepath.Join(dir, "data")); err == nil {
			t.Error("the refused server made its data dir")
		}
		s := startServer(t, serverOpts{Config: fastJobsConfig, Env: []string{"SHOAL_STORE=" + url}})
		cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", s.cmd.Process.Pid))
		if err != nil || strings.Contains(string(cmdline), "pw-not-for-cmdline") {
			t.Errorf("the server's command line: %q %v", cmdline, err)
		}
		if !strings.Contains(s.log(), "store opened") || !strings.Contains(s.log(), "postgres://") || strings.Contains(s.log(), "pw-not-for-cmdline") {
			t.Errorf("the server on SHOAL_STORE: %s", s.logTail())
		}
		return
	}
	s := startServer(t, serverOpts{Config: fastJobsConfig, Args: []string{"--store", url}})
	if !strings.Contains(s.log(), "--store: a password on the command line is readable by every process on this host") {
		t.Errorf("no warning about the password on the command line: %s", s.logTail())
	}
}
