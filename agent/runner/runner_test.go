package runner

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

const testGrace = 300 * time.Millisecond

func task(t *testing.T, command string) Task {
	t.Helper()
	dir := t.TempDir()
	return Task{
		AttemptID: "att-1",
		JobName:   "job",
		Attempt:   1,
		Command:   command,
		Dir:       filepath.Join(dir, "work"),
		LogPath:   filepath.Join(dir, "logs", "user.log"),
		KillGrace: testGrace,
	}
}

func run(t *testing.T, tk Task) (Result, *Run) {
	t.Helper()
	r, err := Start(tk)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan Result, 1)
	go func() { done <- r.Wait() }()
	select {
	case res := <-done:
		return res, r
	case <-time.After(20 * time.Second):
		t.Fatal("run did not end")
		return Result{}, nil
	}
}

// waitGone waits until pid no longer exists: kill(pid, 0) fails with ESRCH
// (a zombie still counts as existing).
func waitGone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		err := syscall.Kill(pid, 0)
		if errors.Is(err, syscall.ESRCH) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("process %d still exists (kill: %v)", pid, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// assertGone checks, without waiting, that pid is gone: Wait has returned,
// so the whole tree must already be reaped.
func assertGone(t *testing.T, pid int) {
	t.Helper()
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("process %d still exists after Wait (kill: %v)", pid, err)
	}
}

// readPid waits for a file holding a pid, written by a test command.
func readPid(t *testing.T, path string) int {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		b, err := os.ReadFile(path)
		if err == nil && strings.HasSuffix(string(b), "\n") {
			pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
			if err != nil {
				t.Fatal(err)
			}
			return pid
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s not written", path)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestExitCodes(t *testing.T) {
	cases := []struct {
		command    string
		wantCode   int
		wantReason string
	}{
		{"true", 0, ReasonCompleted},
		{"exit 3", 3, ReasonFailed},
		{"kill -KILL $$", 128 + 9, ReasonFailed},
	}
	for _, c := range cases {
		t.Run(c.command, func(t *testing.T) {
			res, _ := run(t, task(t, c.command))
			if res.ExitCode != c.wantCode || res.Reason != c.wantReason {
				t.Errorf("got code %d reason %q, want %d %q", res.ExitCode, res.Reason, c.wantCode, c.wantReason)
			}
			if res.StartedAt.IsZero() || res.EndedAt.Before(res.StartedAt) {
				t.Errorf("times %v %v", res.StartedAt, res.EndedAt)
			}
		})
	}
}

func TestLogCapturesStdoutAndStderrAppending(t *testing.T) {
	tk := task(t, `echo to-stdout; echo to-stderr >&2; pwd`)
	if err := os.MkdirAll(filepath.Dir(tk.LogPath), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(tk.LogPath, []byte("earlier attempt\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	res, _ := run(t, tk)
	if res.Reason != ReasonCompleted {
		t.Fatalf("result %+v", res)
	}
	b, err := os.ReadFile(tk.LogPath)
	if err != nil {
		t.Fatal(err)
	}
	want := "earlier attempt\nto-stdout\nto-stderr\n" + tk.Dir + "\n"
	if string(b) != want {
		t.Errorf("log = %q, want %q", b, want)
	}

	// A new log is private.
	tk = task(t, "echo hi")
	run(t, tk)
	fi, err := os.Stat(tk.LogPath)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("log mode %o", fi.Mode().Perm())
	}
}

// readEnv parses a file written by `env`.
func readEnv(t *testing.T, path string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok {
			env[k] = v
		}
	}
	return env
}

func assertEnv(t *testing.T, env map[string]string, want map[string]string) {
	t.Helper()
	for k, v := range want {
		got, ok := env[k]
		switch {
		case v == "" && ok:
			t.Errorf("%s set to %q, want unset", k, got)
		case v != "" && got != v:
			t.Errorf("%s = %q, want %q", k, got, v)
		}
	}
}

func TestPyTorchEnvironment(t *testing.T) {
	t.Setenv("SHOAL_AGENT_SECRET", "do-not-leak")
	t.Setenv("LC_ALL", "C")
	tk := task(t, `env > "env_$LOCAL_RANK"`)
	tk.Distribution = "pytorch"
	tk.NodeCount, tk.Rank, tk.ProcessesPerNode = 2, 1, 2
	tk.MasterAddr, tk.MasterPort = "10.0.0.4", 29501
	tk.Env = map[string]string{"SHOAL_JOB_NAME": "job", "MY_VAR": "x y", "RANK": "overridden"}
	res, r := run(t, tk)
	if res.Reason != ReasonCompleted {
		t.Fatalf("result %+v", res)
	}
	if len(r.Pids()) != 2 {
		t.Errorf("pids %v", r.Pids())
	}
	for local, rank := range []string{"2", "3"} {
		env := readEnv(t, filepath.Join(tk.Dir, "env_"+strconv.Itoa(local)))
		assertEnv(t, env, map[string]string{
			"RANK":                 rank,
			"LOCAL_RANK":           strconv.Itoa(local),
			"WORLD_SIZE":           "4",
			"LOCAL_WORLD_SIZE":     "2",
			"NODE_RANK":            "1",
			"MASTER_ADDR":          "10.0.0.4",
			"MASTER_PORT":          "29501",
			"SHOAL_JOB_NAME":       "job",
			"MY_VAR":               "x y",
			"LC_ALL":               "C",
			"SHOAL_AGENT_SECRET":   "",
			"OMPI_COMM_WORLD_RANK": "",
		})
		if env["PATH"] == "" {
			t.Error("PATH not passed")
		}
	}
}

func TestMPIEnvironment(t *testing.T) {
	tk := task(t, `env > "env_$OMPI_COMM_WORLD_LOCAL_RANK"`)
	tk.Distribution = "mpi"
	tk.NodeCount, tk.Rank, tk.ProcessesPerNode = 2, 1, 2
	tk.MasterAddr, tk.MasterPort = "10.0.0.4", 6105
	res, _ := run(t, tk)
	if res.Reason != ReasonCompleted {
		t.Fatalf("result %+v", res)
	}
	for local, rank := range []string{"2", "3"} {
		env := readEnv(t, filepath.Join(tk.Dir, "env_"+strconv.Itoa(local)))
		assertEnv(t, env, map[string]string{
			"OMPI_COMM_WORLD_RANK":       rank,
			"OMPI_COMM_WORLD_SIZE":       "4",
			"OMPI_COMM_WORLD_LOCAL_RANK": strconv.Itoa(local),
			"OMPI_COMM_WORLD_LOCAL_SIZE": "2",
			"OMPI_COMM_WORLD_NODE_RANK":  "1",
			"AZ_BATCH_MASTER_NODE":       "10.0.0.4:6105",
			"AZ_BATCHAI_MPI_MASTER_NODE": "10.0.0.4",
			"WORLD_SIZE":                 "4",
			"RANK":                       rank,
			"LOCAL_RANK":                 strconv.Itoa(local),
			"NODE_RANK":                  "1",
		})
	}
}

func TestNoDistributionEnvironment(t *testing.T) {
	// A single process gets no distribution variables.
	tk := task(t, `env > env_single`)
	run(t, tk)
	assertEnv(t, readEnv(t, filepath.Join(tk.Dir, "env_single")), map[string]string{
		"RANK": "", "LOCAL_RANK": "", "WORLD_SIZE": "", "NODE_RANK": "", "MASTER_ADDR": "",
	})

	// Several processes without a distribution type still get their ranks.
	tk = task(t, `env > "env_$LOCAL_RANK"`)
	tk.ProcessesPerNode = 3
	res, _ := run(t, tk)
	if res.Reason != ReasonCompleted {
		t.Fatalf("result %+v", res)
	}
	for local := range 3 {
		assertEnv(t, readEnv(t, filepath.Join(tk.Dir, "env_"+strconv.Itoa(local))), map[string]string{
			"RANK": strconv.Itoa(local), "LOCAL_RANK": strconv.Itoa(local), "WORLD_SIZE": "3", "MASTER_ADDR": "",
		})
	}
}

// treeCommand starts a background grandchild `sleep 100`, records its pid,
// and keeps the shell alive while trapping TERM (the grandchild does not
// inherit the trap: TERM kills it, the shell needs the SIGKILL).
const treeCommand = `trap 'echo got TERM' TERM
sleep 100 &
echo $! > grandchild.pid
while :; do sleep 0.05; done`

func TestTimeoutKillsProcessTree(t *testing.T) {
	tk := task(t, treeCommand)
	tk.Timeout = 500 * time.Millisecond
	r, err := Start(tk)
	if err != nil {
		t.Fatal(err)
	}
	gc := readPid(t, filepath.Join(tk.Dir, "grandchild.pid"))
	res := r.Wait()
	if res.Reason != ReasonTimeout || res.ExitCode != 128+9 {
		t.Errorf("result %+v, want timeout by SIGKILL", res)
	}
	if d := res.EndedAt.Sub(res.StartedAt); d < tk.Timeout+testGrace {
		t.Errorf("ended after %v: the shell traps TERM, so only the SIGKILL after the grace ends it", d)
	}
	assertGone(t, r.Pids()[0])
	assertGone(t, gc)
	b, _ := os.ReadFile(tk.LogPath)
	if !strings.Contains(string(b), "got TERM") {
		t.Errorf("SIGTERM not delivered first; log %q", b)
	}
}

func TestStopCanceledKillsProcessTree(t *testing.T) {
	tk := task(t, treeCommand)
	r, err := Start(tk)
	if err != nil {
		t.Fatal(err)
	}
	gc := readPid(t, filepath.Join(tk.Dir, "grandchild.pid"))
	r.Stop(ReasonCanceled)
	r.Stop(ReasonPreempted) // a second Stop changes nothing
	res := r.Wait()
	if res.Reason != ReasonCanceled {
		t.Errorf("result %+v, want canceled", res)
	}
	assertGone(t, r.Pids()[0])
	assertGone(t, gc)
	r.Stop(ReasonPreempted) // after the end: no effect
	if again := r.Wait(); again != res {
		t.Errorf("Wait changed: %+v then %+v", res, again)
	}
}

func TestStopPreemptedGracefulExit(t *testing.T) {
	// A process that exits on TERM ends well before the grace.
	tk := task(t, `trap 'exit 0' TERM; echo $$ > ready.pid; while :; do sleep 0.05; done`)
	tk.KillGrace = 10 * time.Second
	r, err := Start(tk)
	if err != nil {
		t.Fatal(err)
	}
	readPid(t, filepath.Join(tk.Dir, "ready.pid"))
	r.Stop(ReasonPreempted)
	res := r.Wait()
	if res.Reason != ReasonPreempted || res.ExitCode != 0 {
		t.Errorf("result %+v", res)
	}
	if d := res.EndedAt.Sub(res.StartedAt); d > 5*time.Second {
		t.Errorf("graceful exit took %v", d)
	}
}

func TestIgnoredSIGTERMIsKilledAfterGrace(t *testing.T) {
	// The shell and its background child both ignore TERM.
	tk := task(t, `trap '' TERM
sleep 100 &
echo $! > grandchild.pid
wait`)
	r, err := Start(tk)
	if err != nil {
		t.Fatal(err)
	}
	gc := readPid(t, filepath.Join(tk.Dir, "grandchild.pid"))
	stopped := time.Now()
	r.Stop("")
	res := r.Wait()
	if d := time.Since(stopped); d < testGrace {
		t.Errorf("ended %v after Stop, before the grace", d)
	}
	if res.Reason != ReasonCanceled || res.ExitCode != 128+9 {
		t.Errorf("result %+v, want canceled by SIGKILL", res)
	}
	assertGone(t, r.Pids()[0])
	assertGone(t, gc)
}

func TestFailingProcessStopsSiblings(t *testing.T) {
	tk := task(t, `if [ "$LOCAL_RANK" = 0 ]; then sleep 0.2; exit 7; fi
echo $$ > sibling.pid
sleep 100`)
	tk.ProcessesPerNode = 2
	tk.KillGrace = 10 * time.Second // the sibling dies of SIGTERM, well before
	res, r := run(t, tk)
	if res.Reason != ReasonFailed || res.ExitCode != 7 {
		t.Errorf("result %+v, want failed with 7", res)
	}
	if d := res.EndedAt.Sub(res.StartedAt); d > 5*time.Second {
		t.Errorf("sibling not stopped: run took %v", d)
	}
	for _, pid := range r.Pids() {
		assertGone(t, pid)
	}
}

func TestOrphanLeftBehindIsReaped(t *testing.T) {
	// The shell exits 0 leaving a background process in its group.
	tk := task(t, `sleep 100 & echo $! > orphan.pid`)
	res, _ := run(t, tk)
	if res.Reason != ReasonCompleted || res.ExitCode != 0 {
		t.Errorf("result %+v", res)
	}
	assertGone(t, readPid(t, filepath.Join(tk.Dir, "orphan.pid")))
}

func TestStartValidates(t *testing.T) {
	for name, mod := range map[string]func(*Task){
		"empty command":      func(tk *Task) { tk.Command = " " },
		"no dir":             func(tk *Task) { tk.Dir = "" },
		"rank out of range":  func(tk *Task) { tk.NodeCount, tk.Rank = 2, 2 },
		"unknown dist":       func(tk *Task) { tk.Distribution = "horovod" },
		"multi-node no addr": func(tk *Task) { tk.Distribution, tk.NodeCount = "pytorch", 2 },
		"bad env":            func(tk *Task) { tk.Env = map[string]string{"A=B": "c"} },
	} {
		t.Run(name, func(t *testing.T) {
			tk := task(t, "true")
			mod(&tk)
			if r, err := Start(tk); err == nil {
				r.Wait()
				t.Error("Start succeeded")
			}
		})
	}
}

// A process's standard input is /dev/null (one the runner opened once
// and shares), read-only, for a direct program and a shell alike.
func TestStdinIsDevNull(t *testing.T) {
	for _, command := range []string{"readlink /proc/self/fd/0", "readlink /proc/self/fd/0 && cat"} {
		for range 2 {
			tk := task(t, command)
			res, _ := run(t, tk)
			if res.Reason != ReasonCompleted {
				t.Fatalf("%q: result %+v", command, res)
			}
			b, err := os.ReadFile(tk.LogPath)
			if err != nil {
				t.Fatal(err)
			}
			if string(b) != os.DevNull+"\n" {
				t.Fatalf("%q: stdin is %q, want %s", command, b, os.DevNull)
			}
		}
	}
	if f, err := devNull(); err != nil || f.Fd() == ^uintptr(0) {
		t.Fatalf("the shared /dev/null is closed (%v)", err)
	}
}
