// Package apps runs what a compute instance serves besides SSH: its setup
// scripts, the Jupyter notebook server (the built-in application when the
// host has Debian's jupyter-notebook) and its custom applications, given
// as commands. Processes run as the agent's OS user, in the instance's
// home, each in its own process group, with the environment the agent
// gives (which carries SHOAL_NODE_ID, so that the host provider finds and
// stops them with the instance).
package apps

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"
)

// Script is a setup script: a file (Path, relative to the home) or an
// inline Command.
type Script struct {
	Name    string // "creation_script" or "startup_script", for the log
	Path    string
	Command string
	Timeout time.Duration
}

// ScriptResult is how a script ended.
type ScriptResult struct {
	ExitCode int
	TimedOut bool
	// Err is set when the script could not run, failed or timed out; its
	// text says which.
	Err            error
	Started, Ended time.Time
}

// killGrace is the time between SIGTERM and SIGKILL for a script that ran
// out of time, and for applications being stopped.
const killGrace = 5 * time.Second

// RunScript runs a setup script to its end (or its timeout), appending its
// output to logPath after a line naming it.
func RunScript(ctx context.Context, s Script, home string, env []string, logPath string) ScriptResult {
	res := ScriptResult{Started: time.Now()}
	defer func() { res.Ended = time.Now() }()
	log, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		res.Err = fmt.Errorf("opening the setup log: %w", err)
		return res
	}
	defer log.Close()
	what := s.Command
	var cmd *exec.Cmd
	shell := "/bin/bash"
	if _, err := os.Stat(shell); err != nil {
		shell = "/bin/sh"
	}
	if s.Path != "" {
		p := s.Path
		if !filepath.IsAbs(p) {
			p = filepath.Join(home, p)
		}
		what = p
		if _, err := os.Stat(p); err != nil {
			res.Err = fmt.Errorf("%s: script %s not found in the instance: %w", s.Name, s.Path, err)
			fmt.Fprintf(log, "== %s %s: %v\n", s.Name, s.Path, res.Err)
			return res
		}
		cmd = exec.Command(shell, p)
	} else {
		cmd = exec.Command(shell, "-c", s.Command)
	}
	fmt.Fprintf(log, "== %s: %s (timeout %s) at %s\n", s.Name, what, s.Timeout, res.Started.UTC().Format(time.RFC3339))
	cmd.Dir, cmd.Env = home, env
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		res.Err = fmt.Errorf("%s: %w", s.Name, err)
		fmt.Fprintf(log, "== %s could not start: %v\n", s.Name, err)
		return res
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var timeout <-chan time.Time
	if s.Timeout > 0 {
		t := time.NewTimer(s.Timeout)
		defer t.Stop()
		timeout = t.C
	}
	var werr error
	select {
	case werr = <-done:
	case <-timeout:
		res.TimedOut = true
		werr = stopGroup(cmd.Process.Pid, done)
	case <-ctx.Done():
		werr = stopGroup(cmd.Process.Pid, done)
	}
	// Whatever the script left behind in its group goes with it.
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	var ee *exec.ExitError
	switch {
	case res.TimedOut:
		res.ExitCode = -1
		res.Err = fmt.Errorf("%s timed out after %s", s.Name, s.Timeout)
	case ctx.Err() != nil:
		res.ExitCode = -1
		res.Err = fmt.Errorf("%s was stopped: the instance is stopping", s.Name)
	case errors.As(werr, &ee):
		res.ExitCode = ee.ExitCode()
		res.Err = fmt.Errorf("%s exited with code %d", s.Name, res.ExitCode)
	case werr != nil:
		res.ExitCode = -1
		res.Err = fmt.Errorf("%s: %w", s.Name, werr)
	}
	if res.Err != nil {
		fmt.Fprintf(log, "== %s failed: %v\n", s.Name, res.Err)
	} else {
		fmt.Fprintf(log, "== %s succeeded in %s\n", s.Name, time.Since(res.Started).Round(time.Millisecond))
	}
	return res
}

// stopGroup sends SIGTERM to a process group, then SIGKILL after
// killGrace, and returns the leader's wait result.
func stopGroup(pid int, done <-chan error) error {
	_ = syscall.Kill(-pid, syscall.SIGTERM)
	select {
	case err := <-done:
		return err
	case <-time.After(killGrace):
		_ = syscall.Kill(-pid, syscall.SIGKILL)
		return <-done
	}
}
