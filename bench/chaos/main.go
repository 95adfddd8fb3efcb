// Command chaos runs trials of a mixed job workload on a real server (a
// child process, SQLite, nodes of the local provider running real
// agents) while it injects faults at random moments from a seeded RNG —
// kill -9 of the server (restarted on the same store), kill -9 of agents,
// low-priority eviction storms (half the nodes at once), agents
// partitioned from the server (a proxy on their advertise_url), store
// errors (a failpoint compiled in with the failpoint build tag) and a full
// disk (the data dir is a small tmpfs, filled for a few seconds) — and
// after each trial checks invariants from the store: every job reached a
// terminal state; no attempt of a job ran at the same time as another; a
// job's retries were spent only by its own failures; no agent process
// leaked; quota use equals the live nodes; every change the server
// acknowledged has its audit record. It prints a table. By default it runs
// the full suite (20 trials of 1,000 jobs, a fault every 2 s on average);
// `go run ./bench/chaos` builds the server itself, bench/chaos.sh is the
// same.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/shoal-ml/shoal"
	"github.com/shoal-ml/shoal/api"
	"github.com/shoal-ml/shoal/bench/internal/ports"
)

var (
	bin      = flag.String("bin", "", "the shoal binary, built with -tags failpoint (default: built from this module into a temp dir)")
	trials   = flag.Int("trials", 20, "trials")
	jobs     = flag.Int("jobs", 1000, "jobs per trial")
	seed     = flag.Uint64("seed", 1, "the fault injector's seed")
	long     = flag.Bool("long", false, "the full suite (the defaults): 20 trials of 1,000 jobs, a fault every 2 s on average")
	every    = flag.Duration("every", 2*time.Second, "mean time between faults")
	settling = flag.Duration("settling", 3*time.Minute, "how long jobs have to end once the faults stop")
	keep     = flag.Bool("keep", false, "keep each trial's directory (server log, store) for a look afterwards")
	tmpfs    = flag.String("tmpfs-size", "512m", "size of the tmpfs the data dir is mounted on (disk-full faults fill it)")
)

// kinds of fault.
const (
	killServer = "kill -9 server"
	killAgent  = "kill -9 agent"
	evict      = "eviction storm"
	partition  = "agents partitioned"
	storeFault = "store errors"
	diskFull   = "disk full"
)

var kinds = []string{killServer, killAgent, evict, partition, storeFault, diskFull}

// proxy stands between the agents and the server (their advertise_url):
// a partition drops every connection and refuses new ones for a while.
type proxy struct {
	addr, target string
	mu           sync.Mutex
	cut          bool
	conns        map[net.Conn]bool
}

func newProxy(target string) *proxy {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	p := &proxy{addr: l.Addr().String(), target: target, conns: map[net.Conn]bool{}}
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			p.mu.Lock()
			if p.cut {
				p.mu.Unlock()
				c.Close()
				continue
			}
			p.conns[c] = true
			p.mu.Unlock()
			go p.pipe(c)
		}
	}()
	return p
}

func (p *proxy) pipe(c net.Conn) {
	defer func() {
		p.mu.Lock()
		delete(p.conns, c)
		p.mu.Unlock()
		c.Close()
	}()
	up, err := net.Dial("tcp", p.target)
	if err != nil {
		return
	}
	p.mu.Lock()
	p.conns[up] = true
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		delete(p.conns, up)
		p.mu.Unlock()
		up.Close()
	}()
	done := make(chan struct{}, 2)
	go func() { io.Copy(up, c); done <- struct{}{} }()
	go func() { io.Copy(c, up); done <- struct{}{} }()
	<-done
}

// cutFor partitions the agents from the server for d.
func (p *proxy) cutFor(d time.Duration) {
	p.mu.Lock()
	p.cut = true
	for c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	time.Sleep(d)
	p.mu.Lock()
	p.cut = false
	p.mu.Unlock()
}

type trialResult struct {
	faults     map[string]int
	jobs, lost int
	// dup counts jobs with two attempts running at once.
	dup        int
	violations []string
	recovery   []time.Duration
	took       time.Duration
	// audited counts the changes whose audit records were checked.
	audited int
	notes   []string
}

// fill takes every free byte of the file system at dir with a file (which
// the caller removes to end the fault) and says whether none is left.
func fill(name string) bool {
	f, err := os.Create(name)
	if err != nil {
		return false
	}
	defer f.Close()
	var st syscall.Statfs_t
	if syscall.Statfs(filepath.Dir(name), &st) == nil {
		syscall.Fallocate(int(f.Fd()), 0, 0, int64(st.Bavail)*int64(st.Bsize))
	}
	// Whatever fallocate left (it is all or nothing), writes past its end
	// take.
	f.Seek(0, io.SeekEnd)
	chunk := make([]byte, 64<<10)
	for {
		if _, err := f.Write(chunk); err != nil {
			break
		}
	}
	return syscall.Statfs(filepath.Dir(name), &st) == nil && st.Bavail == 0
}

type server struct {
	cmd       *exec.Cmd
	exited    chan struct{} // closed when cmd has exited
	dir, addr string
	token     string
	c         *api.Client
	mu        sync.Mutex
	restarts  int // times the server exited during start-up and was started again
}

// launch starts the server process.
func (s *server) launch() {
	cmd := exec.Command(*bin, "server", "--listen", s.addr, "--data-dir", filepath.Join(s.dir, "data"), "--config", filepath.Join(s.dir, "server.yml"))
	cmd.Env = append(os.Environ(), "HOME="+s.dir, "SHOAL_FAILPOINT_FILE="+filepath.Join(s.dir, "failpoint"))
	logf, _ := os.OpenFile(filepath.Join(s.dir, "server.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	cmd.Stdout, cmd.Stderr = logf, logf
	// Its own process group: agents the local provider starts are its
	// children but outlive it, as on a real host.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		log.Fatal(err)
	}
	exited := make(chan struct{})
	go func() {
		cmd.Wait()
		logf.Close()
		close(exited)
	}()
	s.mu.Lock()
	s.cmd, s.exited = cmd, exited
	s.mu.Unlock()
}

// start starts the server and returns how long it took to serve. A server
// that exits before it serves (it may refuse to start while its disk is
// full) is started again, as a supervisor (systemd's Restart=) would.
func (s *server) start() time.Duration {
	began := time.Now()
	s.launch()
	for {
		s.mu.Lock()
		exited := s.exited
		s.mu.Unlock()
		select {
		case <-exited:
			s.restarts++
			time.Sleep(time.Second)
			s.launch()
			continue
		default:
		}
		if t, err := os.ReadFile(filepath.Join(s.dir, "data", "admin.token")); err == nil && len(t) > 0 {
			if s.c == nil {
				// The token outlives restarts (it is in the data dir):
				// one client serves the whole trial, whoever holds it.
				s.token = strings.TrimSpace(string(t))
				s.c = api.NewClient("http://"+s.addr, s.token)
			}
			if _, err := s.c.ListComputes(context.Background(), "default", ""); err == nil {
				return time.Since(began)
			}
		}
		if time.Since(began) > 2*time.Minute {
			log.Fatalf("the server did not start; see %s/server.log", s.dir)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (s *server) kill() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cmd.Process.Signal(syscall.SIGKILL)
	<-s.exited
}

// agents lists the pids of this trial's `shoal agent` processes.
func (s *server) agents() []int {
	var out []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		var pid int
		if _, err := fmt.Sscanf(e.Name(), "%d", &pid); err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil {
			continue
		}
		args := strings.Split(string(b), "\x00")
		if len(args) > 1 && args[1] == "agent" && strings.Contains(string(b), s.dir) {
			out = append(out, pid)
		}
	}
	return out
}

func main() {
	flag.Parse()
	if *bin == "" {
		dir, err := os.MkdirTemp("", "shoal-chaos-bin")
		if err != nil {
			log.Fatal(err)
		}
		defer os.RemoveAll(dir)
		*bin = buildShoal(dir)
	}
	if *long {
		*trials, *jobs, *every = 20, 1000, 2*time.Second
	}
	rng := rand.New(rand.NewPCG(*seed, *seed^0xc4a05))
	var results []trialResult
	for i := range *trials {
		r := trial(rng, i)
		results = append(results, r)
		fmt.Printf("trial %d: %d jobs, faults %v, lost %d, violations %d, %d changes audited, took %s\n", i+1, r.jobs, r.faults, r.lost, len(r.violations), r.audited, r.took.Round(time.Second))
		for _, n := range r.notes {
			fmt.Println("  note:", n)
		}
		for _, v := range r.violations {
			fmt.Println("  violation:", v)
		}
	}
	report(results)
	for _, r := range results {
		if r.lost > 0 || len(r.violations) > 0 {
			os.RemoveAll(filepath.Dir(*bin))
			os.Exit(1)
		}
	}
}

// buildShoal builds the shoal command of the module this program belongs
// to, with the failpoint tag (store errors can then be injected), into
// dir, and returns the binary's path.
func buildShoal(dir string) string {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	mod := strings.TrimSpace(string(out))
	if err != nil || mod == "" || mod == os.DevNull {
		log.Fatalf("--bin not given and no Go module here to build shoal from (run from the repository, or use bench/chaos.sh)")
	}
	bin := filepath.Join(dir, "shoal")
	build := exec.Command("go", "build", "-tags", "failpoint", "-o", bin, "./cmd/shoal")
	build.Dir = filepath.Dir(mod)
	if b, err := build.CombinedOutput(); err != nil {
		log.Fatalf("building shoal: %v\n%s", err, b)
	}
	return bin
}

func trial(rng *rand.Rand, n int) trialResult {
	began := time.Now()
	res := trialResult{faults: map[string]int{}}
	dir, _ := os.MkdirTemp("", fmt.Sprintf("shoal-chaos-%d-", n))
	if !*keep {
		defer os.RemoveAll(dir)
	}
	addr := ports.Restartable()
	px := newProxy(addr)
	// The data dir lives on a small tmpfs of its own, which disk-full
	// faults fill; where mounting is not allowed (not root) that fault
	// cannot be injected and the trial says so.
	data := filepath.Join(dir, "data")
	os.MkdirAll(data, 0o755)
	canFill := true
	if err := syscall.Mount("tmpfs", data, "tmpfs", 0, "size="+*tmpfs); err != nil {
		canFill = false
		res.notes = append(res.notes, fmt.Sprintf("disk full: not injected: mounting a tmpfs on the data dir failed (%v; it needs root)", err))
	} else {
		defer syscall.Unmount(data, syscall.MNT_DETACH)
		// The local provider's nodes keep their work dirs in the data dir;
		// they stand for other machines, whose disks a full data dir does
		// not fill: a bind mount puts them on a disk of their own.
		nodes := filepath.Join(dir, "node-disks")
		os.MkdirAll(nodes, 0o755)
		os.MkdirAll(filepath.Join(data, "nodes"), 0o755)
		if err := syscall.Mount(nodes, filepath.Join(data, "nodes"), "", syscall.MS_BIND, ""); err != nil {
			log.Fatalf("bind-mounting the nodes' disks: %v", err)
		}
		defer syscall.Unmount(filepath.Join(data, "nodes"), syscall.MNT_DETACH)
	}
	// Every change the suite makes and the server acknowledges, by audit
	// target: the audit log must hold a record of each.
	var auditMu sync.Mutex
	changed := map[string]int{}
	change := func(target string) {
		auditMu.Lock()
		changed[target]++
		auditMu.Unlock()
	}
	os.WriteFile(filepath.Join(dir, "server.yml"), []byte("node_lease: 2s\nnode_lease_grace: 2s\nkill_grace: 1s\nagent_orphan_timeout: 30s\nadvertise_url: http://"+px.addr+"\n"), 0o644)
	s := &server{dir: dir, addr: addr}
	s.start()
	ctx := context.Background()
	for name, doc := range map[string]string{
		"cpu":    `{"size":"Standard_DS3_v2","max_instances":8,"idle_time_before_scale_down":20}`,
		"lowpri": `{"size":"Standard_DS3_v2","tier":"low_priority","max_instances":3,"idle_time_before_scale_down":20}`,
	} {
		if _, _, err := s.c.ApplyCompute(ctx, "default", name, json.RawMessage(doc), ""); err != nil {
			log.Fatal(err)
		}
		change("workspaces/default/computes/" + name)
	}
	// The workload: mostly short single-node jobs, some gangs, some
	// low-priority, some failing (retries 2), some cancelled.
	type want struct {
		fails, cancel, prints bool
		retries               int
	}
	wants := map[string]want{}
	var names []string
	for i := range *jobs {
		var doc map[string]any
		w := want{}
		switch p := rng.IntN(100); {
		case p < 45:
			// It prints, so that its log crosses the server's disk.
			doc = map[string]any{"command": fmt.Sprintf("echo begin; sleep %.1f; echo end of chaos-%d-%04d", 0.1+rng.Float64()*0.8, n, i), "compute": "cpu"}
			w.prints = true
		case p < 58:
			doc = map[string]any{"command": "sleep 0.5", "compute": "cpu", "resources": map[string]any{"instance_count": 2}}
		case p < 85:
			// Enough low-priority work, on few nodes, that they live
			// through the trial for eviction storms to hit.
			doc = map[string]any{"command": fmt.Sprintf("sleep %.1f", 0.5+rng.Float64()*1.5), "compute": "lowpri"}
		case p < 93:
			doc = map[string]any{"command": "exit 3", "compute": "cpu", "retries": 2}
			w.fails, w.retries = true, 2
		default:
			doc = map[string]any{"command": "sleep 30", "compute": "cpu"}
			w.cancel = true
		}
		doc["name"] = fmt.Sprintf("chaos-%d-%04d", n, i)
		b, _ := json.Marshal(doc)
		for {
			if _, _, err := s.c.SubmitJob(ctx, "default", b, ""); err == nil {
				change("workspaces/default/jobs/" + doc["name"].(string))
				break
			}
			time.Sleep(200 * time.Millisecond)
		}
		wants[doc["name"].(string)] = w
		names = append(names, doc["name"].(string))
	}
	// Cancel the long ones after a moment, and inject faults meanwhile.
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		time.Sleep(2 * time.Second)
		for name, w := range wants {
			if w.cancel {
				for range 50 {
					if _, err := s.c.CancelJob(ctx, "default", name); err == nil {
						change("workspaces/default/jobs/" + name + "/cancel")
						break
					}
					time.Sleep(200 * time.Millisecond)
				}
			}
		}
	}()
	var faultMu sync.Mutex
	var faults sync.WaitGroup
	busy := make([]bool, len(kinds))
	count := func(kind string) {
		faultMu.Lock()
		res.faults[kind]++
		faultMu.Unlock()
	}
	note := func(n string) {
		faultMu.Lock()
		res.notes = append(res.notes, n)
		faultMu.Unlock()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer faults.Wait()
		for {
			select {
			case <-stop:
				return
			case <-time.After(time.Duration(float64(*every) * (0.5 + rng.Float64()))):
			}
			k := rng.IntN(len(kinds))
			// Faults overlap (a partition during a full disk), but never
			// two of one kind at once.
			faultMu.Lock()
			if busy[k] {
				faultMu.Unlock()
				continue
			}
			busy[k] = true
			faultMu.Unlock()
			// Durations are drawn here, in the injector's own order, so
			// that a seed gives the same schedule of faults.
			pause := time.Duration(rng.IntN(1000)) * time.Millisecond
			cut := time.Duration(1000+rng.IntN(5000)) * time.Millisecond
			storeFor := time.Duration(1000+rng.IntN(3000)) * time.Millisecond
			fullFor := time.Duration(2000+rng.IntN(6000)) * time.Millisecond
			pick := rng.Uint64()
			faults.Add(1)
			go func() {
				defer faults.Done()
				defer func() { faultMu.Lock(); busy[k] = false; faultMu.Unlock() }()
				switch k {
				case 0:
					s.kill()
					count(killServer)
					time.Sleep(pause)
					d := s.start()
					faultMu.Lock()
					res.recovery = append(res.recovery, d)
					faultMu.Unlock()
				case 1:
					if pids := s.agents(); len(pids) > 0 {
						syscall.Kill(pids[pick%uint64(len(pids))], syscall.SIGKILL)
						count(killAgent)
					}
				case 2:
					nodes, err := s.c.ListNodes(ctx, "default", "lowpri")
					if err != nil || len(nodes) == 0 {
						return
					}
					// Half the nodes, from a random place in the list.
					off := int(pick % uint64(len(nodes)))
					for i := range (len(nodes) + 1) / 2 {
						nd := nodes[(off+i)%len(nodes)]
						if _, err := s.c.PreemptNode(ctx, "default", "lowpri", nd.ID); err == nil {
							change("workspaces/default/computes/lowpri/nodes/" + nd.ID + "/preempt")
						}
					}
					count(evict)
				case 3:
					count(partition)
					px.cutFor(cut)
				case 4:
					// Store errors: one transaction in five fails for a while.
					count(storeFault)
					f := filepath.Join(dir, "failpoint")
					os.WriteFile(f, nil, 0o644)
					time.Sleep(storeFor)
					os.Remove(f)
				case 5:
					if !canFill {
						return
					}
					filler := filepath.Join(data, ".chaos-filler")
					if fill(filler) {
						count(diskFull)
					} else {
						note("disk full: the filler left space free")
					}
					time.Sleep(fullFor)
					os.Remove(filler)
				}
			}()
		}
	}()
	// Faults go on while jobs run, for at most the fault window; then they
	// stop and every job must end within the settling time: a job still
	// running after that is lost.
	poll := func() (map[string]*shoal.Job, bool) {
		all, err := s.c.ListJobs(ctx, "default", nil, "", 0)
		if err != nil {
			return nil, false
		}
		m := map[string]*shoal.Job{}
		done := 0
		for _, j := range all {
			m[j.Name] = j
			if shoal.JobTerminal(j.Status) {
				done++
			}
		}
		return m, done == len(names)
	}
	var final map[string]*shoal.Job
	window := time.Now().Add(time.Duration(*jobs) * 500 * time.Millisecond)
	for time.Now().Before(window) {
		if m, all := poll(); all {
			final = m
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	close(stop)
	wg.Wait()
	// The server re-reads the failpoint file at most every 100 ms: give it
	// time to see that store errors have stopped before the checks read.
	time.Sleep(500 * time.Millisecond)
	// A server that stops answering does not hang the run: two minutes
	// past the settling time the last answer (or none) is judged.
	var last map[string]*shoal.Job
	for settle := time.Now().Add(*settling); final == nil; {
		m, all := poll()
		if m != nil {
			last = m
		}
		if all || (m != nil && time.Now().After(settle)) {
			final = m
			break
		}
		if time.Now().After(settle.Add(2 * time.Minute)) {
			res.notes = append(res.notes, fmt.Sprintf("the server did not answer job lists for 2 minutes after the settling time; judging its last answer (see %s/server.log)", s.dir))
			final = last
			if final == nil {
				final = map[string]*shoal.Job{}
			}
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	res.jobs = len(names)
	viol := func(format string, args ...any) {
		res.violations = append(res.violations, fmt.Sprintf(format, args...))
	}
	for _, name := range names {
		j := final[name]
		w := wants[name]
		if j == nil || !shoal.JobTerminal(j.Status) {
			res.lost++
			state := "missing"
			if j != nil {
				state = fmt.Sprintf("%s (%s)", j.Status, j.StatusReason)
			}
			res.notes = append(res.notes, fmt.Sprintf("lost: %s had not ended %s after the faults stopped: %s", name, *settling, state))
			continue
		}
		switch {
		case w.fails && (j.Status != shoal.JobFailed || j.FailedAttempts != w.retries+1):
			viol("%s (exit 3, retries %d): %s with %d failed attempts", name, w.retries, j.Status, j.FailedAttempts)
		case !w.fails && j.FailedAttempts > 0:
			detail := ""
			if atts, err := s.c.ListAttempts(ctx, "default", name); err == nil {
				for _, a := range atts {
					detail += fmt.Sprintf(" [attempt %d %s exit %v: %s]", a.Number, a.Status, deref(a.ExitCode), a.Reason)
				}
			}
			viol("%s (cancel %v) failed %d attempts on its own, yet never fails:%s", name, w.cancel, j.FailedAttempts, detail)
		case !w.fails && !w.cancel && j.Status != shoal.JobCompleted:
			viol("%s: %s (%s), want Completed", name, j.Status, j.Error)
		case w.cancel && j.Status != shoal.JobCanceled && j.Status != shoal.JobCompleted:
			viol("%s (cancelled): %s", name, j.Status)
		}
		// A job that printed has its whole log on the server.
		if w.prints && j.Status == shoal.JobCompleted {
			var b strings.Builder
			err := s.c.StreamLogs(ctx, "default", name, 0, 0, false, &b)
			if err != nil || !strings.Contains(b.String(), "end of "+name) {
				viol("%s: log on the server lacks its last line (%v): %q", name, err, b.String())
			}
		}
		// No two attempts at once.
		atts, err := s.c.ListAttempts(ctx, "default", name)
		for try := 0; err != nil && try < 5; try++ {
			// A read the store refused is retried as any client would.
			time.Sleep(200 * time.Millisecond)
			atts, err = s.c.ListAttempts(ctx, "default", name)
		}
		if err != nil {
			viol("%s: attempts: %v", name, err)
			continue
		}
		sort.Slice(atts, func(a, b int) bool { return atts[a].Number < atts[b].Number })
		for k := 1; k < len(atts); k++ {
			prev, cur := atts[k-1], atts[k]
			if cur.StartTime != nil && (prev.EndTime == nil || cur.StartTime.Before(*prev.EndTime)) {
				res.dup++
				viol("%s: attempt %d started at %v before attempt %d ended (%v)", name, cur.Number, cur.StartTime, prev.Number, prev.EndTime)
			}
		}
	}
	// Quota use equals the live nodes.
	var live int
	for _, c := range []string{"cpu", "lowpri"} {
		nodes, _ := s.c.ListNodes(ctx, "default", c)
		for _, nd := range nodes {
			if nd.State != shoal.NodePreempted {
				live += nd.VCPUs
			}
		}
	}
	raw, _ := s.c.ListUsages(ctx, "local")
	var usages struct {
		Value []struct {
			Name struct {
				Value string `json:"value"`
			} `json:"name"`
			Current int `json:"current_value"`
		} `json:"value"`
	}
	json.Unmarshal(raw, &usages)
	for _, u := range usages.Value {
		if u.Name.Value == "TotalCores" && u.Current != live {
			viol("quota use %d vCPUs, live nodes hold %d", u.Current, live)
		}
	}
	// No leaked agents: delete the computes; every agent must go.
	for _, c := range []string{"cpu", "lowpri"} {
		if _, err := s.c.DeleteCompute(ctx, "default", c, ""); err == nil {
			change("workspaces/default/computes/" + c)
		} else {
			viol("delete compute %s: %v", c, err)
		}
	}
	gone := time.Now().Add(90 * time.Second)
	for len(s.agents()) > 0 && time.Now().Before(gone) {
		time.Sleep(500 * time.Millisecond)
	}
	if pids := s.agents(); len(pids) > 0 {
		viol("%d agent processes left after their computes were deleted: %v", len(pids), pids)
		for _, p := range pids {
			syscall.Kill(p, syscall.SIGKILL)
		}
	}
	// Every acknowledged change has its audit record.
	if recs, err := s.c.ListAudit(ctx, "", "", ""); err != nil {
		viol("audit log: %v", err)
	} else {
		have := map[string]int{}
		for _, r := range recs {
			if r.Outcome == shoal.AuditSucceeded {
				have[r.Target]++
			}
		}
		missing := 0
		for target, n := range changed {
			if have[target] < n {
				missing++
				if missing <= 10 {
					viol("audit log: %d records of %s, %d changes acknowledged", have[target], target, n)
				}
			}
		}
		res.audited = len(changed)
		if missing > 10 {
			viol("audit log: %d more targets without their records", missing-10)
		}
	}
	s.kill()
	if s.restarts > 0 {
		res.notes = append(res.notes, fmt.Sprintf("the server exited during start-up %d times and was started again", s.restarts))
	}
	// Evidence that the full disk bit: the server's own log of it.
	if canFill {
		logb, _ := os.ReadFile(filepath.Join(dir, "server.log"))
		low := strings.ToLower(string(logb))
		res.notes = append(res.notes, fmt.Sprintf("disk full: the server logged %d errors of a full disk (\"database or disk is full\", \"no space left on device\")",
			strings.Count(low, "disk is full")+strings.Count(low, "no space left on device")))
	}
	res.took = time.Since(began)
	return res
}

func report(results []trialResult) {
	faults := map[string]int{}
	var jobsN, lost, viol, total, dup int
	var rec []time.Duration
	for _, r := range results {
		for k, v := range r.faults {
			faults[k] += v
			total += v
		}
		jobsN += r.jobs
		lost += r.lost
		dup += r.dup
		viol += len(r.violations)
		rec = append(rec, r.recovery...)
	}
	sort.Slice(rec, func(i, j int) bool { return rec[i] < rec[j] })
	fmt.Println()
	fs := []string{}
	for _, k := range kinds {
		fs = append(fs, fmt.Sprintf("%s ×%d", k, faults[k]))
	}
	p50, pmax := time.Duration(0), time.Duration(0)
	if len(rec) > 0 {
		p50, pmax = rec[len(rec)/2], rec[len(rec)-1]
	}
	fmt.Printf("| trials | jobs | faults injected | lost | duplicated | invariant violations | restart → serving p50 / max |\n")
	fmt.Printf("| --- | --- | --- | --- | --- | --- | --- |\n")
	fmt.Printf("| %d | %d | %d (%s) | %d | %d | %d | %s / %s |\n", len(results), jobsN, total, strings.Join(fs, ", "), lost, dup, viol,
		p50.Round(time.Millisecond), pmax.Round(time.Millisecond))
}

func deref(p *int) any {
	if p == nil {
		return nil
	}
	return *p
}
