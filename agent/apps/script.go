package apps

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

// Script is a setup script of a compute instance (Azure's
// setup_scripts.creation_script, run once when the instance is created,
// and startup_script, run at every start): a file or an inline command.
type Script struct {
	// Name names the script in the log and in errors:
	// "creation_script" or "startup_script".
	Name string
	// Path is a script file, relative to the home (or absolute), run with
	// bash. It may lead out of the home with "..": the instance is the
	// user's machine. It wins over Command when both are set.
	Path string
	// Command is an inline command, run with bash -c.
	Command string
	// Timeout bounds the run; 0 means none.
	Timeout time.Duration
	// Credential is the OS account the script runs as (the instance
	// user's); nil runs it as the agent's own user.
	Credential *syscall.Credential
	// Start starts the script's process: in the instance's network
	// namespace when it has one of its own; cmd.Start when nil.
	Start func(*exec.Cmd) error
}

// ScriptResult is how a script ended.
type ScriptResult struct {
	// ExitCode is the script's exit code, or -1 when it did not run, was
	// killed or timed out.
	ExitCode int
	// TimedOut says the script ran out of time and was killed.
	TimedOut bool
	// Err is set when the script could not run, failed, timed out or was
	// stopped; its text says which, naming the script.
	Err error
	// Log is the file the output went to.
	Log            string
	Started, Ended time.Time
}

// RunScript runs a setup script to its end, in home, with env (the
// agent's environment when nil), appending its output (stdout and stderr,
// interleaved as written) to logPath after a line naming it, and a line
// saying how it ended. A script that outlives Timeout, or ctx, is ended
// with its whole process tree: SIGTERM, then SIGKILL after 5 s. Processes
// a script leaves running in the background when it succeeds are left
// alone, as they would be on a virtual machine; they stop with the
// instance.
func RunScript(ctx context.Context, s Script, home string, env []string, logPath string) (res ScriptResult) {
	res = ScriptResult{Log: logPath, Started: time.Now(), ExitCode: -1}
	defer func() { res.Ended = time.Now() }()
	name := s.Name
	if name == "" {
		name = "setup script"
	}
	log, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		res.Err = fmt.Errorf("%s: opening its log: %w", name, err)
		return res
	}
	defer log.Close()
	fail := func(err error) ScriptResult {
		res.Err = err
		fmt.Fprintf(log, "== %s failed: %v\n", name, err)
		return res
	}
	shell := "/bin/bash"
	if _, err := os.Stat(shell); err != nil {
		shell = "/bin/sh" // the script may still be sh-compatible
	}
	var argv []string
	switch {
	case s.Path != "":
		p := s.Path
		if !filepath.IsAbs(p) {
			p = filepath.Join(home, p)
		}
		fmt.Fprintf(log, "== %s: %s %s (timeout %s), started %s\n", name, shell, p, timeoutText(s.Timeout), res.Started.UTC().Format(time.RFC3339))
		switch scriptKind(shell, p, s.Credential) {
		case scriptMissing:
			return fail(fmt.Errorf("%s: script %s not found on the instance (a relative path is taken from the home, %s)", name, s.Path, home))
		case scriptDir:
			return fail(fmt.Errorf("%s: %s is a directory, not a script", name, s.Path))
		}
		argv = []string{shell, p}
	case strings.TrimSpace(s.Command) != "":
		fmt.Fprintf(log, "== %s: %s -c %q (timeout %s), started %s\n", name, shell, s.Command, timeoutText(s.Timeout), res.Started.UTC().Format(time.RFC3339))
		argv = []string{shell, "-c", s.Command}
	default:
		fmt.Fprintf(log, "== %s\n", name)
		return fail(fmt.Errorf("%s has neither a path nor a command", name))
	}
	tree := newTree("script")
	cmd := command(argv, home, env, tree, log, s.Credential)
	if err := startCmd(s.Start, cmd); err != nil {
		return fail(fmt.Errorf("%s could not start: %w", name, err))
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var timeout <-chan time.Time
	if s.Timeout > 0 {
		t := time.NewTimer(s.Timeout)
		defer t.Stop()
		timeout = t.C
	}
	select {
	case werr := <-done:
		if werr != nil {
			res.ExitCode = cmd.ProcessState.ExitCode()
			return fail(fmt.Errorf("%s %s", name, exitText(werr)))
		}
		res.ExitCode = 0
		fmt.Fprintf(log, "== %s succeeded in %s\n", name, time.Since(res.Started).Round(time.Millisecond))
		return res
	case <-timeout:
		res.TimedOut = true
		_ = stopTree(cmd.Process.Pid, tree, killGrace, done)
		return fail(fmt.Errorf("%s timed out after %s and was killed", name, s.Timeout))
	case <-ctx.Done():
		_ = stopTree(cmd.Process.Pid, tree, killGrace, done)
		return fail(fmt.Errorf("%s was stopped before its end: %w", name, context.Cause(ctx)))
	}
}

func timeoutText(d time.Duration) string {
	if d <= 0 {
		return "none"
	}
	return d.String()
}

// What a script path names, as the script's account sees it.
const (
	scriptFile = iota
	scriptMissing
	scriptDir
)

// scriptKind tells whether p is missing or a directory, looked at as the
// script's account (cred) would: the agent (root) must not tell a user
// whether a path only root can see exists.
func scriptKind(shell, p string, cred *syscall.Credential) int {
	if cred == nil {
		switch st, err := os.Stat(p); {
		case err != nil:
			return scriptMissing
		case st.IsDir():
			return scriptDir
		}
		return scriptFile
	}
	cmd := exec.Command(shell, "-c", `if [ -d "$1" ]; then exit 4; elif [ ! -e "$1" ]; then exit 3; fi`, "check", p)
	cmd.Dir = "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee) && ee.ExitCode() == 4:
		return scriptDir
	case err != nil:
		return scriptMissing
	}
	return scriptFile
}
