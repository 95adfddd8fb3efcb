package e2e_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/internal/testpg"
	"github.com/shoal-ml/shoal/store/postgres"
	"github.com/shoal-ml/shoal/store/sqlite"
	"github.com/shoal-ml/shoal/store/sqlstore/storecopy"
)

// An installation moves from SQLite to PostgreSQL and back without losing
// a row (compared table by table), a backup taken while the server runs
// restores into a new data dir, and the server runs on the moved store:
// the same jobs, the same admin token, new jobs after them.
func TestBackupRestoreAndMigrateStore(t *testing.T) {
	t.Parallel()
	pg := testpg.Start(t)
	s := startServer(t, serverOpts{Config: fastJobsConfig})
	createCluster(t, s, "move-cluster", "--max-instances", "1", "--idle-time-before-scale-down", "600")
	file := writeJobFile(t, "type: command\ncommand: echo moved\ncompute: azureml:move-cluster\n")
	var jobs []string
	for range 3 {
		jobs = append(jobs, submitJob(t, s, file))
	}
	for _, j := range jobs {
		waitJob(t, s, j, 60*time.Second, "Completed")
	}
	// A workspace's budgets and limits have tables of their own: they move too.
	mustRun(t, s.env, "budget", "create", "--scope", "tag:team=vision", "--limit", "500.25", "--period", "month", "-o", "none")
	mustRun(t, s.env, "workspace", "update", "--max-log-bytes", "50MiB", "-o", "none")
	// So do webhooks, their sealed secrets and deliveries.
	mustRun(t, s.env, "webhook", "create", "--name", "moved", "--url", "https://203.0.113.7/hook", "--events", "job_failed", "-o", "none")
	mustRun(t, s.env, "webhook", "test", "-n", "moved", "-o", "none")
	// A backup while the server serves (a job is being submitted meanwhile).
	backup := filepath.Join(s.dir, "backup.db")
	during := make(chan string, 1)
	go func() { during <- submitJob(t, s, file) }()
	if out, errOut, code := run(t, s.env, "admin", "backup", "--data-dir", s.dataDir, "--to", backup); code != 0 || !strings.Contains(out, "copied") {
		t.Fatalf("backup: %d %s %s", code, out, errOut)
	}
	jobs = append(jobs, <-during)
	waitJob(t, s, jobs[3], 60*time.Second, "Completed")
	if _, errOut, code := run(t, s.env, "admin", "backup", "--data-dir", s.dataDir, "--to", backup); code == 0 || !strings.Contains(errOut, "exists") {
		t.Errorf("a backup over an existing file: %d %s", code, errOut)
	}
	s.stop()

	// SQLite → PostgreSQL → SQLite, compared row for row.
	from := "sqlite://" + filepath.Join(s.dataDir, "shoal.db")
	pgURL := pg.NewDatabase(t)
	back := "sqlite://" + filepath.Join(s.dir, "back.db")
	for _, step := range [][2]string{{from, pgURL}, {pgURL, back}} {
		if out, errOut, code := run(t, s.env, "admin", "migrate-store", "--from", step[0], "--to", step[1]); code != 0 {
			t.Fatalf("migrate-store %s → %s: %d %s %s", step[0], step[1], code, out, errOut)
		}
	}
	orig, moved, returned := dumpSQLite(t, strings.TrimPrefix(from, "sqlite://")), dumpPostgres(t, pgURL), dumpSQLite(t, strings.TrimPrefix(back, "sqlite://"))
	for _, table := range storecopy.Tables {
		if !reflect.DeepEqual(orig[table], moved[table]) || !reflect.DeepEqual(orig[table], returned[table]) {
			t.Errorf("table %s differs:\nsqlite   %q\npostgres %q\nback     %q", table, orig[table], moved[table], returned[table])
		}
	}
	if len(orig["jobs"]) != 4 || len(orig["audit_log"]) == 0 || len(orig["api_tokens"]) == 0 {
		t.Errorf("the store held %d jobs, %d audit records, %d tokens", len(orig["jobs"]), len(orig["audit_log"]), len(orig["api_tokens"]))
	}
	if len(orig["workspace_budgets"]) != 1 || len(orig["workspace_limits"]) != 1 {
		t.Errorf("the store held %d budgets, %d workspace limits; want 1 each", len(orig["workspace_budgets"]), len(orig["workspace_limits"]))
	}
	if len(orig["webhooks"]) != 1 || len(orig["notify_deliveries"]) != 1 {
		t.Errorf("the store held %d webhooks, %d deliveries; want 1 each", len(orig["webhooks"]), len(orig["notify_deliveries"]))
	}
	// Copying into a store that holds anything is refused.
	if _, errOut, code := run(t, s.env, "admin", "migrate-store", "--from", from, "--to", pgURL); code == 0 || !strings.Contains(errOut, "not empty") {
		t.Errorf("a copy into a used store: %d %s", code, errOut)
	}

	// The server on the moved store: same jobs, same token, and more.
	writeFile(t, s.config, fastJobsConfig+"store: "+pgURL+"\n")
	s.restart()
	for _, j := range jobs {
		waitJob(t, s, j, 10*time.Second, "Completed")
	}
	// The files moved with the store: PostgreSQL serves the logs written
	// to SQLite's files/, and the copy back wrote them beside back.db.
	if log := jobLog(t, s, jobs[0]); !strings.Contains(log, "moved") {
		t.Errorf("a job's log after the move: %q", log)
	}
	if logs, _ := filepath.Glob(filepath.Join(s.dir, "files", "logs", "default", "*", "1", "rank-0.log")); len(logs) != 4 {
		t.Errorf("logs copied back out of PostgreSQL: %v; want 4", logs)
	}
	if out := mustRun(t, s.env, "budget", "list", "-o", "json"); !strings.Contains(out, "tag:team=vision") || !strings.Contains(out, "500.25") {
		t.Errorf("budgets on the moved store: %s", out)
	}
	if out := mustRun(t, s.env, "workspace", "limits", "-o", "json"); !strings.Contains(out, "52428800") {
		t.Errorf("workspace limits on the moved store: %s", out)
	}
	next := submitJob(t, s, file)
	waitJob(t, s, next, 60*time.Second, "Completed")
	// PostgreSQL's delivery IDs move on past the copied ones.
	mustRun(t, s.env, "webhook", "test", "-n", "moved", "-o", "none")
	var ds []struct {
		ID    int64  `json:"id"`
		Event string `json:"event"`
	}
	out := mustRun(t, s.env, "webhook", "deliveries", "-n", "moved", "-o", "json")
	if err := json.Unmarshal([]byte(out), &ds); err != nil || len(ds) != 2 || ds[0].ID <= ds[1].ID || ds[0].Event != "ping" {
		t.Errorf("deliveries on the moved store: %s (%v)", out, err)
	}

	// The backup restores into a new data dir.
	fresh := filepath.Join(s.dir, "fresh")
	if out, errOut, code := run(t, s.env, "admin", "restore", "--from", backup, "--data-dir", fresh); code != 0 {
		t.Fatalf("restore: %d %s %s", code, out, errOut)
	}
	restored := dumpSQLite(t, filepath.Join(fresh, "shoal.db"))
	if got := len(restored["jobs"]); got < 3 {
		t.Errorf("the restored store has %d jobs; want the 3 done before the backup at least", got)
	}
	if _, errOut, code := run(t, s.env, "admin", "restore", "--from", filepath.Join(s.dir, "nope.db"), "--data-dir", filepath.Join(s.dir, "other")); code == 0 || !strings.Contains(errOut, "does not exist") {
		t.Errorf("a restore from a missing file: %d %s", code, errOut)
	}
}

func dumpSQLite(t *testing.T, path string) map[string][]string {
	t.Helper()
	if _, err := os.Stat(path); err != nil {
		t.Fatal(err)
	}
	db, err := sqlite.Open(context.Background(), sqlite.Config{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	d, err := storecopy.Dump(context.Background(), db.CopyEndpoint().DB)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func dumpPostgres(t *testing.T, url string) map[string][]string {
	t.Helper()
	db, err := postgres.Open(context.Background(), postgres.Config{URL: url})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	d, err := storecopy.Dump(context.Background(), db.CopyEndpoint().DB)
	if err != nil {
		t.Fatal(err)
	}
	return d
}
