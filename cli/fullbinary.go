package cli

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/shoal-ml/shoal/cli/cmdutil"
)

// Side makes the commands that run the server, the agent, the simulator
// and the store's own tools: they link the server's packages, so the
// CLI's binary (cmd/shoal) has stand-ins for them (FullBinaryCommands)
// and the full binary (cmd/shoal-server, through cli/full) the real ones.
type Side func(g *cmdutil.Globals) []*cobra.Command

// FullBinaryName is the full binary's file name: installed beside
// `shoal`, or on the PATH.
const FullBinaryName = "shoal-server"

// SideCommand names one of the full binary's commands and its help line,
// for the CLI's stand-in; cli/full's test holds the list to its commands.
type SideCommand struct{ Name, Short string }

// SideCommands are the full binary's own commands. Every process of the
// CLI runs the init of every package it links (client-go's scheme, the
// SQLite driver, prometheus...: about 10 ms on a quiet machine), so they
// live in another binary, and `shoal server` still works: it becomes
// `shoal-server server` with the same arguments.
var SideCommands = []SideCommand{
	{"admin", "Back up, restore and move a server's store (run where the store is reachable)"},
	{"agent", "Run the node agent (started by a provider on each node)"},
	{"server", "Run the Shoal control plane with embedded defaults (SQLite, local provider)"},
	{"sim", "Replay a job trace through Shoal's scheduler and autoscaler: cost against queue wait per idle policy"},
}

// Exec replaces this process with program run with args (argv[0]
// included) and the environment: syscall.Exec, set apart for tests.
type Exec func(program string, args []string) error

// FullBinaryCommands are the stand-ins for SideCommands: each hands the
// command line's arguments (Globals.Args), unparsed, to the full binary
// through exec, under this program's name (argv[0]) so that a process
// list still shows `shoal server`.
// A nil exec (the CLI run in-process, by tests) makes them fail rather
// than replace the test's process.
func FullBinaryCommands(exec Exec) Side {
	return func(g *cmdutil.Globals) []*cobra.Command {
		var cmds []*cobra.Command
		for _, s := range SideCommands {
			cmds = append(cmds, &cobra.Command{
				Use:   s.Name,
				Short: s.Short,
				// The full binary parses the flags (and answers --help);
				// the CLI does not know them.
				DisableFlagParsing: true,
				RunE: func(cmd *cobra.Command, _ []string) error {
					if exec == nil {
						return fmt.Errorf("`shoal %s` runs in the full binary (%s), not in-process", s.Name, FullBinaryName)
					}
					program, err := FindFullBinary()
					if err != nil {
						return fmt.Errorf("`shoal %s`: %w", s.Name, err)
					}
					argv0 := "shoal"
					if len(os.Args) > 0 {
						argv0 = os.Args[0]
					}
					return exec(program, append([]string{argv0}, g.Args...))
				},
			})
		}
		return cmds
	}
}

// FindFullBinary is the full binary: shoal-server beside this
// executable, else on the PATH. One that is this very file (the CLI
// copied under the full binary's name) is refused: exec'ing it would loop.
func FindFullBinary() (string, error) {
	self, selfErr := os.Executable()
	var candidates []string
	if selfErr == nil {
		candidates = append(candidates, filepath.Join(filepath.Dir(self), FullBinaryName))
	}
	if p, err := exec.LookPath(FullBinaryName); err == nil {
		candidates = append(candidates, p)
	}
	for _, p := range candidates {
		st, err := os.Stat(p)
		if err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
			continue
		}
		if selfErr == nil {
			if me, err := os.Stat(self); err == nil && os.SameFile(me, st) {
				return "", fmt.Errorf("%s is this CLI itself, not the full binary: build it with go build -o %s ./cmd/shoal-server", p, p)
			}
		}
		return p, nil
	}
	where := "beside this program"
	if selfErr == nil {
		where = "in " + filepath.Dir(self)
	}
	return "", errors.New("it runs in Shoal's full binary, " + FullBinaryName + ", found neither " + where + " nor on the PATH: install it beside shoal (go build -o " + FullBinaryName + " ./cmd/shoal-server)")
}

// SyscallExec is Exec for a real process.
func SyscallExec(program string, args []string) error {
	return syscall.Exec(program, args, os.Environ())
}
