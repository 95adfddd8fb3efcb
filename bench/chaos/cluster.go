package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/shoal-ml/shoal/bench/internal/ports"
	"github.com/shoal-ml/shoal/bench/internal/procs"
	"github.com/shoal-ml/shoal/client"
	"github.com/shoal-ml/shoal/internal/testhosts"
	"github.com/shoal-ml/shoal/internal/testpg"
)

// cluster is a trial's servers: one on SQLite (the suite as it always
// ran), or several `shoal server` processes on one PostgreSQL database
// (--store postgres), the agents reaching them through one proxy and the
// suite's own calls through another, both spreading connections over the
// servers that accept them, as a load balancer would.
type cluster struct {
	servers []*server
	// c is the suite's client: the server itself on SQLite, the users'
	// proxy in front of every server on PostgreSQL.
	c *client.Client
	// dir is the trial's folder: every agent's command line names it.
	dir string
	// users is the suite's proxy in front of the servers (PostgreSQL).
	users *proxy
}

// pgSrv is the private PostgreSQL server of a run, started on first use
// (a database per trial and binary) and stopped when the run ends (prog's
// cleanups, which main runs).
var (
	prog   = &testhosts.Program{}
	pgOnce sync.Once
	pgSrv  *testpg.Server
)

// newDatabase returns the URL of a fresh database on the run's private
// PostgreSQL server.
func newDatabase() string {
	pgOnce.Do(func() { pgSrv = testpg.Start(prog) })
	return pgSrv.NewDatabase(prog)
}

// startCluster starts n servers of bin for a trial in dir, their data
// dirs under data (the tmpfs disk-full faults fill), the agents' calls
// through agentsProxy. url is the PostgreSQL database ("" for SQLite:
// then n is 1 and the layout is the suite's original one). config is the
// servers' common YAML.
func startCluster(bin, dir, data, url string, n int, agents *proxy, config string) *cluster {
	cl := &cluster{dir: dir}
	failpoint := filepath.Join(dir, "failpoint")
	if url == "" {
		addr := agents.targets[0]
		s := &server{bin: bin, dir: dir, data: data, nodes: filepath.Join(dir, "node-disks"), addr: addr,
			config: filepath.Join(dir, "server.yml"), failpoint: failpoint, tokenFile: filepath.Join(data, "admin.token")}
		os.WriteFile(s.config, []byte(config), 0o600)
		s.start()
		cl.servers, cl.c = []*server{s}, s.c
		return cl
	}
	// Servers sharing a store share the key that seals its signing keys,
	// and, on one host with the local provider, the nodes' folder.
	cfgPath := filepath.Join(dir, "server.yml")
	os.WriteFile(cfgPath, []byte(config+"store: "+url+"\nsecrets_key_file: "+filepath.Join(dir, "workload.key")+"\n"), 0o600)
	for i := range n {
		sd := filepath.Join(dir, fmt.Sprintf("server-%d", i+1))
		os.MkdirAll(sd, 0o700)
		s := &server{bin: bin, dir: sd, data: filepath.Join(data, fmt.Sprintf("server-%d", i+1)), nodes: filepath.Join(dir, "node-disks"),
			addr: agents.targets[i], config: cfgPath, failpoint: failpoint,
			// The first server creates the admin token; every server
			// takes that one.
			tokenFile: filepath.Join(data, "server-1", "admin.token")}
		cl.servers = append(cl.servers, s)
		s.start()
		if i == 0 {
			// The first leads before the others start, as an operator
			// brings up the first server, then the rest.
			deadline := time.Now().Add(time.Minute)
			for cl.leader() != s && time.Now().Before(deadline) {
				time.Sleep(20 * time.Millisecond)
			}
		}
	}
	cl.users = newProxy(agents.targets...)
	cl.c = client.NewClient("http://"+cl.users.addr, cl.servers[0].token)
	// A connection per call, so that the proxy spreads the suite's calls
	// (submissions, cancels, evictions, the checks' reads) over the
	// servers, not only its connections.
	cl.c.HTTP = &http.Client{Timeout: cl.c.HTTP.Timeout, Transport: &http.Transport{DisableKeepAlives: true}}
	return cl
}

// role is what a server's /readyz says it is: "leader", "follower",
// "single", or "" when it does not answer.
func (s *server) role() string {
	hc := http.Client{Timeout: time.Second}
	resp, err := hc.Get("http://" + s.addr + "/readyz")
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	var body struct {
		Role string `json:"role"`
	}
	json.NewDecoder(resp.Body).Decode(&body)
	return body.Role
}

// running says whether the server's process is up (not killed and not
// yet restarted).
func (s *server) running() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.exited == nil {
		return false
	}
	select {
	case <-s.exited:
		return false
	default:
		return true
	}
}

// leader is the server that says it leads, nil when none does (during a
// failover).
func (cl *cluster) leader() *server {
	for _, s := range cl.servers {
		if s.running() && s.role() == "leader" {
			return s
		}
	}
	return nil
}

// killLeader kills the leader with SIGKILL, waits until another server
// leads (with one server, until it was restarted and leads again), then
// restarts the killed one after pause. It returns the failover time —
// the kill to another server saying it leads — and the killed server's
// restart → serving time; ok is false when no server led at the kill.
// A failover longer than limit is given up on and returned as limit with
// failed set.
func (cl *cluster) killLeader(pause, limit time.Duration) (failover, restart time.Duration, ok, failed bool) {
	old := cl.leader()
	if old == nil {
		return 0, 0, false, false
	}
	old.kill()
	killed := time.Now()
	wait := func() bool {
		for time.Since(killed) < limit {
			if l := cl.leader(); l != nil && (l != old || len(cl.servers) == 1) {
				return true
			}
			time.Sleep(20 * time.Millisecond)
		}
		return false
	}
	if len(cl.servers) == 1 {
		time.Sleep(pause)
		restart = old.start()
		failed = !wait()
		return time.Since(killed), restart, true, failed
	}
	failed = !wait()
	failover = time.Since(killed)
	time.Sleep(pause)
	return failover, old.start(), true, failed
}

// agents lists the pids of the trial's `shoal agent` processes.
func (cl *cluster) agents() []int { return procs.Agents(cl.dir) }

// stop kills every server still running.
func (cl *cluster) stop() {
	for _, s := range cl.servers {
		if s.running() {
			s.kill()
		}
	}
}

// restarts is how many times the servers exited during start-up and were
// started again.
func (cl *cluster) restarts() int {
	n := 0
	for _, s := range cl.servers {
		n += s.restarts
	}
	return n
}

// logs is every server's log, concatenated.
func (cl *cluster) logs() string {
	var b strings.Builder
	for _, s := range cl.servers {
		l, _ := os.ReadFile(filepath.Join(s.dir, "server.log"))
		b.Write(l)
	}
	return b.String()
}

// serverAddrs returns n addresses for servers.
func serverAddrs(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = ports.Restartable()
	}
	return out
}

// spread says how many connections each target took, in order.
func (p *proxy) spread() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	parts := make([]string, len(p.served))
	for i, n := range p.served {
		parts[i] = strconv.Itoa(n)
	}
	return strings.Join(parts, "/")
}
