// Command cli measures a `shoal` CLI process's start: the sum of its
// packages' init times as the Go runtime reports them
// (GODEBUG=inittrace=1) and the process's wall time, for commands that
// need no server. With --baseline BIN, that binary's processes alternate
// with --bin's, so both are measured under the same load. With
// --submit N it measures instead N job submissions, one process each,
// against a running server with warm nodes, beside the baseline and
// sbatch on a real Slurm cluster (submit.go). Run it with bench/cli.sh.
package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"log"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"time"
)

// commands are the CLI invocations measured: none reaches a server.
var commands = [][]string{{"version"}, {"job", "create", "--help"}}

func main() {
	bin := flag.String("bin", "", "the shoal CLI to measure (required)")
	baseline := flag.String("baseline", "", "a baseline shoal binary, measured alternately in the same run")
	runs := flag.Int("runs", 50, "processes per command and binary")
	submit := flag.Int("submit", 0, "measure N job submissions, one `shoal job create` process each, instead of the start alone")
	server := flag.String("server", "", "with --submit: the full binary run as `server` (default: --bin)")
	baseServer := flag.String("baseline-server", "", "with --submit: the baseline's full binary (default: --baseline)")
	chunk := flag.Int("chunk", 10, "with --submit: submissions in a row before the next submitter's turn")
	nodes := flag.Int("nodes", 4, "with --submit: warm local nodes of each server")
	slurm := flag.Bool("slurm", true, "with --submit: also measure sbatch on a real slurmctld and slurmd (root, Debian's slurm packages)")
	var slurmConf lines
	flag.Var(&slurmConf, "slurm-conf", "with --submit: a slurm.conf line added to the test cluster's, e.g. SchedulerParameters=batch_sched_delay=0 (repeatable)")
	flag.Parse()
	if *bin == "" {
		log.Fatal("--bin is required")
	}
	if *submit > 0 {
		o := submitOptions{cli: *bin, server: *server, baseCLI: *baseline, baseServer: *baseServer,
			jobs: *submit, chunk: max(1, *chunk), nodes: *nodes, slurm: *slurm, slurmConf: slurmConf}
		if o.server == "" {
			o.server = o.cli
		}
		if o.baseServer == "" {
			o.baseServer = o.baseCLI
		}
		runSubmit(o)
		return
	}
	bins := []string{*bin}
	names := []string{"this tree"}
	if *baseline != "" {
		bins = append(bins, *baseline)
		names = append(names, "baseline")
	}
	load, _ := os.ReadFile("/proc/loadavg")
	fmt.Printf("runs %d per command and binary; load average %s\n", *runs, strings.Join(strings.Fields(string(load))[:3], " "))
	fmt.Printf("%-22s %-10s %14s %14s %8s\n", "command", "binary", "init sum p50", "wall p50", "inits")
	for _, args := range commands {
		inits := make([][]float64, len(bins))
		walls := make([][]float64, len(bins))
		counts := make([]int, len(bins))
		for range *runs {
			for i, b := range bins {
				sum, n, wall, err := measure(b, args)
				if err != nil {
					log.Fatalf("%s %s: %v", b, strings.Join(args, " "), err)
				}
				inits[i] = append(inits[i], sum)
				walls[i] = append(walls[i], wall)
				counts[i] = n
			}
		}
		for i := range bins {
			fmt.Printf("%-22s %-10s %11.2f ms %11.2f ms %8d\n", strings.Join(args, " "), names[i], median(inits[i]), median(walls[i]), counts[i])
		}
		if len(bins) == 2 {
			fmt.Printf("%-22s %-10s %13.1fx %13.1fx\n", strings.Join(args, " "), "ratio", median(inits[1])/median(inits[0]), median(walls[1])/median(walls[0]))
		}
	}
}

// measure runs one process and returns the sum of its packages' init
// clock times (ms), how many packages ran an init, and its wall time (ms).
func measure(bin string, args []string) (float64, int, float64, error) {
	cmd := exec.Command(bin, args...)
	// No server is reached; the address only keeps a client config out.
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1", "SHOAL_SERVER=http://127.0.0.1:1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	start := time.Now()
	if err := cmd.Run(); err != nil {
		return 0, 0, 0, fmt.Errorf("%v: %s", err, stderr.String())
	}
	wall := float64(time.Since(start).Microseconds()) / 1000
	sum, n := initSum(stderr.Bytes())
	return sum, n, wall, nil
}

// initSum adds the clock times of inittrace's lines:
// "init PKG @0.012 ms, 0.004 ms clock, 0 bytes, 0 allocs".
func initSum(trace []byte) (float64, int) {
	var sum float64
	n := 0
	sc := bufio.NewScanner(bytes.NewReader(trace))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 7 || f[0] != "init" || f[6] != "clock," {
			continue
		}
		v, err := strconv.ParseFloat(f[4], 64)
		if err != nil {
			continue
		}
		sum += v
		n++
	}
	return sum, n
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	return s[len(s)/2]
}

// lines is a repeatable string flag.
type lines []string

func (l *lines) String() string { return strings.Join(*l, "\n") }

func (l *lines) Set(v string) error {
	*l = append(*l, v)
	return nil
}
