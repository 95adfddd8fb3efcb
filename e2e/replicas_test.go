package e2e_test

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/internal/testpg"
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

// Two servers on one PostgreSQL database behind one URL: one leads the
// controllers, the other follows; killing the leader (kill -9) moves the
// controllers to the other within the lease's bound, every job ends
// Completed exactly once, and the other serves every job's log.
func TestReplicasFailover(t *testing.T) {
	t.Parallel()
	pg := testpg.Start(t)
	url := pg.NewDatabase(t)
	addrA, addrB := freeAddr(t), freeAddr(t)
	front := frontProxy(t, addrA, addrB)
	cfg := fastJobsConfig + "store: " + url + "\nleader_lease: 2s\nadvertise_url: " + front + "\n"
	a := startServer(t, serverOpts{Config: cfg, Addr: addrA})
	waitFor(t, 10*time.Second, "the first server to lead", func() (bool, string) {
		r := readyz(a)
		return r["role"] == "leader", jsonStr(r["role"])
	})
	b := startServer(t, serverOpts{Config: cfg, Addr: addrB})
	if r := readyz(b); r["role"] != "follower" || r["status"] != "ready" {
		t.Fatalf("the second server's /readyz: %v", r)
	}
	// Users reach the replicas through the front URL, with the admin
	// token the first start created.
	users := *a
	users.env = append(append([]string(nil), a.env...), "SHOAL_SERVER="+front)
	createCluster(t, &users, "ha-cluster", "--max-instances", "2", "--idle-time-before-scale-down", "60")
	file := writeJobFile(t, "type: command\ncommand: echo ran on $SHOAL_NODE_ID; sleep 0.3\ncompute: azureml:ha-cluster\n")
	var jobs []string
	for range 20 {
		jobs = append(jobs, submitJob(t, &users, file))
	}
	waitJob(t, &users, jobs[3], 60*time.Second, "Completed")
	a.kill9()
	killed := time.Now()
	waitFor(t, 20*time.Second, "the second server to lead", func() (bool, string) {
		r := readyz(b)
		return r["role"] == "leader", jsonStr(r["role"])
	})
	t.Logf("kill -9 of the leader → the other server leads: %v (leader_lease 2s)", time.Since(killed).Round(10*time.Millisecond))
	// Files are in the database: the surviving server serves the log of a
	// job the killed one received.
	if log := jobLog(t, &users, jobs[0]); !strings.Contains(log, "ran on ") {
		t.Errorf("the log of a job run before the failover, from the other server: %q", log)
	}
	for range 10 {
		jobs = append(jobs, submitJob(t, &users, file))
	}
	for _, j := range jobs {
		if v := waitJob(t, &users, j, 90*time.Second, "Completed"); v.AttemptCount != 1 {
			t.Errorf("%s ran %d times", j, v.AttemptCount)
		}
	}
	// The killed server comes back as a follower; admin status lists both.
	a.restart()
	if r := readyz(a); r["role"] != "follower" {
		t.Errorf("the restarted server's /readyz: %v", r)
	}
	status := runJSON[map[string]any](t, append(append([]string(nil), a.env...), "SHOAL_SERVER="+b.url), "admin", "status", "-o", "json")
	reps, _ := status["replicas"].([]any)
	if status["role"] != "leader" || len(reps) < 2 || status["lease_renewed_ago"] == nil {
		t.Errorf("admin status on the leader: %v", status)
	}
}

// cuttableProxy forwards TCP connections to backend until cut, which
// closes the listener and every connection: a network partition.
func cuttableProxy(t *testing.T, backend string) (addr string, cut func()) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	closed := false
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			up, err := net.Dial("tcp", backend)
			if err != nil {
				c.Close()
				continue
			}
			mu.Lock()
			if closed {
				mu.Unlock()
				c.Close()
				up.Close()
				return
			}
			conns = append(conns, c, up)
			mu.Unlock()
			go func() { io.Copy(up, c); up.Close() }()
			go func() { io.Copy(c, up); c.Close() }()
		}
	}()
	cut = func() {
		mu.Lock()
		defer mu.Unlock()
		closed = true
		ln.Close()
		for _, c := range conns {
			c.Close()
		}
	}
	t.Cleanup(cut)
	return ln.Addr().String(), cut
}

// A leader cut off from the database steps down before its lease ends —
// it cannot renew, so it stops deciding — and the other server takes
// over; the jobs all complete once.
func TestLeaderPartitionedFromDatabase(t *testing.T) {
	t.Parallel()
	pg := testpg.Start(t)
	url := pg.NewDatabase(t)
	dbAddr := strings.TrimPrefix(strings.SplitN(strings.TrimPrefix(url, "postgres://shoal@"), "/", 2)[0], "")
	viaProxy, cut := cuttableProxy(t, dbAddr)
	addrA, addrB := freeAddr(t), freeAddr(t)
	front := frontProxy(t, addrA, addrB)
	common := fastJobsConfig + "leader_lease: 3s\nadvertise_url: " + front + "\n"
	a := startServer(t, serverOpts{Config: common + "store: " + strings.Replace(url, dbAddr, viaProxy, 1) + "\n", Addr: addrA})
	waitFor(t, 10*time.Second, "the first server to lead", func() (bool, string) {
		r := readyz(a)
		return r["role"] == "leader", jsonStr(r["role"])
	})
	b := startServer(t, serverOpts{Config: common + "store: " + url + "\n", Addr: addrB})
	users := *a
	users.env = append(append([]string(nil), a.env...), "SHOAL_SERVER="+front)
	createCluster(t, &users, "part-cluster", "--max-instances", "2", "--idle-time-before-scale-down", "60")
	file := writeJobFile(t, "type: command\ncommand: sleep 0.3\ncompute: azureml:part-cluster\n")
	var jobs []string
	for range 10 {
		jobs = append(jobs, submitJob(t, &users, file))
	}
	waitJob(t, &users, jobs[1], 60*time.Second, "Completed")
	cut()
	cutAt := time.Now()
	waitFor(t, 10*time.Second, "the cut-off leader to step down", func() (bool, string) {
		r := readyz(a)
		return r["role"] == "follower", jsonStr(r["role"])
	})
	stepped := time.Since(cutAt)
	if stepped >= 3*time.Second {
		t.Errorf("the cut-off leader stepped down %v after the cut; want before its 3 s lease ended", stepped)
	}
	waitFor(t, 20*time.Second, "the other server to lead", func() (bool, string) {
		r := readyz(b)
		return r["role"] == "leader", jsonStr(r["role"])
	})
	t.Logf("leader cut from the database: stepped down after %v, the other leads after %v (leader_lease 3s)", stepped.Round(10*time.Millisecond), time.Since(cutAt).Round(10*time.Millisecond))
	for _, j := range jobs {
		if v := waitJob(t, &users, j, 90*time.Second, "Completed"); v.AttemptCount != 1 {
			t.Errorf("%s ran %d times", j, v.AttemptCount)
		}
	}
}
