package e2e_test

import (
	"strings"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/internal/testpg"
)

// The server on PostgreSQL (store: postgres://...): the cluster tour runs,
// a restart finds everything where it was, and the URL's password is
// never logged.
func TestServerOnPostgres(t *testing.T) {
	t.Parallel()
	pg := testpg.Start(t)
	url := strings.Replace(pg.NewDatabase(t), "postgres://shoal@", "postgres://shoal:pw-not-for-logs@", 1)
	s := startServer(t, serverOpts{Config: fastJobsConfig + "store: " + url + "\n"})
	createCluster(t, s, "pg-cluster", "--max-instances", "1", "--idle-time-before-scale-down", "60")
	file := writeJobFile(t, "type: command\ncommand: echo hello from postgres\ncompute: azureml:pg-cluster\n")
	first := submitJob(t, s, file)
	waitJob(t, s, first, 60*time.Second, "Completed")
	s.restart()
	if j := waitJob(t, s, first, 10*time.Second, "Completed"); j.AttemptCount != 1 {
		t.Errorf("after a restart: %s", j)
	}
	second := submitJob(t, s, file)
	waitJob(t, s, second, 60*time.Second, "Completed")
	if log := jobLog(t, s, second); !strings.Contains(log, "hello from postgres") {
		t.Errorf("log %q", log)
	}
	if strings.Contains(s.log(), "pw-not-for-logs") {
		t.Error("the store URL's password is in the server's log")
	}
	if !strings.Contains(s.log(), "store opened") {
		t.Error("the server's log does not say which store it opened")
	}
}
