package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/shoal-ml/shoal/bench/internal/benchsrv"
	"github.com/shoal-ml/shoal/bench/internal/procs"
	"github.com/shoal-ml/shoal/internal/testhosts"
	"github.com/shoal-ml/shoal/internal/testslurm"
)

// submitter is one way to submit a job as a process of its own: a shoal
// CLI against its server, or sbatch against a Slurm cluster. Every
// submission's command writes the time its process started (date
// +%s%N) to a marker file of its own, which the bench compares with the
// time just before the submitting process was spawned.
type submitter struct {
	name string
	// command returns the process that submits job i, whose command
	// writes its start time to marker.
	command func(i int, marker string) *exec.Cmd
	// markers is the folder of the markers (writable by the jobs'
	// accounts).
	markers string
	// spawned[i] is when job i's submitting process was spawned (Unix
	// ns); -1 for a job not measured (a warm-up).
	spawned map[int]int64
	// busy is the wall time spent in this submitter's submissions, the
	// processes run back to back and to completion.
	busy time.Duration
	// walls are the measured submitting processes' wall times (ms).
	walls []float64
}

// submitOptions are --submit's settings.
type submitOptions struct {
	cli, server         string // this tree's CLI and full binary
	baseCLI, baseServer string // the baseline's ("" for none)
	jobs, chunk, nodes  int
	slurm               bool
	// slurmConf are slurm.conf lines added to testslurm's (tuning).
	slurmConf []string
}

// runSubmit measures N submissions, one process each, for this tree, the
// baseline and sbatch, alternating in chunks so that all see the same
// load, and prints jobs/s and submit → process start p50/p99.
func runSubmit(o submitOptions) {
	b := &testhosts.Program{}
	defer b.Done()
	ctx := context.Background()
	dir := b.TempDir()
	// 0711: the nodes' job accounts pass through to their markers.
	_ = os.Chmod(dir, 0o711)
	// Registered before the servers' stops, so it runs after them: local
	// nodes' agents outlive their server on purpose (nodes survive a
	// control-plane restart) and would otherwise load the machine after
	// the bench.
	b.Cleanup(func() {
		for _, pid := range procs.Agents(dir) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	var subs []*submitter
	shoal := func(name, cli, server string) {
		sdir := filepath.Join(dir, strings.ReplaceAll(name, " ", "-"))
		srv, c := benchsrv.Start(server, sdir, "", "", false)
		b.Cleanup(srv.Stop)
		benchsrv.MustCompute(ctx, c, "warm", o.nodes)
		s := newSubmitter(b, name, sdir)
		env := append(os.Environ(), "HOME="+sdir, "SHOAL_SERVER="+srv.URL, "SHOAL_TOKEN="+srv.Token, "SHOAL_WORKSPACE=default")
		s.command = func(i int, marker string) *exec.Cmd {
			// The YAML is written before the clock starts: what is
			// timed is the process, not the bench's file writes.
			f := filepath.Join(sdir, fmt.Sprintf("job-%d.yml", i))
			if err := os.WriteFile(f, []byte(jobYAML(marker)), 0o600); err != nil {
				b.Fatalf("%v", err)
			}
			cmd := exec.Command(cli, "job", "create", "--file", f, "--output", "none")
			cmd.Env = env
			return cmd
		}
		subs = append(subs, s)
	}
	shoal("this tree", o.cli, o.server)
	if o.baseCLI != "" {
		shoal("baseline", o.baseCLI, o.baseServer)
	}
	if o.slurm {
		cl := testslurm.New(b, 16, 64000, o.slurmConf...)
		s := newSubmitter(b, "sbatch", filepath.Join(dir, "slurm"))
		s.command = func(i int, marker string) *exec.Cmd {
			return cl.Command("sbatch", "--quiet", "--output=/dev/null", "--chdir="+s.markers, "--wrap", "date +%s%N > "+marker)
		}
		subs = append(subs, s)
	}
	// Two warm-up jobs each, waited for: the first job on a node (or a
	// Slurm node) pays for what later ones find ready.
	for _, s := range subs {
		for i := range 2 {
			s.submit(b, -1-i, false)
		}
		s.wait(b, []int{-1, -2})
	}
	load, _ := os.ReadFile("/proc/loadavg")
	for start := 0; start < o.jobs; start += o.chunk {
		for _, s := range subs {
			began := time.Now()
			for i := start; i < min(start+o.chunk, o.jobs); i++ {
				s.submit(b, i, true)
			}
			s.busy += time.Since(began)
		}
	}
	loadAfter, _ := os.ReadFile("/proc/loadavg")
	fmt.Printf("%d submissions each, one process per submission, in chunks of %d alternating; %d warm local node(s) per server", o.jobs, o.chunk, o.nodes)
	if o.slurm {
		fmt.Print("; Slurm: one node of 16 CPUs")
		if len(o.slurmConf) > 0 {
			fmt.Printf(", %s", strings.Join(o.slurmConf, " "))
		}
	}
	fmt.Println()
	fmt.Printf("load average before %s, after %s\n", loadFields(load), loadFields(loadAfter))
	fmt.Printf("%-10s %10s %16s %16s %16s\n", "submitter", "jobs/s", "process wall p50", "submit→start p50", "submit→start p99")
	ids := make([]int, o.jobs)
	for i := range ids {
		ids[i] = i
	}
	for _, s := range subs {
		started := s.wait(b, ids)
		lat := make([]float64, 0, len(ids))
		for _, i := range ids {
			lat = append(lat, float64(started[i]-s.spawned[i])/1e6)
		}
		fmt.Printf("%-10s %10.1f %13.1f ms %13.1f ms %13.1f ms\n", s.name, rate(o.jobs, s.busy), percentile(s.walls, 50), percentile(lat, 50), percentile(lat, 99))
	}
}

func newSubmitter(b *testhosts.Program, name, dir string) *submitter {
	s := &submitter{name: name, markers: filepath.Join(dir, "markers"), spawned: map[int]int64{}}
	// 0755 on purpose: the jobs, run as their own OS accounts, write their
	// start markers here (they name no secret).
	if err := os.MkdirAll(s.markers, 0o755); err != nil {
		b.Fatalf("%v", err)
	}
	// The jobs run as the nodes' accounts: they must be able to write.
	if err := os.Chmod(s.markers, 0o1777); err != nil {
		b.Fatalf("%v", err)
	}
	return s
}

func (s *submitter) marker(i int) string { return filepath.Join(s.markers, fmt.Sprintf("m%d", i)) }

// submit runs job i's submitting process to completion; timed records
// when it was spawned.
func (s *submitter) submit(b *testhosts.Program, i int, timed bool) {
	cmd := s.command(i, s.marker(i))
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = io.Discard, &stderr
	t := time.Now().UnixNano()
	if err := cmd.Run(); err != nil {
		b.Fatalf("%s: submission %d: %v: %s", s.name, i, err, stderr.String())
	}
	if timed {
		s.spawned[i] = t
		s.walls = append(s.walls, float64(time.Now().UnixNano()-t)/1e6)
	}
}

// wait waits (up to 2 minutes) until every job in ids has written its
// marker and returns their start times (Unix ns): a job that never
// starts stops the bench, as nothing may be lost.
func (s *submitter) wait(b *testhosts.Program, ids []int) map[int]int64 {
	started := map[int]int64{}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		for _, i := range ids {
			if _, ok := started[i]; ok {
				continue
			}
			if data, err := os.ReadFile(s.marker(i)); err == nil {
				if t, ok := parseMarker(data); ok {
					started[i] = t
				}
			}
		}
		if len(started) == len(ids) {
			return started
		}
		if time.Now().After(deadline) {
			b.Fatalf("%s: %d of %d jobs started within 2 minutes", s.name, len(started), len(ids))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// jobYAML is a trivial command job on the warm cluster whose process
// records its start time in marker.
func jobYAML(marker string) string {
	return "command: date +%s%N > " + marker + "\ncompute: azureml:warm\n"
}

// parseMarker reads `date +%s%N`'s output (Unix ns and a newline); a
// marker being written (empty or cut) is not ready.
func parseMarker(data []byte) (int64, bool) {
	s := string(data)
	if !strings.HasSuffix(s, "\n") {
		return 0, false
	}
	t, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil || t <= 0 {
		return 0, false
	}
	return t, true
}

// percentile is the nearest-rank p-th percentile of v (0 when empty).
func percentile(v []float64, p float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	k := int(math.Ceil(p/100*float64(len(s)))) - 1
	return s[max(0, min(k, len(s)-1))]
}

// rate is n jobs over d, in jobs per second.
func rate(n int, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return float64(n) / d.Seconds()
}

// loadFields is /proc/loadavg's three averages.
func loadFields(load []byte) string {
	f := strings.Fields(string(load))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}
