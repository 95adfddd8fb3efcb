package cli

import (
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/shoal-ml/shoal/agent"
)

func newAgentCommand(g *globals) *cobra.Command {
	var cfg agent.Config
	var joinToken string
	cmd := &cobra.Command{
		Use:   "agent",
		Short: "Run the node agent (started by a provider on each node)",
		Long: `Run the node agent. A provider starts it on each node with the server URL, the
node ID and a work directory; the single-use join token comes in the environment
variable SHOAL_JOIN_TOKEN so that it never shows in the process list.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if joinToken != "" {
				cfg.JoinToken = joinToken
			} else {
				cfg.JoinToken = os.Getenv("SHOAL_JOIN_TOKEN")
			}
			os.Unsetenv("SHOAL_JOIN_TOKEN") // jobs must not inherit it
			if strings.HasPrefix(cfg.WorkDir, "~/") {
				if home, err := os.UserHomeDir(); err == nil {
					cfg.WorkDir = home + cfg.WorkDir[1:]
				}
			}
			cfg.Logger = slog.New(slog.NewTextHandler(g.stderr, nil))
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return agent.Run(ctx, cfg)
		},
	}
	f := cmd.Flags()
	f.StringVar(&cfg.ServerURL, "server", "", "Shoal server URL")
	f.StringVar(&cfg.NodeID, "node-id", "", "the node this agent is")
	f.StringVar(&cfg.WorkDir, "work-dir", "", "working directory of the node")
	f.StringVar(&cfg.GPUDevices, "gpus", "", "the GPU devices of this node on its host (e.g. 0,1): its jobs see only these (CUDA_VISIBLE_DEVICES)")
	f.StringVar(&joinToken, "join-token", "", "the one-time join token (prefer SHOAL_JOIN_TOKEN: other users can read a process's arguments)")
	f.StringVar(&cfg.Address, "address", "127.0.0.1", "address other nodes reach this node at")
	f.BoolVar(&cfg.PreemptOnSignal, "preempt-on-sigterm", false, "SIGTERM means the machine is being taken back (a Slurm pilot preempted, cancelled or at its time limit): tell the server and end the ranks as preempted")
	f.DurationVar(&cfg.OrphanTimeout, "orphan-timeout", agent.DefaultOrphanTimeout, "exit when nothing runs and the server has not answered for this long")
	return cmd
}
