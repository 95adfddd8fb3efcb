// Command agentstub stands in for `shoal agent` in the local provider's
// tests: it takes the same command line, insists on the join token in its
// environment, and runs until SIGTERM.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"
)

func main() {
	// Never outlive a crashed test run for long.
	time.AfterFunc(2*time.Minute, func() { os.Exit(3) })
	if len(os.Args) > 1 && os.Args[1] == "child" {
		// A process the agent started in its own process group (a job
		// that does not stop on SIGTERM).
		signal.Ignore(syscall.SIGTERM)
		for {
			time.Sleep(time.Hour)
		}
	}
	if len(os.Args) < 2 || os.Args[1] != "agent" {
		fmt.Fprintln(os.Stderr, "usage: agentstub agent --server URL --node-id ID --work-dir DIR [flags]")
		os.Exit(2)
	}
	fs := flag.NewFlagSet("agent", flag.ExitOnError)
	server := fs.String("server", "", "server URL")
	nodeID := fs.String("node-id", "", "node ID")
	workDir := fs.String("work-dir", "", "work dir")
	ignoreTerm := fs.Bool("ignore-term", false, "ignore SIGTERM")
	spawnChild := fs.Bool("spawn-child", false, "start a child that ignores SIGTERM and write its pid to <work-dir>/child.pid")
	exitAfter := fs.Duration("exit-after", 0, "exit on its own after this long")
	_ = fs.String("gpus", "", "the node's GPU devices (as shoal agent takes them)")
	fs.Parse(os.Args[2:])
	if os.Getenv("SHOAL_JOIN_TOKEN") == "" {
		fmt.Fprintln(os.Stderr, "agentstub: SHOAL_JOIN_TOKEN is not set")
		os.Exit(2)
	}
	if *server == "" || *nodeID == "" || *workDir == "" {
		fmt.Fprintln(os.Stderr, "agentstub: --server, --node-id and --work-dir are required")
		os.Exit(2)
	}
	term := make(chan os.Signal, 1)
	if *ignoreTerm {
		signal.Ignore(syscall.SIGTERM)
	} else {
		signal.Notify(term, syscall.SIGTERM)
	}
	if *spawnChild {
		cmd := exec.Command(os.Args[0], "child")
		if err := cmd.Start(); err != nil {
			fmt.Fprintln(os.Stderr, "agentstub:", err)
			os.Exit(1)
		}
		go cmd.Wait()
		pidFile := filepath.Join(*workDir, "child.pid")
		if err := os.WriteFile(pidFile+".tmp", fmt.Appendf(nil, "%d", cmd.Process.Pid), 0o600); err != nil {
			os.Exit(1)
		}
		os.Rename(pidFile+".tmp", pidFile)
	}
	fmt.Printf("agentstub: node %s started, server %s\n", *nodeID, *server)
	var exit <-chan time.Time
	if *exitAfter > 0 {
		exit = time.After(*exitAfter)
	}
	select {
	case <-term:
		fmt.Println("agentstub: SIGTERM, exiting")
	case <-exit:
		fmt.Println("agentstub: exiting on its own")
	}
}
