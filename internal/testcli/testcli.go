// Package testcli runs the CLI in-process against the real API for the
// CLI's tests: a server over a SQLite store (workspace "ws") and a secrets
// key, the CLI pointed at it as the administrator.
package testcli

import (
	"bytes"
	"context"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/api"
	"github.com/shoal-ml/shoal/cli"
	"github.com/shoal-ml/shoal/internal/sealing"
	"github.com/shoal-ml/shoal/internal/teststore"
	"github.com/shoal-ml/shoal/server/config"
	"github.com/shoal-ml/shoal/service"
	"github.com/shoal-ml/shoal/store/filestore"
)

// Server starts the real API and points the CLI (its environment: the
// test's) at it as the administrator of workspace "ws". setup, when
// given, configures the API server before it serves.
func Server(t *testing.T, setup func(*api.Server)) *service.Services {
	t.Helper()
	db, _ := teststore.Open(t)
	dir := t.TempDir()
	files, err := filestore.Open(filepath.Join(dir, "files"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { files.Close() })
	key, err := sealing.LoadOrCreate(filepath.Join(dir, "keys", "workload.key"))
	if err != nil {
		t.Fatal(err)
	}
	cat, err := (&config.Config{}).Catalog(nil)
	if err != nil {
		t.Fatal(err)
	}
	svc := service.New(service.Config{Store: db, Catalog: cat, ServerURL: "http://shoal.test", Files: files, SecretsKey: key})
	token, err := svc.BootstrapAdmin(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	srv := api.NewServer(svc, nil)
	if setup != nil {
		setup(srv)
	}
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	t.Setenv("SHOAL_SERVER", ts.URL)
	t.Setenv("SHOAL_TOKEN", token)
	t.Setenv("SHOAL_WORKSPACE", "ws")
	return svc
}

// Run runs the CLI with args and no client config file; it returns its
// standard output, standard error and exit code.
func Run(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	args = append(args, "--client-config", filepath.Join(t.TempDir(), "none.yaml"))
	code := cli.Run(context.Background(), args, strings.NewReader(""), &stdout, &stderr)
	return stdout.String(), stderr.String(), code
}
