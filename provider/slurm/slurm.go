// Package slurm is the `slurm` provider: a location's nodes are pilot
// jobs on an existing Slurm cluster. Provision submits a batch job
// (`sbatch`) that runs `shoal agent` with the node size's CPUs, memory and
// GPUs in the configured partition and account; Release cancels it
// (`scancel`); Alive asks `squeue`. The join token reaches the pilot in
// its environment, never on a command line.
//
// A pilot that Slurm preempts, cancels or stops at its time limit gets
// SIGTERM; its agent runs with --preempt-on-sigterm, so it tells the
// server its node is being taken back and stops its ranks as preempted:
// their jobs requeue without spending retries.
//
// Only the commands' machine-readable output is read: sbatch --parsable,
// squeue --json and sinfo --json (Slurm 21.08 or later).
package slurm

import (
	"context"
	"encoding/base64"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/shoal-ml/shoal/domain/catalog"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/node"
)

// Config configures a Provider.
type Config struct {
	// Partition and Account are sbatch's --partition and --account;
	// empty uses the cluster's defaults.
	Partition, Account string
	// SlurmConf, when set, is the SLURM_CONF the commands use.
	SlurmConf string
	// AgentBinary is the shoal binary as the cluster's nodes see it (a
	// shared filesystem, or the same path installed on every node);
	// default this process's executable.
	AgentBinary string
	// WorkDir holds the pilots' work dirs as the nodes see it; default
	// ~/.shoal/slurm of the user the server runs as.
	WorkDir string
	// TimeLimit is sbatch's --time for pilots ("" for the partition's).
	TimeLimit string
	// ExtraArgs are passed to sbatch as they are (--qos, --constraint).
	ExtraArgs []string
	// AgentArgs are added to each pilot's `shoal agent` command line.
	AgentArgs []string
	Logger    *slog.Logger
}

// Provider is the slurm provider of one location.
type Provider struct {
	cfg Config
	log *slog.Logger
}

var (
	_ node.Provider      = (*Provider)(nil)
	_ catalog.HostLister = (*Provider)(nil)
)

// New returns a provider, checking that the Slurm commands are there.
func New(cfg Config) (*Provider, error) {
	for _, bin := range []string{"sbatch", "scancel", "squeue", "sinfo"} {
		if _, err := exec.LookPath(bin); err != nil {
			return nil, fmt.Errorf("slurm provider: %s not found: install Slurm's client commands (apt-get install slurm-client) on the server's host", bin)
		}
	}
	if cfg.AgentBinary == "" {
		exe, err := os.Executable()
		if err != nil {
			return nil, err
		}
		cfg.AgentBinary = exe
	}
	if cfg.WorkDir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return nil, err
		}
		cfg.WorkDir = path.Join(home, ".shoal", "slurm")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Provider{cfg: cfg, log: cfg.Logger.With("provider", "slurm")}, nil
}

// Name returns "slurm".
func (p *Provider) Name() string { return "slurm" }

// command runs a Slurm command with the provider's SLURM_CONF and extra
// environment, returning its standard output. An error carries the
// command's own message (its standard error).
func (p *Provider) command(ctx context.Context, env []string, name string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = append(os.Environ(), env...)
	if p.cfg.SlurmConf != "" {
		cmd.Env = append(cmd.Env, "SLURM_CONF="+p.cfg.SlurmConf)
	}
	out, err := cmd.Output()
	if err != nil {
		msg := err.Error()
		if ee, ok := err.(*exec.ExitError); ok && len(ee.Stderr) > 0 {
			msg = strings.TrimSpace(string(ee.Stderr))
		}
		return nil, fmt.Errorf("%s: %s", name, msg)
	}
	return out, nil
}

// quote quotes s for a POSIX shell.
func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// Provision submits the node's pilot job. It returns once Slurm has
// accepted the job; the node joins when Slurm starts it. sbatch refusing
// the job (no such partition, a size no node of the partition can hold)
// is EQUOTA with Slurm's message: out of capacity, not worth retrying
// soon.
func (p *Provider) Provision(ctx context.Context, req node.ProvisionRequest) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	n := req.Node
	dir := path.Join(p.cfg.WorkDir, n.ID)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("slurm provider: %w", err)
	}
	args := []string{"--parsable", "--job-name", "shoal-" + n.ID, "--ntasks", "1",
		"--cpus-per-task", strconv.Itoa(max(n.VCPUs, 1)),
		"--output", path.Join(dir, "agent.log"), "--chdir", dir,
		// The pilot is the user's job: it sees the environment a job
		// submitted by hand would, and the join token in it.
		"--export", "ALL"}
	if p.cfg.Partition != "" {
		args = append(args, "--partition", p.cfg.Partition)
	}
	if p.cfg.Account != "" {
		args = append(args, "--account", p.cfg.Account)
	}
	if n.MemoryGB > 0 {
		args = append(args, "--mem", strconv.Itoa(int(n.MemoryGB*1024))+"M")
	}
	if n.GPUs > 0 {
		args = append(args, "--gres", "gpu:"+strconv.Itoa(n.GPUs))
	}
	if p.cfg.TimeLimit != "" {
		args = append(args, "--time", p.cfg.TimeLimit)
	}
	args = append(args, p.cfg.ExtraArgs...)
	args = append(args, "--wrap", p.script(req))
	env := []string{"SHOAL_JOIN_TOKEN=" + req.JoinToken}
	if len(req.ServerCA) > 0 {
		env = append(env, "SHOAL_SERVER_CA="+base64.StdEncoding.EncodeToString(req.ServerCA))
	}
	out, err := p.command(ctx, env, "sbatch", args...)
	if err != nil {
		os.RemoveAll(dir)
		return "", core.Errorf(core.EQUOTA, "Slurm refused the pilot job of node %s: %v", n.ID, err)
	}
	// --parsable prints "jobid" or "jobid;cluster".
	id, _, _ := strings.Cut(strings.TrimSpace(string(out)), ";")
	if _, err := strconv.Atoi(id); err != nil {
		return "", fmt.Errorf("slurm provider: sbatch answered %q, not a job id", out)
	}
	// A cluster without EnforcePartLimits takes a job its partition can
	// never run and leaves it pending: ask, and refuse it now instead.
	jid, _ := strconv.Atoi(id)
	if j, err := p.job(ctx, jid); err == nil && j != nil && j.state() == "PENDING" && neverRuns[j.Reason] {
		p.command(context.WithoutCancel(ctx), nil, "scancel", id)
		os.RemoveAll(dir)
		return "", core.Errorf(core.EQUOTA, "Slurm cannot run the pilot job of node %s in partition %q (%d CPUs, %g GB, %d GPUs): pending with reason %s",
			n.ID, p.cfg.Partition, max(n.VCPUs, 1), n.MemoryGB, n.GPUs, j.Reason)
	}
	p.log.Info("pilot submitted", "node", n.ID, "job", id)
	return id + "/" + n.ID, nil
}

// neverRuns are the reasons of a pending job that Slurm will not start
// until an administrator changes the cluster.
var neverRuns = map[string]bool{
	"PartitionConfig": true, "PartitionNodeLimit": true, "PartitionTimeLimit": true, "BadConstraints": true,
	"InvalidAccount": true, "InvalidQOS": true, "PartitionDown": true, "PartitionInactive": true,
}

// script is the pilot's batch script: the agent, reachable by the other
// nodes at the compute node's first address, with GPUs Slurm gave it
// (Slurm sets CUDA_VISIBLE_DEVICES itself for --gres=gpu).
func (p *Provider) script(req node.ProvisionRequest) string {
	n := req.Node
	dir := path.Join(p.cfg.WorkDir, n.ID)
	var extra strings.Builder
	for _, a := range p.cfg.AgentArgs {
		extra.WriteString(" " + quote(a))
	}
	return fmt.Sprintf(`addr=$(hostname -I 2>/dev/null | cut -d' ' -f1); exec %s agent --server %s --node-id %s --work-dir %s --address "${addr:-127.0.0.1}" --preempt-on-sigterm%s`,
		quote(p.cfg.AgentBinary), quote(req.ServerURL), quote(n.ID), quote(dir), extra.String())
}

// jobOf reads a ref ("<jobid>/<node id>") back.
func jobOf(ref string) (int, bool) {
	s, _, _ := strings.Cut(ref, "/")
	id, err := strconv.Atoi(s)
	return id, err == nil && id > 0
}

// Release cancels the node's pilot job and removes its work dir; a pilot
// already gone is released.
func (p *Provider) Release(ctx context.Context, n *node.Node) error {
	if n == nil {
		return nil
	}
	id, ok := jobOf(n.ProviderRef)
	if !ok {
		return nil
	}
	if _, err := p.command(ctx, nil, "scancel", strconv.Itoa(id)); err != nil &&
		!strings.Contains(err.Error(), "Invalid job id") && !strings.Contains(err.Error(), "already completing or completed") {
		return err
	}
	// scancel returns before slurmctld has acted: wait (briefly) until
	// the pilot no longer runs, so that a released node is not alive.
	deadline := time.Now().Add(releaseWait)
	for time.Now().Before(deadline) {
		j, err := p.job(ctx, id)
		if err != nil || j == nil || !j.live() {
			break
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	p.log.Info("pilot cancelled", "node", n.ID, "job", id)
	_ = os.RemoveAll(path.Join(p.cfg.WorkDir, n.ID))
	return nil
}

// releaseWait bounds how long Release waits for slurmctld to end a
// cancelled pilot.
const releaseWait = 10 * time.Second

// Alive reports whether the node's pilot is pending or running.
func (p *Provider) Alive(ctx context.Context, n *node.Node) (bool, error) {
	if n == nil {
		return false, nil
	}
	id, ok := jobOf(n.ProviderRef)
	if !ok {
		return false, nil
	}
	j, err := p.job(ctx, id)
	if err != nil || j == nil {
		return false, err
	}
	return j.live(), nil
}

// PilotState returns the Slurm state of the node's pilot ("RUNNING",
// "PREEMPTED", "TIMEOUT", ...) and Slurm's reason, or "" once Slurm has
// forgotten the job.
func (p *Provider) PilotState(ctx context.Context, n *node.Node) (state, reason string, err error) {
	id, ok := jobOf(n.ProviderRef)
	if !ok {
		return "", "", nil
	}
	j, err := p.job(ctx, id)
	if err != nil || j == nil {
		return "", "", err
	}
	return j.state(), j.Reason, nil
}

// job returns Slurm's record of job id, nil when Slurm does not know it.
func (p *Provider) job(ctx context.Context, id int) (*sqJob, error) {
	out, err := p.command(ctx, nil, "squeue", "--json", "--jobs", strconv.Itoa(id))
	if err != nil {
		if strings.Contains(err.Error(), "Invalid job id") {
			return nil, nil
		}
		return nil, err
	}
	jobs, err := parseSqueue(out)
	if err != nil {
		return nil, err
	}
	// Some Slurm versions answer with every job whatever --jobs says.
	for i := range jobs {
		if jobs[i].ID == id {
			return &jobs[i], nil
		}
	}
	return nil, nil
}

// Hosts lists the partition's nodes with their CPUs, memory and GPUs,
// unusable when Slurm says they are down, drained or failing.
func (p *Provider) Hosts(ctx context.Context) ([]*catalog.Host, error) {
	args := []string{"--json"}
	if p.cfg.Partition != "" {
		args = append(args, "--partition", p.cfg.Partition)
	}
	out, err := p.command(ctx, nil, "sinfo", args...)
	if err != nil {
		return nil, err
	}
	nodes, err := parseSinfo(out)
	if err != nil {
		return nil, err
	}
	hosts := make([]*catalog.Host, 0, len(nodes))
	for _, sn := range nodes {
		if p.cfg.Partition != "" && len(sn.Partitions) > 0 && !contains(sn.Partitions, p.cfg.Partition) {
			continue // older sinfo ignores --partition with --json
		}
		h := &catalog.Host{Name: sn.Name, Address: sn.Address, Kind: "provider", VCPUs: int(sn.CPUs),
			MemoryGB: float64(sn.RealMemory) / 1024, GPUs: gresGPUs(sn.Gres), State: catalog.HostReady}
		if h.Address == "" {
			h.Address = sn.Name
		}
		if why := sn.unusable(); why != "" {
			h.State, h.Reason = catalog.HostUnusable, why
		}
		hosts = append(hosts, h)
	}
	return hosts, nil
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
