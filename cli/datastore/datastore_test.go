package datastore_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/internal/testcli"
)

// server starts the real API and points the CLI at it (internal/testcli).
func server(t *testing.T) { testcli.Server(t, nil) }

func run(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	return testcli.Run(t, args...)
}

// create -f, list, show and delete as Azure's az ml datastore: the YAML
// with its credentials goes in, and no output shows them.
func TestDatastoreCommands(t *testing.T) {
	server(t)
	const secret = "S3-SECRET-KEY-for-the-cli"
	file := filepath.Join(t.TempDir(), "minio.yml")
	if err := os.WriteFile(file, []byte(`$schema: https://azuremlschemas.azureedge.net/latest/s3.schema.json
name: team_bucket
type: s3
description: the team's MinIO
bucket: datasets
endpoint_url: http://10.0.0.5:9000
credentials:
  access_key_id: minio
  secret_access_key: `+secret+`
`), 0o600); err != nil {
		t.Fatal(err)
	}
	var seen strings.Builder
	out, errOut, code := run(t, "datastore", "create", "-f", file)
	seen.WriteString(out + errOut)
	if code != 0 || !strings.Contains(out, "team_bucket") || !strings.Contains(out, "access_key") {
		t.Fatalf("create: exit %d: %s %s", code, out, errOut)
	}
	out, errOut, code = run(t, "datastore", "list")
	seen.WriteString(out + errOut)
	for _, want := range []string{"team_bucket", "workspaceblobstore", "workspaceartifactstore", "CREDENTIALS_TYPE"} {
		if code != 0 || !strings.Contains(strings.ToUpper(out), strings.ToUpper(want)) {
			t.Errorf("list: exit %d, want %s in:\n%s%s", code, want, out, errOut)
		}
	}
	out, errOut, code = run(t, "datastore", "show", "team_bucket", "-o", "json")
	seen.WriteString(out + errOut)
	var d map[string]any
	if code != 0 || json.Unmarshal([]byte(out), &d) != nil || d["bucket"] != "datasets" || d["region"] != "us-east-1" || d["credentials_type"] != "access_key" {
		t.Errorf("show -o json: exit %d: %s %s", code, out, errOut)
	}
	if _, ok := d["credentials"]; ok {
		t.Errorf("show has credentials: %s", out)
	}
	// A hostile endpoint is refused naming the field.
	bad := filepath.Join(t.TempDir(), "bad.yml")
	os.WriteFile(bad, []byte("name: meta\ntype: s3\nbucket: b12\nendpoint_url: http://169.254.169.254\n"), 0o600)
	out, errOut, code = run(t, "datastore", "create", "-f", bad)
	if code == 0 || !strings.Contains(errOut, "endpoint_url") || !strings.Contains(errOut, "link-local") {
		t.Errorf("metadata endpoint: exit %d: %s %s", code, out, errOut)
	}
	out, errOut, code = run(t, "datastore", "delete", "workspaceblobstore")
	if code == 0 || !strings.Contains(errOut, "built-in") {
		t.Errorf("delete built-in: exit %d: %s %s", code, out, errOut)
	}
	if out, errOut, code = run(t, "datastore", "delete", "--name", "team_bucket"); code != 0 {
		t.Errorf("delete: exit %d: %s %s", code, out, errOut)
	}
	if out, errOut, code = run(t, "datastore", "show", "team_bucket"); code == 0 || !strings.Contains(errOut, "not in workspace") {
		t.Errorf("show after delete: exit %d: %s %s", code, out, errOut)
	}
	if strings.Contains(seen.String(), secret) {
		t.Errorf("the secret came out: %s", seen.String())
	}
}
