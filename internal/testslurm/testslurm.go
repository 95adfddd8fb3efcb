// Package testslurm starts a real Slurm cluster for a test: Debian's
// munged, slurmctld and one slurmd, each on private ports, sockets and
// state directories under the test's temp dir, so that the slurm provider
// is tested against the real daemons and commands. The slurmd declares
// more CPUs and memory than the machine has (SlurmdParameters=
// config_overrides): pilots only sleep and run small jobs. It needs root
// (slurmd runs jobs as their users) and the Debian packages slurmctld,
// slurmd, slurm-client and munge, which the test command installs.
package testslurm

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/shoal-ml/shoal/internal/testenv"
	"github.com/shoal-ml/shoal/internal/testhosts"
)

// Cluster is a running Slurm cluster of one partition ("shoal") on one
// node.
type Cluster struct {
	// Conf is the slurm.conf to use as SLURM_CONF.
	Conf string
	// Dir holds the cluster's state, logs and sockets.
	Dir string
	// Partition and Node name the partition and its node.
	Partition, Node string
	// CPUs and MemoryMB are what the node declares.
	CPUs, MemoryMB int
}

// Binaries are the Slurm and MUNGE programs the cluster runs.
var Binaries = []string{"/usr/sbin/munged", "/usr/sbin/slurmctld", "/usr/sbin/slurmd", "/usr/bin/sbatch", "/usr/bin/squeue", "/usr/bin/scancel", "/usr/bin/sinfo"}

// New starts a cluster whose node has cpus CPUs and memMB megabytes.
// Without root or the packages the test skips (fails under
// SHOAL_TEST_REQUIRE_ALL). Everything it starts — the daemons and every
// job — goes at cleanup. Each of extra is a slurm.conf line added (a
// bench's scheduler tuning, say), after the defaults so that it wins.
func New(t testhosts.T, cpus, memMB int, extra ...string) *Cluster {
	t.Helper()
	testenv.Root(t, "runs slurmd, which starts jobs as their users")
	testenv.Files(t, "Slurm and MUNGE", "apt-get install slurmctld slurmd slurm-client munge", Binaries...)
	dir := t.TempDir()
	// Slurm's daemons refuse state and spool dirs other users can write;
	// t.TempDir's are private already.
	for _, d := range []string{"state", "spool", "log"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatalf("%v", err)
		}
	}
	suffix := make([]byte, 3)
	rand.Read(suffix)
	c := &Cluster{Dir: dir, Conf: filepath.Join(dir, "slurm.conf"), Partition: "shoal", Node: fmt.Sprintf("sn%x", suffix), CPUs: cpus, MemoryMB: memMB}
	key := make([]byte, 1024)
	rand.Read(key)
	keyFile := filepath.Join(dir, "munge.key")
	if err := os.WriteFile(keyFile, key, 0o600); err != nil {
		t.Fatalf("%v", err)
	}
	sock := filepath.Join(dir, "munge.sock")
	t.Cleanup(func() { c.stop() })
	run(t, "/usr/sbin/munged", "--force", "--key-file="+keyFile, "--socket="+sock,
		"--pid-file="+filepath.Join(dir, "munged.pid"), "--seed-file="+filepath.Join(dir, "munge.seed"),
		"--log-file="+filepath.Join(dir, "log", "munged.log"))
	host, _ := os.Hostname()
	ctldPort, dPort := freePort(t), freePort(t)
	conf := fmt.Sprintf(`ClusterName=shoal%[9]x
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=%[2]d
SlurmdPort=%[3]d
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=%[4]s
CredType=cred/munge
StateSaveLocation=%[1]s/state
SlurmdSpoolDir=%[1]s/spool
SlurmctldPidFile=%[1]s/slurmctld.pid
SlurmdPidFile=%[1]s/slurmd.pid
SlurmctldLogFile=%[1]s/log/slurmctld.log
SlurmdLogFile=%[1]s/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU_Memory
DefMemPerCPU=100
SlurmdParameters=config_overrides
ReturnToService=2
MpiDefault=none
SwitchType=switch/none
KillWait=5
MinJobAge=60
InactiveLimit=0
NodeName=%[5]s NodeHostname=%[6]s NodeAddr=127.0.0.1 CPUs=%[7]d RealMemory=%[8]d State=UNKNOWN
PartitionName=shoal Nodes=%[5]s Default=YES MaxTime=INFINITE State=UP
`, dir, ctldPort, dPort, sock, c.Node, host, cpus, memMB, suffix)
	for _, l := range extra {
		conf += l + "\n"
	}
	if err := os.WriteFile(c.Conf, []byte(conf), 0o644); err != nil {
		t.Fatalf("%v", err)
	}
	run(t, "/usr/sbin/slurmctld", "-f", c.Conf)
	run(t, "/usr/sbin/slurmd", "-f", c.Conf, "-N", c.Node)
	deadline := time.Now().Add(30 * time.Second)
	for {
		state, err := c.nodeState()
		if err == nil && state == "idle" {
			return c
		}
		if time.Now().After(deadline) {
			t.Fatalf("slurmd did not come up (state %q, %v); logs in %s", state, err, filepath.Join(dir, "log"))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// Command returns a Slurm command run against the cluster.
func (c *Cluster) Command(name string, args ...string) *exec.Cmd {
	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), "SLURM_CONF="+c.Conf)
	return cmd
}

// LocationYAML is a server config's `locations:` entry for a slurm
// location on the cluster, its pilots' work dirs under workDir.
func (c *Cluster) LocationYAML(name, workDir string) string {
	return fmt.Sprintf("  - name: %s\n    provider: slurm\n    slurm: {partition: %s, conf: %s, work_dir: %s}\n", name, c.Partition, c.Conf, workDir)
}

// Jobs returns the ids and states of the cluster's jobs that Slurm
// still lists.
func (c *Cluster) Jobs() (map[int]string, error) {
	out, err := c.Command("squeue", "--json").Output()
	if err != nil {
		return nil, fmt.Errorf("squeue: %w", err)
	}
	var doc struct {
		Jobs []struct {
			ID    int             `json:"job_id"`
			State json.RawMessage `json:"job_state"`
		} `json:"jobs"`
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		return nil, err
	}
	jobs := map[int]string{}
	for _, j := range doc.Jobs {
		var s string
		if json.Unmarshal(j.State, &s) != nil {
			var l []string
			json.Unmarshal(j.State, &l)
			s = strings.Join(l, "+")
		}
		jobs[j.ID] = s
	}
	return jobs, nil
}

// nodeState is the slurmd node's state as sinfo reports it.
func (c *Cluster) nodeState() (string, error) {
	out, err := c.Command("sinfo", "--json").Output()
	if err != nil {
		return "", err
	}
	var doc struct {
		Nodes []struct {
			Name  string          `json:"name"`
			State json.RawMessage `json:"state"`
		} `json:"nodes"`
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		return "", err
	}
	for _, n := range doc.Nodes {
		if n.Name == c.Node {
			var s string
			if json.Unmarshal(n.State, &s) != nil {
				var l []string
				json.Unmarshal(n.State, &l)
				s = strings.ToLower(strings.Join(l, "+"))
			}
			return s, nil
		}
	}
	return "", fmt.Errorf("node %s not listed", c.Node)
}

// stop cancels every job, then stops the daemons and anything left.
func (c *Cluster) stop() {
	if _, err := os.Stat(filepath.Join(c.Dir, "slurmctld.pid")); err == nil {
		c.Command("scancel", "--partition", c.Partition).Run()
		deadline := time.Now().Add(10 * time.Second)
		for time.Now().Before(deadline) {
			if jobs, err := c.Jobs(); err != nil || !anyLive(jobs) {
				break
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	for _, pid := range []string{"slurmd.pid", "slurmctld.pid", "munged.pid"} {
		b, err := os.ReadFile(filepath.Join(c.Dir, pid))
		if err != nil {
			continue
		}
		if n, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && n > 1 {
			syscall.Kill(n, syscall.SIGKILL)
		}
	}
	// slurmstepd of jobs still running, and their processes.
	testhosts.KillUnder(c.Dir)
}

func anyLive(jobs map[int]string) bool {
	for _, s := range jobs {
		switch s {
		case "PENDING", "RUNNING", "COMPLETING", "CONFIGURING":
			return true
		}
	}
	return false
}

// run runs a daemon that forks into the background and returns.
func run(t testhosts.T, name string, args ...string) {
	t.Helper()
	if out, err := exec.Command(name, args...).CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
}

// freePort returns a TCP port nothing listens on now.
func freePort(t testhosts.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("%v", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
