package e2e_test

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/internal/testpg"
	"github.com/shoal-ml/shoal/internal/testproxy"
)

// A leader whose network to the database drops its packets (a silent
// partition: nothing closes) steps down, the other server leads and
// writes (a write the cut-off one held open ends within the store's idle
// bound), and every job completes once.
func TestLeaderSilentlyPartitionedFromDatabase(t *testing.T) {
	t.Parallel()
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
	createCluster(t, &users, "frozen-cluster", "--max-instances", "2", "--idle-time-before-scale-down", "60")
	file := writeJobFile(t, "type: command\ncommand: sleep 0.3\ncompute: azureml:frozen-cluster\n")
	var jobs []string
	for range 10 {
		jobs = append(jobs, submitJob(t, &users, file))
	}
	waitJob(t, &users, jobs[1], 60*time.Second, "Completed")
	proxy.Freeze()
	frozenAt := time.Now()
	waitFor(t, 30*time.Second, "the other server to lead", func() (bool, string) {
		r := readyz(b)
		return r["role"] == "leader", jsonStr(r["role"])
	})
	t.Logf("leader silently partitioned from the database: the other leads after %v (leader_lease 3s)", time.Since(frozenAt).Round(10*time.Millisecond))
	for _, j := range jobs {
		if v := waitJob(t, &users, j, 120*time.Second, "Completed"); v.AttemptCount != 1 {
			t.Errorf("%s ran %d times", j, v.AttemptCount)
		}
	}
}
