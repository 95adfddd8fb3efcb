package slurm_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/domain/catalog"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/internal/testenv"
	"github.com/shoal-ml/shoal/internal/testslurm"
	"github.com/shoal-ml/shoal/provider/providertest"
	"github.com/shoal-ml/shoal/provider/slurm"
)

// shoalBin is the shoal binary the pilots run (the test binary has no
// `agent` command).
var shoalBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "slurm-test-")
	if err != nil {
		panic(err)
	}
	shoalBin = filepath.Join(dir, "shoal")
	if err := testenv.ServerBinary(shoalBin); err != nil {
		panic(err)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func newProvider(t *testing.T, c *testslurm.Cluster) *slurm.Provider {
	t.Helper()
	p, err := slurm.New(slurm.Config{Partition: c.Partition, SlurmConf: c.Conf, AgentBinary: shoalBin, WorkDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// The conformance suite every provider passes, against a real slurmctld
// and slurmd: a node is a pilot job, started when Slurm runs it.
func TestConformance(t *testing.T) {
	c := testslurm.New(t, 32, 64000)
	providertest.Run(t, providertest.Harness{
		New: func(t *testing.T) node.Provider {
			p := newProvider(t, c)
			t.Cleanup(func() { c.Command("scancel", "--partition", c.Partition).Run() })
			return p
		},
		Started: func(t *testing.T, p node.Provider, ref string) bool {
			node := &node.Node{ID: ref[strings.Index(ref, "/")+1:], ProviderRef: ref}
			deadline := time.Now().Add(20 * time.Second)
			for time.Now().Before(deadline) {
				if state, _, err := p.(*slurm.Provider).PilotState(context.Background(), node); err == nil && state == "RUNNING" {
					return true
				}
				time.Sleep(100 * time.Millisecond)
			}
			return false
		},
	})
}

// A pilot asks Slurm for the size's CPUs and memory in the location's
// partition, runs `shoal agent` with the join token in its environment
// only, and Hosts lists the partition's node with its capacity.
func TestPilotJob(t *testing.T) {
	c := testslurm.New(t, 8, 8192)
	p := newProvider(t, c)
	ctx := context.Background()
	n := providertest.NewNode("pilot")
	n.VCPUs, n.MemoryGB = 2, 0.5
	req := providertest.NewRequest(n)
	ref, err := p.Provision(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	n.ProviderRef = ref
	t.Cleanup(func() { p.Release(ctx, n) })
	id := ref[:strings.Index(ref, "/")]
	out, err := c.Command("scontrol", "show", "job", id).Output()
	if err != nil {
		t.Fatalf("scontrol: %v", err)
	}
	script, err := c.Command("scontrol", "write", "batch_script", id, "-").Output()
	if err != nil {
		t.Fatalf("scontrol write batch_script: %v", err)
	}
	job := string(out) + string(script)
	for _, want := range []string{"JobName=shoal-pilot", "Partition=shoal", "NumCPUs=2", "MinMemoryNode=512M", "agent --server", "--preempt-on-sigterm"} {
		if !strings.Contains(job, want) {
			t.Errorf("the pilot job lacks %q:\n%s", want, job)
		}
	}
	if strings.Contains(job, req.JoinToken) {
		t.Errorf("the join token is on the pilot's command line:\n%s", job)
	}
	hosts, err := p.Hosts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(hosts) != 1 || hosts[0].Name != c.Node || hosts[0].VCPUs != 8 || hosts[0].MemoryGB != 8 || hosts[0].State != catalog.HostReady {
		t.Fatalf("hosts = %+v; want %s with 8 CPUs and 8 GB, ready", hosts[0], c.Node)
	}
	// A size no node of the partition holds is refused: out of capacity
	// (EQUOTA) with Slurm's reason, not a pending pilot forever.
	big := providertest.NewNode("too-big")
	big.VCPUs = 64
	if _, err := p.Provision(ctx, providertest.NewRequest(big)); core.ErrorCode(err) != core.EQUOTA || !strings.Contains(err.Error(), "PartitionConfig") {
		t.Fatalf("a 64-CPU pilot on an 8-CPU partition: %v; want EQUOTA with Slurm's reason", err)
	}
	// A drained node is listed unusable with Slurm's reason.
	if out, err := c.Command("scontrol", "update", "NodeName="+c.Node, "State=DRAIN", "Reason=disk replaced").CombinedOutput(); err != nil {
		t.Fatalf("scontrol drain: %v %s", err, out)
	}
	hosts, err = p.Hosts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if hosts[0].State != catalog.HostUnusable || !strings.Contains(hosts[0].Reason, "disk replaced") {
		t.Fatalf("a drained node: %+v; want unusable, with Slurm's reason", hosts[0])
	}
}
