// Command scale measures one `shoal server` (a child process, SQLite)
// carrying many nodes and a long queue: N in-process fake agents join a
// static cluster and heartbeat over the real agent HTTP protocol at the
// real interval, M jobs wait in a queue, and it reports the server's RSS
// and CPU at steady state, p99 of compute list and job show, the time
// from a job's submission to the autoscaler's scale-up decision, and the
// time from a restart (kill -9) to serving again. Run it with
// bench/scale.sh.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/shoal-ml/shoal/bench/internal/ports"
	"github.com/shoal-ml/shoal/bench/internal/procs"
	"github.com/shoal-ml/shoal/client"
	"github.com/shoal-ml/shoal/domain/node"
)

var (
	bin       = flag.String("bin", "", "the shoal binary (required)")
	nodes     = flag.Int("nodes", 10000, "fake agents joined to the static cluster")
	jobs      = flag.Int("jobs", 100000, "jobs waiting in the queue")
	steady    = flag.Duration("steady", 30*time.Second, "how long the CPU is measured at steady state")
	workers   = flag.Int("workers", 32, "concurrent requests while setting up")
	decisions = flag.Int("decisions", 50, "submissions timed to their scale-up decision (each to an elastic cluster of its own)")
	profile   = flag.String("profile", "", "write the server's heap and a 10 s CPU profile at steady state, and its log, into this directory (go tool pprof reads the profiles)")
	curve     = flag.String("curve", "", "comma-separated node counts (e.g. 1000,5000,10000,20000): a fresh server for each, measured at steady state only, and a table of RSS, heap, CPU and bytes per node")
	against   = flag.String("baseline-bin", "", "another shoal binary (e.g. built from main) measured the same way in the same run, each point beside this one's (with --curve)")
	gogcs     = flag.String("gogc", "", "comma-separated GOGC values for the servers (\"default\" is the server's own); each binary is measured with each (the bench's own GOGC is never passed on)")
	lease     = flag.Duration("node-lease", 0, "the servers' node_lease (0: the server's default, 10s); agents sync every third of it, so the fleet's sync rate is nodes / (lease / 3)")
	pin       = flag.Bool("pin", runtime.NumCPU() >= 2, "run the server on CPU 0 and this bench (its fake agents and clients) on the other CPUs (taskset), so that the figures are the server's; on by default with 2 CPUs or more")
)

type server struct {
	bin             string
	gogc            string // the server's GOGC; "" leaves the server's default
	cmd             *exec.Cmd
	url, token, dir string
	addr            string
	pprofAddr       string // the server's --pprof-listen: its heap's figures and profiles
}

func (s *server) start() time.Duration {
	began := time.Now()
	// The nodes live beside the data dir, in the bench's folder, opened
	// (0711) for the accounts work runs as when the server is root.
	_ = os.Chmod(s.dir, 0o711)
	args := []string{"server", "--listen", s.addr, "--data-dir", filepath.Join(s.dir, "data"), "--nodes-dir", filepath.Join(s.dir, "nodes"), "--config", filepath.Join(s.dir, "server.yml")}
	if s.pprofAddr != "" {
		args = append(args, "--pprof-listen", s.pprofAddr)
	}
	s.cmd = exec.Command(s.bin, args...)
	if *pin {
		// taskset execs the server: the process (and its pid) is the
		// server's, on CPU 0 alone; its children (local agents) too.
		s.cmd = exec.Command("taskset", append([]string{"-c", serverCPU, s.bin}, args...)...)
	}
	running = s
	s.cmd.Env = []string{"HOME=" + s.dir}
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, "GOGC=") && !strings.HasPrefix(e, "HOME=") {
			s.cmd.Env = append(s.cmd.Env, e)
		}
	}
	if s.gogc != "" {
		s.cmd.Env = append(s.cmd.Env, "GOGC="+s.gogc)
	}
	logf, _ := os.OpenFile(filepath.Join(s.dir, "server.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	s.cmd.Stdout, s.cmd.Stderr = logf, logf
	if err := s.cmd.Start(); err != nil {
		fatalf("%v", err)
	}
	for {
		if t, err := os.ReadFile(filepath.Join(s.dir, "data", "admin.token")); err == nil && len(t) > 0 {
			s.token = strings.TrimSpace(string(t))
			if st, _ := s.get("/api/v1/workspaces/default/computes"); st == 200 {
				return time.Since(began)
			}
		}
		if time.Since(began) > 5*time.Minute {
			fatalf("the server did not start within 5 minutes; see %s", filepath.Join(s.dir, "server.log"))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (s *server) do(method, path string, body any) (int, []byte) {
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, s.url+path, rd)
	req.Header.Set("Authorization", "Bearer "+s.token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, []byte(err.Error())
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

func (s *server) get(path string) (int, []byte) { return s.do("GET", path, nil) }

// usage reads the server's RSS (bytes) and CPU time so far.
func (s *server) usage() (int64, time.Duration) {
	pid := s.cmd.Process.Pid
	st, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	var rss int64
	for _, line := range strings.Split(string(st), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			rss = kb * 1024
		}
	}
	stat, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+2:]))
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	stt, _ := strconv.ParseInt(f[12], 10, 64)
	return rss, time.Duration(ut+stt) * (time.Second / 100) // USER_HZ = 100
}

func parallel(n int, fn func(i int)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range *workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				fn(i)
			}
		}()
	}
	wg.Wait()
}

func pct(ds []time.Duration, p int) time.Duration {
	slices.Sort(ds)
	return ds[min(len(ds)-1, len(ds)*p/100)]
}

func main() {
	flag.Parse()
	if *bin == "" {
		log.Fatal("--bin is required")
	}
	vs := variants()
	fmt.Println(pinning())
	if *curve == "" {
		checkFiles(*nodes)
		for _, v := range vs {
			fmt.Printf("== %s\n", v.label)
			prof := *profile
			if prof != "" && len(vs) > 1 {
				prof = filepath.Join(prof, v.slug())
			}
			point(v, *nodes, prof, true)
		}
		return
	}
	var sizes []int
	for _, f := range strings.Split(*curve, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			log.Fatalf("--curve: %q is not a positive number of nodes", f)
		}
		checkFiles(n)
		sizes = append(sizes, n)
	}
	var rows []curveRow
	for _, n := range sizes {
		for _, v := range vs {
			fmt.Printf("== %s, %d nodes\n", v.label, n)
			prof := ""
			if *profile != "" {
				prof = filepath.Join(*profile, fmt.Sprintf("%s-%d", v.slug(), n))
			}
			rows = append(rows, curveRow{v: v, nodes: n, steady: point(v, n, prof, false)})
		}
	}
	printCurve(rows, vs)
}

// point measures one server (variant v) carrying n nodes and the queue;
// full adds the latencies and the restart after the steady state.
func point(v variant, n int, profile string, full bool) steadyState {
	http.DefaultTransport.(*http.Transport).MaxIdleConnsPerHost = n + 100
	dir, _ := os.MkdirTemp("", "shoal-scale-")
	defer os.RemoveAll(dir)
	if profile != "" {
		// The server's log beside its profiles: why nodes were lost,
		// what failed.
		defer func() {
			os.MkdirAll(profile, 0o700)
			if b, err := os.ReadFile(filepath.Join(dir, "server.log")); err == nil {
				os.WriteFile(filepath.Join(profile, "server.log"), b, 0o600)
			}
		}()
	}
	defer killLeftovers(dir)
	addr := ports.Restartable()
	conf := `locations:
  - name: local
    provider: local
  - name: lab
    provider: static
`
	if *lease > 0 {
		conf += fmt.Sprintf("node_lease: %s\n", *lease)
	}
	os.WriteFile(filepath.Join(dir, "server.yml"), []byte(conf), 0o600)
	// A failed measure (fatalf) ends the server and its agents too.
	cleanup = func() {
		if s := running; s != nil && s.cmd != nil && s.cmd.Process != nil {
			s.cmd.Process.Kill()
		}
		killLeftovers(dir)
		os.RemoveAll(dir)
	}
	defer func() { cleanup = nil }()
	s := &server{bin: v.bin, gogc: v.gogc, dir: dir, addr: addr, url: "http://" + addr, pprofAddr: ports.Restartable()}
	s.start()
	defer func() { s.cmd.Process.Kill(); s.cmd.Wait() }()
	for _, c := range []struct {
		name string
		doc  map[string]any
	}{
		{"fleet", map[string]any{"size": "Standard_DS3_v2", "location": "lab", "max_instances": n}},
		{"backlog", map[string]any{"size": "Standard_DS3_v2", "location": "lab", "max_instances": 1}},
	} {
		if st, b := s.do("PUT", "/api/v1/workspaces/default/computes/"+c.name, c.doc); st >= 300 {
			fatalf("create %s: %d %s", c.name, st, b)
		}
	}

	// What the server holds with neither queue nor nodes, then with the
	// queue: the differences divided say what a queued job and a node
	// cost.
	base := s.mark()

	// The queue first: submissions while 10,000 nodes heartbeat are
	// slower, and what is measured is the server carrying both.
	began := time.Now()
	var names sync.Map
	parallel(*jobs, func(i int) {
		st, b := s.do("POST", "/api/v1/workspaces/default/jobs", map[string]any{"command": "true", "compute": "backlog"})
		if st != 201 {
			fatalf("submit %d: %d %s", i, st, b)
		}
		if i%500 == 0 {
			var j struct {
				Name string `json:"name"`
			}
			json.Unmarshal(b, &j)
			names.Store(i, j.Name)
		}
	})
	queued := time.Since(began)
	fmt.Printf("%d jobs queued in %s (%.0f/s)\n", *jobs, queued.Round(time.Millisecond), float64(*jobs)/queued.Seconds())
	withQueue := s.mark()

	// The fleet: fake agents join and heartbeat as real ones do.
	began = time.Now()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var syncs, syncErrors atomic.Int64
	joinSlots := make(chan struct{}, 12)
	parallel(n, func(i int) {
		st, b := s.do("POST", "/api/v1/workspaces/default/computes/fleet/nodes", nil)
		if st != 201 {
			fatalf("add node %d: %d %s", i, st, b)
		}
		var jc struct {
			NodeID    string `json:"node_id"`
			JoinToken string `json:"join_token"`
		}
		json.Unmarshal(b, &jc)
		a := client.NewAgentClient(s.url, jc.JoinToken)
		// A join is anonymous until its token is checked, and the server
		// admits at most 16 of those at a time from one address.
		joinSlots <- struct{}{}
		resp, err := a.Join(ctx, node.JoinRequest{NodeID: jc.NodeID, Address: "127.0.0.1", Port: 10000 + i%50000})
		<-joinSlots
		if err != nil {
			fatalf("join %s: %v", jc.NodeID, err)
		}
		go func() {
			// As the real agent: the pace the join set, then the one each
			// sync's answer says (the lease follows the fleet's size).
			interval := resp.HeartbeatInterval
			for ctx.Err() == nil {
				sr, err := a.Sync(ctx, &node.AgentSyncRequest{}, interval)
				if err != nil {
					if syncErrors.Add(1) <= 3 && ctx.Err() == nil {
						// The first few say what goes wrong.
						log.Printf("sync error: %v", err)
					}
					a.Reconnect()
					time.Sleep(time.Second)
					continue
				}
				if sr.HeartbeatInterval > 0 {
					interval = sr.HeartbeatInterval
				}
				syncs.Add(1)
			}
		}()
	})
	joined := time.Since(began)
	fmt.Printf("%d fake agents joined in %s (%.0f/s)\n", n, joined.Round(time.Millisecond), float64(n)/joined.Seconds())

	// Steady state: nothing but heartbeats and the controller's passes.
	time.Sleep(10 * time.Second)
	_, cpu0 := s.usage()
	writes0 := s.readWrites()
	s0, t0 := syncs.Load(), time.Now()
	// The RSS is sampled twice a second through the window: it rises and
	// falls with the controller's passes, and one reading at the end
	// says little. The curve takes the maximum.
	var rssSamples []int64
	for time.Since(t0) < *steady {
		time.Sleep(500 * time.Millisecond)
		r, _ := s.usage()
		rssSamples = append(rssSamples, r)
	}
	rss1, cpu1 := s.usage()
	rssSamples = append(rssSamples, rss1)
	wall := time.Since(t0)
	cores := cpu1.Seconds() - cpu0.Seconds()
	slices.Sort(rssSamples)
	rssMax, rssMed := rssSamples[len(rssSamples)-1], rssSamples[len(rssSamples)/2]
	st := steadyState{rss: rssMax, cores: cores / wall.Seconds(), beats: float64(syncs.Load()-s0) / wall.Seconds(), mem: s.memStats()}
	fmt.Printf("steady state over %s: server CPU %.2f cores, RSS max %.0f MB, median %.0f MB, min %.0f MB (%d samples), %.0f heartbeats/s, %d sync errors\n",
		wall.Round(time.Second), st.cores, mb(rssMax), mb(rssMed), mb(rssSamples[0]), len(rssSamples), st.beats, syncErrors.Load())
	fmt.Println(writeLine(writes0, s.readWrites()))
	fmt.Printf("server heap: %s\n", st.mem)
	st.growth = growthOf(base, withQueue, s.mark(), *jobs, n)
	fmt.Printf("growth: %s\n", st.growth)

	if profile != "" {
		os.MkdirAll(profile, 0o700)
		for file, path := range map[string]string{"heap.pb.gz": "/debug/pprof/heap", "cpu.pb.gz": "/debug/pprof/profile?seconds=10", "goroutine.txt": "/debug/pprof/goroutine?debug=1"} {
			s.saveProfile(filepath.Join(profile, file), path)
		}
		fmt.Printf("profiles in %s (go tool pprof -top %s/heap.pb.gz)\n", profile, profile)
	}
	if !full {
		return st
	}

	var list, show []time.Duration
	var sample []string
	names.Range(func(_, v any) bool { sample = append(sample, v.(string)); return true })
	for i := range 200 {
		t := time.Now()
		if st, b := s.get("/api/v1/workspaces/default/computes"); st != 200 {
			fatalf("compute list: %d %s", st, b)
		}
		list = append(list, time.Since(t))
		t = time.Now()
		if st, b := s.get("/api/v1/workspaces/default/jobs/" + sample[i%len(sample)]); st != 200 {
			fatalf("job show: %d %s", st, b)
		}
		show = append(show, time.Since(t))
	}
	fmt.Printf("compute list: p50 %s p99 %s; job show: p50 %s p99 %s\n", pct(list, 50), pct(list, 99), pct(show, 50), pct(show, 99))

	// Submission to the autoscaler's decision, on an elastic cluster.
	// decide is each submission's time to its decision; posted, the
	// part of it the submission's own request took.
	var decide, posted []time.Duration
	passesBefore, writesBefore := s.readPasses(), s.readWrites()
	var profiled sync.WaitGroup
	if profile != "" {
		// What the decisions wait for: the server's CPU over their
		// first 20 s, and an execution trace of their first 5 s
		// (go tool trace -pprof=sched shows where goroutines waited
		// to run).
		profiled.Add(2)
		go func() {
			defer profiled.Done()
			s.saveProfile(filepath.Join(profile, "decisions.cpu.pb.gz"), "/debug/pprof/profile?seconds=20")
		}()
		go func() {
			defer profiled.Done()
			s.saveProfile(filepath.Join(profile, "decisions.trace"), "/debug/pprof/trace?seconds=5")
		}()
	}
	for i := range *decisions {
		name := fmt.Sprintf("elastic%d", i)
		s.do("PUT", "/api/v1/workspaces/default/computes/"+name, map[string]any{"size": "Standard_DS3_v2", "max_instances": 1})
		// The cluster is ready (Succeeded) before the clock starts: the
		// measure is from a job's submission to the decision for it.
		for {
			_, b := s.get("/api/v1/workspaces/default/computes/" + name)
			if strings.Contains(string(b), `"provisioning_state":"Succeeded"`) {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		t := time.Now()
		s.do("POST", "/api/v1/workspaces/default/jobs", map[string]any{"command": "true", "compute": name})
		posted = append(posted, time.Since(t))
		for {
			_, b := s.get("/api/v1/workspaces/default/computes/" + name + "/events")
			if strings.Contains(string(b), `"kind":"scaled"`) {
				break
			}
			if time.Since(t) > time.Minute {
				fatalf("%s: no scale-up decision within a minute", name)
			}
			time.Sleep(2 * time.Millisecond)
		}
		decide = append(decide, time.Since(t))
		// Its node (a local agent) goes with it, before the next
		// submission is timed: 50 agents would otherwise share the
		// cores with the server.
		if st, b := s.do("DELETE", "/api/v1/workspaces/default/computes/"+name, nil); st >= 300 {
			log.Printf("delete %s: %d %s", name, st, b)
		}
	}
	// The slowest, by submission: a tail from one cause (the first
	// submission, a pass that wrote many reasons) shows as a pattern.
	order := make([]int, len(decide))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return int(decide[b] - decide[a]) })
	var slow []string
	for _, i := range order[:min(5, len(order))] {
		slow = append(slow, fmt.Sprintf("#%d %s (its POST %s)", i+1, decide[i].Round(100*time.Microsecond), posted[i].Round(100*time.Microsecond)))
	}
	fmt.Printf("slowest decisions: %s\n", strings.Join(slow, ", "))
	fmt.Println(passLine(passesBefore, s.readPasses()))
	fmt.Println(writeLine(writesBefore, s.readWrites()))
	profiled.Wait()
	fmt.Printf("submit → scale-up decision (as its event), %d submissions: p50 %s, p99 %s, max %s\n",
		len(decide), pct(decide, 50).Round(100*time.Microsecond), pct(decide, 99).Round(100*time.Microsecond), pct(decide, 100).Round(100*time.Microsecond))

	// Restart: kill -9 and start on the same store.
	s.cmd.Process.Kill()
	s.cmd.Wait()
	restart := s.start()
	fmt.Printf("restart (kill -9) → serving compute list: %s\n", restart.Round(time.Millisecond))
	time.Sleep(5 * time.Second)
	_, body := s.get("/api/v1/workspaces/default/computes/fleet")
	var c struct {
		Counts struct {
			Idle int `json:"idle_node_count"`
		} `json:"node_state_counts"`
	}
	json.Unmarshal(body, &c)
	fmt.Printf("after the restart: %d of %d fleet nodes idle (agents reconnected)\n", c.Counts.Idle, n)
	return st
}

// running is the server being measured, and cleanup what a failed measure
// ends (fatalf): log.Fatal alone would leave the server running.
var (
	running *server
	cleanup func()
)

// fatalf ends the server being measured, then the bench.
func fatalf(format string, args ...any) {
	if cleanup != nil {
		cleanup()
	}
	log.Fatalf(format, args...)
}

// checkFiles refuses a size whose connections this process cannot open:
// each fake agent holds one (and the server one for each, under the same
// limit). Go raises the soft limit to the hard one at start.
func checkFiles(n int) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return
	}
	if need := uint64(n) + 1000; lim.Max < need {
		log.Fatalf("%d nodes need %d open files in this process and in the server, and the hard limit is %d: raise it (ulimit -Hn %d, as root) or measure fewer nodes", n, need, lim.Max, need)
	}
}

// killLeftovers kills the elastic clusters' local agents, whose command
// lines name dir: they outlive the server on purpose (nodes survive a
// control-plane restart) and would otherwise keep running after the bench.
func killLeftovers(dir string) {
	for _, pid := range procs.Agents(dir) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
}

// saveProfile writes what the server's pprof endpoint path serves to
// file (readable by this user alone). A profile that cannot be had is
// logged, not fatal: the profiles are extras, and the decisions' are
// taken on goroutines of their own.
func (s *server) saveProfile(file, path string) {
	resp, err := http.Get("http://" + s.pprofAddr + path)
	if err != nil {
		log.Printf("profile %s: %v", path, err)
		return
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		// Not a profile (e.g. "cpu profiling already in use"): say so
		// rather than save it as one.
		log.Printf("profile %s: %s %s", path, resp.Status, b)
		return
	}
	if err := os.WriteFile(file, b, 0o600); err != nil {
		log.Printf("profile %s: %v", path, err)
	}
}
