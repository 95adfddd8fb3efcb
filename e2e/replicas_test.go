package e2e_test

import (
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/internal/testpg"
	"github.com/shoal-ml/shoal/internal/testproxy"
)

// frontProxy is the one URL in front of the replicas that users and
// agents reach, as a load balancer with health checks would be: each
// connection goes to the first replica whose /readyz answers 200, else
// to the first that accepts it.
func frontProxy(t *testing.T, backends ...string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				order := append([]string(nil), backends...)
				for i, b := range backends {
					hc := http.Client{Timeout: 500 * time.Millisecond}
					if resp, err := hc.Get("http://" + b + "/readyz"); err == nil {
						resp.Body.Close()
						if resp.StatusCode == http.StatusOK {
							order = append([]string{b}, append(append([]string(nil), backends[:i]...), backends[i+1:]...)...)
							break
						}
					}
				}
				for _, b := range order {
					up, err := net.DialTimeout("tcp", b, time.Second)
					if err != nil {
						continue
					}
					defer up.Close()
					var wg sync.WaitGroup
					wg.Add(2)
					go func() { defer wg.Done(); io.Copy(up, c); up.(*net.TCPConn).CloseWrite() }()
					go func() { defer wg.Done(); io.Copy(c, up); c.(*net.TCPConn).CloseWrite() }()
					wg.Wait()
					return
				}
			}()
		}
	}()
	return "http://" + ln.Addr().String()
}

// readyz returns a server's /readyz body.
func readyz(s *server) map[string]any {
	resp, err := http.Get(s.url + "/readyz")
	if err != nil {
		return map[string]any{"error": err.Error()}
	}
	defer resp.Body.Close()
	var body map[string]any
	json.NewDecoder(resp.Body).Decode(&body)
	return body
}

// Three servers on one PostgreSQL database behind one URL: one leads the
// controllers, the others follow. With 200 short jobs in flight the
// leader is killed (kill -9) at a random moment, three times in a row,
// the killed one restarted each time; every time another server leads
// within the lease's bound, every job ends Completed exactly once, every
// node has exactly one agent, and any server serves any job's log.
func TestReplicasFailover(t *testing.T) {
	t.Parallel()
	pg := testpg.Start(t)
	url := pg.NewDatabase(t)
	addrs := []string{freeAddr(t), freeAddr(t), freeAddr(t)}
	front := frontProxy(t, addrs...)
	// Servers sharing a store share the key that seals its signing keys.
	cfg := fastJobsConfig + "store: " + url + "\nleader_lease: 2s\nadvertise_url: " + front + "\n" +
		"secrets_key_file: " + filepath.Join(t.TempDir(), "workload.key") + "\n"
	var servers []*server
	for i, addr := range addrs {
		servers = append(servers, startServer(t, serverOpts{Config: cfg, Addr: addr}))
		if i == 0 {
			waitFor(t, 10*time.Second, "the first server to lead", func() (bool, string) {
				r := readyz(servers[0])
				return r["role"] == "leader", jsonStr(r["role"])
			})
		}
	}
	leaderOf := func() *server {
		for _, s := range servers {
			if s.running() && readyz(s)["role"] == "leader" {
				return s
			}
		}
		return nil
	}
	// Users reach the servers through the front URL, with the admin token
	// the first start created.
	users := *servers[0]
	users.env = append(append([]string(nil), servers[0].env...), "SHOAL_SERVER="+front)
	createCluster(t, &users, "ha-cluster", "--max-instances", "4", "--idle-time-before-scale-down", "60")
	file := writeJobFile(t, "type: command\ncommand: echo ran on $SHOAL_NODE_ID; sleep 0.1\ncompute: azureml:ha-cluster\n")
	jobs := make([]string, 0, 200)
	submitted := make(chan struct{})
	var submitMu sync.Mutex
	var submitErr string
	go func() {
		defer close(submitted)
		// Named, so that a submission cut short by a kill is retried
		// safely: a job is created once per name.
		for i := range 200 {
			name := fmt.Sprintf("ha-job-%03d", i)
			for try := 1; ; try++ {
				_, errOut, code := run(t, users.env, "job", "create", "-f", file, "--name", name, "-o", "none")
				if code == 0 {
					break
				}
				if try == 10 {
					submitMu.Lock()
					submitErr = name + ": " + errOut
					submitMu.Unlock()
					return
				}
				time.Sleep(200 * time.Millisecond)
			}
			submitMu.Lock()
			jobs = append(jobs, name)
			submitMu.Unlock()
		}
	}()
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1))
	for round := 1; round <= 3; round++ {
		time.Sleep(time.Duration(300+rng.IntN(1500)) * time.Millisecond)
		old := leaderOf()
		if old == nil {
			t.Fatalf("round %d: no server leads", round)
		}
		old.kill9()
		killed := time.Now()
		var next *server
		waitFor(t, 20*time.Second, "another server to lead", func() (bool, string) {
			next = leaderOf()
			return next != nil, "none yet"
		})
		t.Logf("round %d: kill -9 of the leader → the next leads (and decides) after %v (leader_lease 2s)", round, time.Since(killed).Round(10*time.Millisecond))
		old.restart()
	}
	<-submitted
	if submitErr != "" {
		t.Fatalf("a job could not be submitted in 10 tries: %s", submitErr)
	}
	for _, j := range jobs {
		if v := waitJob(t, &users, j, 120*time.Second, "Completed"); v.AttemptCount != 1 {
			t.Errorf("%s ran %d times", j, v.AttemptCount)
		}
	}
	// Files are in the database: a job's log from any server.
	for _, s := range servers {
		direct := *s
		direct.env = append(append([]string(nil), servers[0].env...), "SHOAL_SERVER="+s.url)
		if log := jobLog(t, &direct, jobs[0]); !strings.Contains(log, "ran on ") {
			t.Errorf("the log of %s from %s: %q", jobs[0], s.url, log)
		}
	}
	// No node leaked or doubled: one agent per node, at most max_instances.
	nodes := listNodes(t, &users, "ha-cluster")
	agents := map[string]int{}
	for _, p := range allProcs() {
		if strings.Contains(p.cmdline, " agent ") && strings.Contains(p.cmdline, "--node-id ha-cluster-") {
			f := strings.Fields(p.cmdline[strings.Index(p.cmdline, "--node-id "):])
			agents[f[1]]++
		}
	}
	if len(nodes) > 4 || len(agents) != len(nodes) {
		t.Errorf("nodes %s; agents %v", describeNodes(nodes), agents)
	}
	for _, n := range nodes {
		if agents[n.ID] != 1 {
			t.Errorf("node %s has %d agents", n.ID, agents[n.ID])
		}
	}
	leader := leaderOf()
	if leader == nil {
		t.Fatal("no server leads at the end")
	}
	direct := append(append([]string(nil), servers[0].env...), "SHOAL_SERVER="+leader.url)
	status := runJSON[map[string]any](t, direct, "admin", "status", "-o", "json")
	if reps, _ := status["replicas"].([]any); status["role"] != "leader" || len(reps) < 3 || status["lease_renewed_ago"] == nil {
		t.Errorf("admin status on the leader: %v", status)
	}
}

// A leader cut off from the database steps down before its lease ends —
// it cannot renew, so it stops deciding — and the other server takes
// over; the jobs all complete once.
func TestLeaderPartitionedFromDatabase(t *testing.T) {
	t.Parallel()
	leaderPartitioned(t, "part-cluster", (*testproxy.Proxy).Cut, 3*time.Second)
}

// A leader whose network to the database drops its packets (a silent
// partition: nothing closes) steps down, the other server leads and
// writes (a write the cut-off one held open ends within the store's idle
// bound), its agents move their heartbeats to it within their lease, and
// every job completes once.
func TestLeaderSilentlyPartitionedFromDatabase(t *testing.T) {
	t.Parallel()
	leaderPartitioned(t, "frozen-cluster", (*testproxy.Proxy).Freeze, 0)
}

// leaderPartitioned runs 10 jobs on two servers behind a front that
// routes by /readyz, the first leading through a proxy to the database,
// applies fault to that proxy once a job has completed, and checks that
// the other server leads and every job completes exactly once. stepDown,
// when set, bounds how soon the cut-off leader must say it stepped down.
func leaderPartitioned(t *testing.T, cluster string, fault func(*testproxy.Proxy), stepDown time.Duration) {
	pg := testpg.Start(t)
	url := pg.NewDatabase(t)
	dbAddr := strings.SplitN(strings.TrimPrefix(url, "postgres://shoal@"), "/", 2)[0]
	proxy := testproxy.New(t, dbAddr)
	addrA, addrB := freeAddr(t), freeAddr(t)
	front := frontProxy(t, addrA, addrB)
	common := fastJobsConfig + "leader_lease: 3s\nadvertise_url: " + front + "\n" +
		"secrets_key_file: " + filepath.Join(t.TempDir(), "workload.key") + "\n"
	a := startServer(t, serverOpts{Config: common + "store: " + strings.Replace(url, dbAddr, proxy.Addr(), 1) + "\n", Addr: addrA})
	waitFor(t, 10*time.Second, "the first server to lead", func() (bool, string) {
		r := readyz(a)
		return r["role"] == "leader", jsonStr(r["role"])
	})
	b := startServer(t, serverOpts{Config: common + "store: " + url + "\n", Addr: addrB})
	users := *a
	users.env = append(append([]string(nil), a.env...), "SHOAL_SERVER="+front)
	createCluster(t, &users, cluster, "--max-instances", "2", "--idle-time-before-scale-down", "60")
	file := writeJobFile(t, "type: command\ncommand: sleep 0.3\ncompute: azureml:"+cluster+"\n")
	var jobs []string
	for range 10 {
		jobs = append(jobs, submitJob(t, &users, file))
	}
	waitJob(t, &users, jobs[1], 60*time.Second, "Completed")
	fault(proxy)
	faultAt := time.Now()
	if stepDown > 0 {
		waitFor(t, 10*time.Second, "the cut-off leader to step down", func() (bool, string) {
			r := readyz(a)
			return r["role"] == "follower", jsonStr(r["role"])
		})
		if stepped := time.Since(faultAt); stepped >= stepDown {
			t.Errorf("the cut-off leader stepped down %v after the cut; want before its %v lease ended", stepped, stepDown)
		}
	}
	waitFor(t, 30*time.Second, "the other server to lead", func() (bool, string) {
		r := readyz(b)
		return r["role"] == "leader", jsonStr(r["role"])
	})
	t.Logf("leader partitioned from the database: the other leads after %v (leader_lease 3s)", time.Since(faultAt).Round(10*time.Millisecond))
	for _, j := range jobs {
		if v := waitJob(t, &users, j, 120*time.Second, "Completed"); v.AttemptCount != 1 {
			t.Errorf("%s ran %d times", j, v.AttemptCount)
		}
	}
}
