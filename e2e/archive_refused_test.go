package e2e_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestJobsUnsafeArchiveFailsAtOnce: a job whose code archive escapes its
// folder (uploaded by hand, not by the CLI, which packs safely) fails at
// once with the archive's reason, on its first attempt, instead of being
// requeued as a node loss until the requeue limit.
func TestJobsUnsafeArchiveFailsAtOnce(t *testing.T) {
	t.Parallel()
	s := startServer(t, serverOpts{Config: fastJobsConfig})
	const cluster = "unsafe-cluster"
	createCluster(t, s, cluster, "--max-instances", "1", "--idle-time-before-scale-down", "60")
	var b bytes.Buffer
	gz := gzip.NewWriter(&b)
	tw := tar.NewWriter(gz)
	body := []byte("escaped\n")
	tw.WriteHeader(&tar.Header{Name: "../../escape.txt", Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(body))})
	tw.Write(body)
	tw.Close()
	gz.Close()
	token := s.adminToken(t)
	status, _, out := s.httpDo(t, http.MethodPost, "/api/v1/workspaces/default/artifacts", token, b.Bytes(), map[string]string{"Content-Type": "application/gzip"})
	var up struct {
		ID string `json:"id"`
	}
	if status != http.StatusCreated || json.Unmarshal(out, &up) != nil || up.ID == "" {
		t.Fatalf("upload: %d %s", status, out)
	}
	job, _ := json.Marshal(map[string]any{"name": "unsafe-code", "command": "echo never", "compute": cluster, "code": up.ID})
	if status, _, out := s.httpDo(t, http.MethodPost, "/api/v1/workspaces/default/jobs", token, job, nil); status != http.StatusCreated {
		t.Fatalf("submit: %d %s", status, out)
	}
	waitFor(t, 60*time.Second, "the job to fail", func() (bool, string) {
		j := getJob(t, s, "unsafe-code")
		return j.Status == "Failed" || j.InfraRequeues > 0, j.String()
	})
	j := getJob(t, s, "unsafe-code")
	if j.Status != "Failed" || j.InfraRequeues != 0 || j.AttemptCount != 1 || !strings.Contains(j.Error+j.StatusReason, "unsafe archive entry") {
		t.Errorf("%s; want Failed on its first attempt, naming the unsafe entry", j)
	}
}
