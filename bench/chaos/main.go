// Command chaos runs trials of a mixed job workload on a real server (a
// child process, SQLite, nodes of the local provider running real
// agents) while it injects faults at random moments from a seeded RNG —
// kill -9 of the server (restarted on the same store), kill -9 of agents,
// low-priority eviction storms (half the nodes at once), agents
// partitioned from the server (a proxy on their advertise_url), store
// errors (a failpoint compiled in with the failpoint build tag) and a full
// disk (the data dir is a small tmpfs, filled for a few seconds) — and
// after each trial checks invariants from the store and from the jobs'
// own records: every job reached a terminal state; no attempt of a job ran
// at the same time as another (by the server's times, and, for the
// recorded jobs, by their processes' own record and a lock they hold, see
// recordedCommand); a job's retries were spent only by its own failures;
// no agent process leaked; quota use equals the live nodes; every change
// the server acknowledged has its audit record. It prints a table. By
// default it runs the full suite (20 trials of 1,000 jobs, a fault every
// 2 s on average; --long asks for it by name, setting only the flags not
// given); `go run ./bench/chaos` builds the server itself, bench/chaos.sh
// is the same. With --store postgres the trials run --servers servers
// (default 2) on one database of a private PostgreSQL server, the leader
// killed with kill -9 among the faults, and every job's processes mark
// their runs so that a job run twice is seen (cluster.go, markers.go).
// With --baseline-bin every trial also runs on a second binary, and both
// are reported.
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
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/shoal-ml/shoal/client"
	"github.com/shoal-ml/shoal/domain/identity"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/node"
)

// options are the command's flags.
type options struct {
	bin             *string
	trials, jobs    *int
	seed            *uint64
	long, keep      *bool
	every, settling *time.Duration
	tmpfs           *string
	// store, servers, leaderLease: the PostgreSQL mode (several servers
	// on one database, the leader killed among the faults).
	store       *string
	servers     *int
	leaderLease *time.Duration
	// baselineBin is a second binary run on the same trials.
	baselineBin *string
}

// defineFlags defines the flags on fs. The defaults are the full suite;
// CI's short run sets its own (scripts/test: --trials 1 --jobs 40 --every 1s).
func defineFlags(fs *flag.FlagSet) options {
	return options{
		bin:         fs.String("bin", "", "the shoal binary, built with -tags failpoint (default: built from this module into a temp dir, removed afterwards; a binary given here is never removed)"),
		trials:      fs.Int("trials", 20, "trials"),
		jobs:        fs.Int("jobs", 1000, "jobs per trial"),
		seed:        fs.Uint64("seed", 1, "the fault injector's seed"),
		long:        fs.Bool("long", false, "the full suite: 20 trials of 1,000 jobs, a fault every 2 s on average, for each of --trials, --jobs, --every not given (the defaults are the same)"),
		every:       fs.Duration("every", 2*time.Second, "mean time between faults"),
		settling:    fs.Duration("settling", 3*time.Minute, "how long jobs have to end once the faults stop"),
		keep:        fs.Bool("keep", false, "keep each trial's directory (server log, store, the jobs' own records) for a look afterwards"),
		tmpfs:       fs.String("tmpfs-size", "512m", "size of the tmpfs the data dir is mounted on (disk-full faults fill it)"),
		store:       fs.String("store", "sqlite", "the store: sqlite (one server, restarted after kill -9) or postgres (a private PostgreSQL server, as root with Debian's postgresql; --servers servers on it, the leader killed with kill -9 among the faults)"),
		servers:     fs.Int("servers", 0, "servers on the one database (--store postgres; default 2); SQLite runs one"),
		leaderLease: fs.Duration("leader-lease", 2*time.Second, "the servers' leader_lease (--store postgres)"),
		baselineBin: fs.String("baseline-bin", "", "a second shoal binary (built with -tags failpoint: the code before a change), run on the same trials (the same seed), alternating with --bin; both are reported"),
	}
}

// longSuite is what --long sets, flag by flag.
var longSuite = map[string]string{"trials": "20", "jobs": "1000", "every": "2s"}

// applyLong gives the flags the user did not set the full suite's values
// when --long is given: an explicit flag always wins (--long --trials 5 is
// five full trials).
func applyLong(fs *flag.FlagSet, o options) {
	if !*o.long {
		return
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	for name, v := range longSuite {
		if !given[name] {
			if err := fs.Set(name, v); err != nil {
				panic(err)
			}
		}
	}
}

var (
	opts        = defineFlags(flag.CommandLine)
	bin         = opts.bin
	trials      = opts.trials
	jobs        = opts.jobs
	seed        = opts.seed
	every       = opts.every
	settling    = opts.settling
	keep        = opts.keep
	tmpfs       = opts.tmpfs
	store       = opts.store
	leaderLease = opts.leaderLease
	baselineBin = opts.baselineBin
)

// servers is how many servers a trial runs: one on SQLite, --servers
// (default 2) on PostgreSQL.
func servers() int {
	if *store != "postgres" {
		return 1
	}
	if *opts.servers > 0 {
		return *opts.servers
	}
	return 2
}

// checkStore refuses flags that do not fit together.
func checkStore() error {
	switch {
	case *store != "sqlite" && *store != "postgres":
		return fmt.Errorf("--store %q: sqlite or postgres", *store)
	case *store == "sqlite" && *opts.servers > 1:
		return fmt.Errorf("--servers %d: SQLite has one server (several need --store postgres)", *opts.servers)
	case *opts.servers < 0:
		return fmt.Errorf("--servers %d: at least 1", *opts.servers)
	}
	return nil
}

// kinds of fault.
const (
	killServer = "kill -9 server"
	killAgent  = "kill -9 agent"
	evict      = "eviction storm"
	partition  = "agents partitioned"
	storeFault = "store errors"
	diskFull   = "disk full"
	// killLeader is the PostgreSQL mode's first kind, in killServer's
	// place: the server that leads is killed and restarted once another
	// leads.
	killLeader = "kill -9 leader"
)

var kinds = []string{killServer, killAgent, evict, partition, storeFault, diskFull}

// kindsOf is the fault kinds of a store: on PostgreSQL the first is the
// leader's kill, so that both modes draw faults from a seed alike.
func kindsOf(store string) []string {
	if store == "postgres" {
		return append([]string{killLeader}, kinds[1:]...)
	}
	return kinds
}

// proxy stands between the agents and the server (their advertise_url):
// a partition drops every connection and refuses new ones for a while.
// With several servers (PostgreSQL) it spreads connections over them,
// each to the next one in turn that accepts it, as a load balancer does;
// a killed server refuses, so its connections go to the others.
type proxy struct {
	addr    string
	targets []string
	mu      sync.Mutex
	cut     bool
	next    int
	conns   map[net.Conn]bool
	// served counts the connections each target took.
	served []int
}

func newProxy(targets ...string) *proxy {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	p := &proxy{addr: l.Addr().String(), targets: targets, conns: map[net.Conn]bool{}, served: make([]int, len(targets))}
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
			first := p.next
			p.next++
			p.mu.Unlock()
			go p.pipe(c, first)
		}
	}()
	return p
}

// dial connects to the first target from first on that accepts.
func (p *proxy) dial(first int) (net.Conn, error) {
	var err error
	for i := range p.targets {
		var up net.Conn
		t := (first + i) % len(p.targets)
		if up, err = net.DialTimeout("tcp", p.targets[t], time.Second); err == nil {
			p.mu.Lock()
			p.served[t]++
			p.mu.Unlock()
			return up, nil
		}
	}
	return nil, err
}

func (p *proxy) pipe(c net.Conn, first int) {
	defer func() {
		p.mu.Lock()
		delete(p.conns, c)
		p.mu.Unlock()
		c.Close()
	}()
	up, err := p.dial(first)
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
	// failover is, for each leader kill (PostgreSQL), the time from the
	// kill to another server saying it leads.
	failover []time.Duration
	took     time.Duration
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

// server is one `shoal server` process of a trial.
type server struct {
	bin       string
	cmd       *exec.Cmd
	exited    chan struct{} // closed when cmd has exited
	dir, addr string
	// data, nodes and config are its --data-dir, --nodes-dir and
	// --config; failpoint the file that turns store errors on;
	// tokenFile where the admin token appears (the first server's data
	// dir on PostgreSQL).
	data, nodes, config  string
	failpoint, tokenFile string
	token                string
	c                    *client.Client
	mu                   sync.Mutex
	restarts             int // times the server exited during start-up and was started again
}

// launch starts the server process.
func (s *server) launch() {
	cmd := exec.Command(s.bin, "server", "--listen", s.addr, "--data-dir", s.data, "--nodes-dir", s.nodes, "--config", s.config)
	cmd.Env = append(os.Environ(), "HOME="+s.dir, "SHOAL_FAILPOINT_FILE="+s.failpoint)
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
		if t, err := os.ReadFile(s.tokenFile); err == nil && len(t) > 0 {
			if s.c == nil {
				// The token outlives restarts (it is in the data dir):
				// one client serves the whole trial, whoever holds it.
				s.token = strings.TrimSpace(string(t))
				s.c = client.NewClient("http://"+s.addr, s.token)
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

func main() {
	flag.Parse()
	applyLong(flag.CommandLine, opts)
	if err := checkStore(); err != nil {
		log.Fatal(err)
	}
	code := run(buildShoal, trial)
	prog.Done() // the private PostgreSQL server, if one was started
	os.Exit(code)
}

// arm is one binary under test: the one given (or built), and with
// --baseline-bin the one it is compared with.
type arm struct {
	label, bin string
	// rng is the arm's own injector: both arms draw the same workload and
	// the same schedule of faults from the same seed.
	rng     *rand.Rand
	results []trialResult
}

// run builds the server unless --bin names one, runs the trials and
// reports; it returns the exit status (1 when a job was lost or an
// invariant violated). It removes only the directory it built the server
// into: --bin may name a binary in the user's own directory (~/.local/bin).
// With --baseline-bin, each trial runs on both binaries, alternating which
// goes first, and both are reported.
func run(build func(dir string) string, trial func(bin string, rng *rand.Rand, n int) trialResult) int {
	if *bin == "" {
		dir, err := os.MkdirTemp("", "shoal-chaos-bin")
		if err != nil {
			log.Fatal(err)
		}
		defer os.RemoveAll(dir)
		*bin = build(dir)
	}
	newRNG := func() *rand.Rand { return rand.New(rand.NewPCG(*seed, *seed^0xc4a05)) }
	arms := []*arm{{label: "current", bin: *bin, rng: newRNG()}}
	if *baselineBin != "" {
		arms = []*arm{{label: "baseline", bin: *baselineBin, rng: newRNG()}, arms[0]}
	}
	if *store == "postgres" {
		fmt.Printf("store: PostgreSQL (a private server), %d servers on one database, leader_lease %s\n", servers(), *leaderLease)
	}
	for i := range *trials {
		order := slices.Clone(arms)
		if i%2 == 1 {
			slices.Reverse(order)
		}
		for _, a := range order {
			r := trial(a.bin, a.rng, i)
			a.results = append(a.results, r)
			prefix := ""
			if len(arms) > 1 {
				prefix = a.label + " "
			}
			fmt.Printf("%strial %d: %d jobs, faults %v, lost %d, violations %d, %d changes audited, took %s\n", prefix, i+1, r.jobs, r.faults, r.lost, len(r.violations), r.audited, r.took.Round(time.Second))
			for _, n := range r.notes {
				fmt.Println("  note:", n)
			}
			for _, v := range r.violations {
				fmt.Println("  violation:", v)
			}
		}
	}
	if *store == "postgres" || len(arms) > 1 {
		fmt.Println()
		reportArms(arms)
	} else {
		report(arms[0].results)
	}
	for _, a := range arms {
		if a.label == "baseline" {
			continue // the baseline's own failures are reported, not the change's
		}
		for _, r := range a.results {
			if r.lost > 0 || len(r.violations) > 0 {
				return 1
			}
		}
	}
	return 0
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
	build := exec.Command("go", "build", "-tags", "failpoint", "-o", bin, "./cmd/shoal-server")
	build.Dir = filepath.Dir(mod)
	if b, err := build.CombinedOutput(); err != nil {
		log.Fatalf("building shoal: %v\n%s", err, b)
	}
	return bin
}

func trial(bin string, rng *rand.Rand, n int) trialResult {
	began := time.Now()
	res := trialResult{faults: map[string]int{}}
	dir, _ := os.MkdirTemp("", fmt.Sprintf("shoal-chaos-%d-", n))
	if !*keep {
		defer os.RemoveAll(dir)
	}
	pg := *store == "postgres"
	url := ""
	if pg {
		url = newDatabase()
	}
	px := newProxy(serverAddrs(servers())...)
	// The data dir lives on a small tmpfs of its own, which disk-full
	// faults fill; where mounting is not allowed (not root) that fault
	// cannot be injected and the trial says so. On PostgreSQL every
	// server's data dir is a folder of it (the database's own disk is not
	// filled: PostgreSQL stops at a full WAL disk, which is not Shoal's).
	data := filepath.Join(dir, "data")
	os.MkdirAll(data, 0o755)
	canFill := true
	if err := syscall.Mount("tmpfs", data, "tmpfs", 0, "size="+*tmpfs); err != nil {
		canFill = false
		res.notes = append(res.notes, fmt.Sprintf("disk full: not injected: mounting a tmpfs on the data dir failed (%v; it needs root)", err))
	} else {
		defer syscall.Unmount(data, syscall.MNT_DETACH)
	}
	// The nodes' work dirs stand for other machines, whose disks a full
	// data dir does not fill: they live beside it (--nodes-dir), in the
	// trial's folder, opened (0711) for the accounts work runs as.
	_ = os.Chmod(dir, 0o711)
	// Every change the suite makes and the server acknowledges, by audit
	// target: the audit log must hold a record of each.
	var auditMu sync.Mutex
	changed := map[string]int{}
	change := func(target string) {
		auditMu.Lock()
		changed[target]++
		auditMu.Unlock()
	}
	config := "node_lease: 2s\nnode_lease_grace: 2s\nkill_grace: 1s\nagent_orphan_timeout: 30s\nadvertise_url: http://" + px.addr + "\n"
	if pg {
		config += "leader_lease: " + leaderLease.String() + "\n"
	}
	s := startCluster(bin, dir, data, url, servers(), px, config)
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
		// recorded jobs keep their own record of their attempts.
		recorded bool
		retries  int
	}
	// The recorded jobs' records: a directory of the bench, outside the
	// server's data dir and the nodes' work dirs.
	records := filepath.Join(dir, "records")
	os.MkdirAll(records, 0o777)
	_ = os.Chmod(records, 0o1777) // the jobs write there as accounts of their own
	wants := map[string]want{}
	var names []string
	for i := range *jobs {
		var doc map[string]any
		w := want{}
		switch p := rng.IntN(100); {
		case p < 40:
			// It prints, so that its log crosses the server's disk.
			doc = map[string]any{"command": fmt.Sprintf("echo begin; sleep %.1f; echo end of chaos-%d-%04d", 0.1+rng.Float64()*0.8, n, i), "compute": "cpu"}
			w.prints = true
		case p < 45:
			// 5–10 s, long enough for faults to hit it, on either
			// cluster (evictions hit low priority); it keeps its own
			// record of its attempts.
			doc = map[string]any{"command": recordedCommand(records, 25+rng.IntN(26)), "compute": []string{"cpu", "lowpri"}[rng.IntN(2)]}
			w.recorded = true
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
		if pg {
			doc["command"] = markedCommand(records, doc["command"].(string))
		}
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
	kinds := kindsOf(*store)
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
					if pg {
						fo, d, ok, failed := s.killLeader(pause, time.Minute)
						if !ok {
							note("kill -9 leader: not injected once: no server said it led (a failover under way)")
							return
						}
						count(killLeader)
						faultMu.Lock()
						res.failover = append(res.failover, fo)
						res.recovery = append(res.recovery, d)
						if failed {
							res.violations = append(res.violations, fmt.Sprintf("no other server led within %s of the leader's kill -9", fo.Round(time.Second)))
						}
						faultMu.Unlock()
						return
					}
					srv := s.servers[0]
					srv.kill()
					count(killServer)
					time.Sleep(pause)
					d := srv.start()
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
	poll := func() (map[string]*job.Job, bool) {
		all, err := s.c.ListJobs(ctx, "default", nil, "", 0)
		if err != nil {
			return nil, false
		}
		m := map[string]*job.Job{}
		done := 0
		for _, j := range all {
			m[j.Name] = j
			if job.JobTerminal(j.Status) {
				done++
			}
		}
		return m, done == len(names)
	}
	var final map[string]*job.Job
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
	var last map[string]*job.Job
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
			res.notes = append(res.notes, fmt.Sprintf("the server did not answer job lists for 2 minutes after the settling time; judging its last answer (see %s/server.log)", s.servers[0].dir))
			final = last
			if final == nil {
				final = map[string]*job.Job{}
			}
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	res.jobs = len(names)
	viol := func(format string, args ...any) {
		res.violations = append(res.violations, fmt.Sprintf(format, args...))
	}
	// Every job accounted for exactly once (PostgreSQL: two servers took
	// the submissions): the list holds each submitted name once, and no
	// other.
	if pg {
		all, err := s.c.ListJobs(ctx, "default", nil, "", 0)
		for try := 0; err != nil && try < 10; try++ {
			time.Sleep(500 * time.Millisecond)
			all, err = s.c.ListJobs(ctx, "default", nil, "", 0)
		}
		if err != nil {
			viol("job list for the accounting: %v", err)
		} else {
			listed := make([]string, len(all))
			for i, j := range all {
				listed[i] = j.Name
			}
			for _, p := range checkAccounted(names, listed) {
				viol("%s", p)
			}
		}
	}
	// Recorded jobs, and those of them whose processes ran more than one
	// attempt: how much the processes' own check saw.
	recorded, recordedRetried := 0, 0
	for _, name := range names {
		j := final[name]
		w := wants[name]
		if j == nil || !job.JobTerminal(j.Status) {
			res.lost++
			state := "missing"
			if j != nil {
				state = fmt.Sprintf("%s (%s)", j.Status, j.StatusReason)
			}
			res.notes = append(res.notes, fmt.Sprintf("lost: %s had not ended %s after the faults stopped: %s", name, *settling, state))
			continue
		}
		switch {
		case w.fails && (j.Status != job.JobFailed || j.FailedAttempts != w.retries+1):
			viol("%s (exit 3, retries %d): %s with %d failed attempts", name, w.retries, j.Status, j.FailedAttempts)
		case !w.fails && j.FailedAttempts > 0:
			detail := ""
			if atts, err := s.c.ListAttempts(ctx, "default", name); err == nil {
				for _, a := range atts {
					detail += fmt.Sprintf(" [attempt %d %s exit %v: %s]", a.Number, a.Status, deref(a.ExitCode), a.Reason)
				}
			}
			viol("%s (cancel %v) failed %d attempts on its own, yet never fails:%s", name, w.cancel, j.FailedAttempts, detail)
		case !w.fails && !w.cancel && j.Status != job.JobCompleted:
			viol("%s: %s (%s), want Completed", name, j.Status, j.Error)
		case w.cancel && j.Status != job.JobCanceled && j.Status != job.JobCompleted:
			viol("%s (cancelled): %s", name, j.Status)
		}
		// A job that printed has its whole log on the server.
		if w.prints && j.Status == job.JobCompleted {
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
		dup := false
		for k := 1; k < len(atts); k++ {
			prev, cur := atts[k-1], atts[k]
			if cur.StartTime != nil && (prev.EndTime == nil || cur.StartTime.Before(*prev.EndTime)) {
				dup = true
				viol("%s: attempt %d started at %v before attempt %d ended (%v)", name, cur.Number, cur.StartTime, prev.Number, prev.EndTime)
			}
		}
		// The server's times are its own view; a recorded job's processes
		// say what really ran.
		if w.recorded {
			b, err := os.ReadFile(filepath.Join(records, name))
			if err != nil {
				viol("%s: no record of its attempts: %v", name, err)
			} else {
				final := ""
				if j.Status == job.JobCompleted {
					final = j.CurrentAttemptID
				}
				recorded++
				if starts := strings.Count(string(b), "start "); starts > 1 {
					recordedRetried++
				}
				problems := checkRecord(b, final)
				for _, p := range problems {
					viol("%s: %s\n    record:\n%s    server's attempts:%s", name, p, indent(string(b)), describeAttempts(atts))
				}
				if len(problems) > 0 && !strings.HasPrefix(problems[0], "record:") {
					dup = true
				}
			}
		}
		// What ran, by the run markers (PostgreSQL): no attempt twice.
		if pg {
			b, _ := os.ReadFile(filepath.Join(records, name+".runs"))
			final := ""
			if j.Status == job.JobCompleted {
				final = j.CurrentAttemptID
			}
			ids := make([]string, len(atts))
			for i, a := range atts {
				ids[i] = a.ID
			}
			if problems := checkRuns(b, ids, final); len(problems) > 0 {
				dup = true
				for _, p := range problems {
					viol("%s: %s\n    runs:\n%s    server's attempts:%s", name, p, indent(string(b)), describeAttempts(atts))
				}
			}
		}
		if dup {
			res.dup++
		}
	}
	res.notes = append(res.notes, fmt.Sprintf("recorded jobs: %d checked, %d of them with more than one attempt run", recorded, recordedRetried))
	// Quota use equals the live nodes.
	var live int
	for _, c := range []string{"cpu", "lowpri"} {
		nodes, _ := s.c.ListNodes(ctx, "default", c)
		for _, nd := range nodes {
			if nd.State != node.NodePreempted {
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
			if r.Outcome == identity.AuditSucceeded {
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
	if pg {
		res.notes = append(res.notes, "connections per server: the agents' "+px.spread()+"; the suite's "+s.users.spread())
	}
	s.stop()
	if r := s.restarts(); r > 0 {
		res.notes = append(res.notes, fmt.Sprintf("the server exited during start-up %d times and was started again", r))
	}
	// Evidence that the full disk bit: the server's own log of it.
	if canFill {
		low := strings.ToLower(s.logs())
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

// recordedCommand is a job of about ticks × 0.2 s that keeps a record of
// its attempts in dir, one file per job (SHOAL_JOB_NAME), each line
// "start|alive|held|end <attempt-id> <unix-nanos>". While it runs, it
// holds an flock on that file: the kernel releases it only when the last
// process holding the file open is gone (killed with SIGKILL included), so
// an attempt that finds it held proves that a process of an earlier
// attempt was still running when it started — whatever the server
// believed, and however that process ended. It says so ("held") and waits
// for the lock (at most a minute), so that later attempts can check again.
// Its children (sleep) do not inherit the descriptor, so a killed job's
// stray child does not hold the lock for it. The timestamps are a second
// proof: an "alive" or "end" line of one attempt after the "start" of a
// later one.
func recordedCommand(dir string, ticks int) string {
	stamp := `"$SHOAL_ATTEMPT_ID ${EPOCHREALTIME/./}000"`
	return fmt.Sprintf(`exec 9>>'%s'/"$SHOAL_JOB_NAME"; echo start %s >&9; `+
		`if ! flock -n 9; then echo held %s >&9; flock -w 60 9; fi; `+
		`for i in $(seq %d); do sleep 0.2 9>&-; echo alive %s >&9; done; echo end %s >&9`,
		dir, stamp, stamp, ticks, stamp, stamp)
}

// recordedAttempt is what a recorded job's file says of one attempt.
type recordedAttempt struct {
	id           string
	start, proof time.Time // its start, and the last moment it was seen alive
	held         bool      // it found an earlier attempt's lock held
	ended        bool
}

// checkRecord reads a recorded job's file and returns what is wrong: two
// attempts that ran at once (one found the lock held, or wrote a line
// after another had started), or, when final names the attempt the server
// says completed the job, that attempt not having run to its end. A
// problem that is not an overlap starts with "record:".
func checkRecord(b []byte, final string) []string {
	var order []*recordedAttempt
	byID := map[string]*recordedAttempt{}
	var problems []string
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		f := strings.Fields(line)
		if len(f) != 3 {
			if line != "" {
				problems = append(problems, fmt.Sprintf("record: unreadable line %q", line))
			}
			continue
		}
		ns, err := strconv.ParseInt(f[2], 10, 64)
		if err != nil {
			problems = append(problems, fmt.Sprintf("record: unreadable line %q", line))
			continue
		}
		at := time.Unix(0, ns)
		a := byID[f[1]]
		if a == nil {
			a = &recordedAttempt{id: f[1], start: at}
			byID[f[1]] = a
			order = append(order, a)
		}
		if at.After(a.proof) {
			a.proof = at
		}
		switch f[0] {
		case "held":
			a.held = true
		case "end":
			a.ended = true
		}
	}
	sort.SliceStable(order, func(i, j int) bool { return order[i].start.Before(order[j].start) })
	for i, a := range order {
		if a.held {
			problems = append(problems, fmt.Sprintf("attempt %s found the lock of an earlier attempt held when it started: two attempts ran at once", a.id))
		}
		for _, b := range order[i+1:] {
			if b.start.Before(a.proof) {
				problems = append(problems, fmt.Sprintf("attempt %s was still running %s after attempt %s started (at %s)",
					a.id, a.proof.Sub(b.start).Round(time.Millisecond), b.id, b.start.UTC().Format("15:04:05.000")))
			}
		}
	}
	if final != "" && (byID[final] == nil || !byID[final].ended) {
		problems = append(problems, fmt.Sprintf("record: attempt %s completed the job on the server but its record has no end", final))
	}
	return problems
}

func indent(s string) string {
	var b strings.Builder
	for _, l := range strings.Split(strings.TrimRight(s, "\n"), "\n") {
		b.WriteString("      " + l + "\n")
	}
	return b.String()
}

func describeAttempts(atts []*job.Attempt) string {
	var b strings.Builder
	ts := func(t *time.Time) string {
		if t == nil {
			return "-"
		}
		return t.UTC().Format("15:04:05.000")
	}
	for _, a := range atts {
		fmt.Fprintf(&b, "\n      %d %s %s–%s %q", a.Number, a.ID, ts(a.StartTime), ts(a.EndTime), a.Reason)
		for _, r := range a.Ranks {
			fmt.Fprintf(&b, " [rank %d on %s: %s %s–%s %q]", r.Rank, r.NodeID, r.Status, ts(r.StartTime), ts(r.EndTime), r.Reason)
		}
	}
	return b.String()
}
