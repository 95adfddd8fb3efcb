// Package agentcmd is `shoal agent`, the node agent's command; named so
// that the agent package it runs keeps its name.
package agentcmd

import (
	"encoding/base64"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/shoal-ml/shoal/agent"
	"github.com/shoal-ml/shoal/agent/sshd"
	"github.com/shoal-ml/shoal/cli/cmdutil"
)

// NewCommand is `shoal agent`: the node agent, which a provider starts on
// each node. The package is agentcmd so that the agent package it
// runs keeps its own name.
func NewCommand(g *cmdutil.Globals) *cobra.Command {
	var cfg agent.Config
	var joinToken, caFile string
	var insecure string
	var cacheGB, dataGB float64
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
			ca, err := serverCA(caFile)
			if err != nil {
				return err
			}
			cfg.ServerCA = ca
			if strings.HasPrefix(cfg.WorkDir, "~/") {
				if home, err := os.UserHomeDir(); err == nil {
					cfg.WorkDir = home + cfg.WorkDir[1:]
				}
			}
			for _, r := range strings.Split(insecure, ",") {
				if r = strings.TrimSpace(r); r != "" {
					cfg.InsecureRegistries = append(cfg.InsecureRegistries, r)
				}
			}
			if cacheGB < 0 {
				return fmt.Errorf("--image-cache-gb %g must not be negative", cacheGB)
			}
			cfg.ImageCacheBytes = int64(cacheGB * (1 << 30))
			if dataGB <= 0 {
				return fmt.Errorf("--data-cache-gb %g must be positive", dataGB)
			}
			cfg.DataCacheBytes = int64(dataGB * (1 << 30))
			cfg.Logger = slog.New(slog.NewTextHandler(g.Stderr, nil))
			defer startCPUProfile(cfg.NodeID)()
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
	f.StringVar(&caFile, "server-ca", "", "the CA certificate (PEM file) of the server's HTTPS, when not a system root (or SHOAL_SERVER_CA: the PEM, or it base64-encoded)")
	f.BoolVar(&cfg.PreemptOnSignal, "preempt-on-sigterm", false, "SIGTERM means the machine is being taken back (a Slurm pilot preempted, cancelled or at its time limit): tell the server and end the ranks as preempted")
	f.DurationVar(&cfg.OrphanTimeout, "orphan-timeout", agent.DefaultOrphanTimeout, "exit when nothing runs and the server has not answered for this long")
	f.StringVar(&cfg.Containers, "containers", os.Getenv("SHOAL_AGENT_CONTAINERS"), `"off": run nothing in containers (env SHOAL_AGENT_CONTAINERS); empty: find an engine for jobs that name an image`)
	f.StringVar(&cfg.NodeImage, "node-image", os.Getenv("SHOAL_NODE_IMAGE"), "this agent runs in a container of this image (a kubernetes node's pod): ranks of this image run here as processes, others are refused (env SHOAL_NODE_IMAGE)")
	f.StringVar(&cfg.ContainerHost, "container-host", os.Getenv("SHOAL_AGENT_CONTAINER_HOST"), "the container engine's address, unix:///PATH (env SHOAL_AGENT_CONTAINER_HOST); empty: Docker's socket when it answers, else podman's system service (/run/podman/podman.sock), else a podman service of the node's own on the host's image store")
	f.StringVar(&cfg.ContainerDir, "container-dir", os.Getenv("SHOAL_AGENT_CONTAINER_DIR"), "where the node's podman service keeps its socket, configuration and log (env SHOAL_AGENT_CONTAINER_DIR; default WORK_DIR/podman)")
	f.StringVar(&cfg.ContainerStore, "container-store", os.Getenv("SHOAL_AGENT_CONTAINER_STORE"), "the image store of the node's podman service (env SHOAL_AGENT_CONTAINER_STORE); empty: podman's default (/var/lib/containers/storage as root), shared by the host's nodes and its podman CLI")
	f.StringVar(&insecure, "insecure-registries", os.Getenv("SHOAL_AGENT_INSECURE_REGISTRIES"), "registries (host:port, comma-separated) the node's podman service reaches over plain HTTP (env SHOAL_AGENT_INSECURE_REGISTRIES)")
	f.Float64Var(&cacheGB, "image-cache-gb", 20, "the node's images are kept within this size, least recently used removed first")
	f.Float64Var(&dataGB, "data-cache-gb", 20, "the node's data cache (inputs from datastores and URLs, fetched once for every job of the node) is kept within this size, least recently used removed first; a larger input fails its job")
	cmd.AddCommand(newAgentSFTPServerCommand(), newAgentInstallCommand())
	return cmd
}

// serverCA reads the server's CA: the file, else SHOAL_SERVER_CA (PEM,
// or base64 of it so that it fits one line), else none.
func serverCA(file string) ([]byte, error) {
	if file != "" {
		b, err := os.ReadFile(file)
		if err != nil {
			return nil, fmt.Errorf("--server-ca: %w", err)
		}
		return b, nil
	}
	v := strings.TrimSpace(os.Getenv("SHOAL_SERVER_CA"))
	if v == "" {
		return nil, nil
	}
	if strings.HasPrefix(v, "-----BEGIN") {
		return []byte(v + "\n"), nil
	}
	b, err := base64.StdEncoding.DecodeString(v)
	if err != nil {
		return nil, fmt.Errorf("SHOAL_SERVER_CA is neither a PEM certificate nor base64 of one")
	}
	return b, nil
}

// newAgentSFTPServerCommand is what an agent's SSH server starts, as the
// login's account, for each SFTP session: SFTP on standard input and
// output, relative paths in the home.
func newAgentSFTPServerCommand() *cobra.Command {
	return &cobra.Command{
		Use:    "sftp-server",
		Short:  "Serve SFTP on standard input and output (started by the agent's SSH server)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			home, err := os.UserHomeDir()
			if err != nil {
				home = "/"
			}
			return sshd.ServeStdio(home)
		},
	}
}

// newAgentInstallCommand copies this binary to a path: the init
// container of a kubernetes node's pod runs it from the agent image
// (FROM scratch: no cp) to put the agent into the pod's shared volume.
func newAgentInstallCommand() *cobra.Command {
	return &cobra.Command{
		Use:    "install DEST",
		Short:  "Copy this shoal binary to DEST, executable (a kubernetes node pod's init container)",
		Hidden: true,
		Args:   cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return installSelf(args[0])
		},
	}
}

// installSelf copies the running executable to dest (mode 0755),
// through a temporary file so that dest is never half written.
func installSelf(dest string) error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	src, err := os.Open(exe)
	if err != nil {
		return err
	}
	defer src.Close()
	tmp, err := os.CreateTemp(filepath.Dir(dest), ".shoal-install-")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := io.Copy(tmp, src); err != nil {
		tmp.Close()
		return fmt.Errorf("copy %s to %s: %w", exe, dest, err)
	}
	if err := tmp.Chmod(0o755); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), dest)
}
