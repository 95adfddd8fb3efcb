package e2e_test

import (
	"crypto/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Data assets and models through the CLI: a local folder and a local
// file are uploaded and registered as their workspaceblobstore URIs, a
// URI is registered as written; versions, @latest and archive behave as
// every asset's; hostile paths are refused naming the field; an upload
// that fails (the workspace's storage quota) leaves no version.
func TestDataAssetsCLI(t *testing.T) {
	t.Parallel()
	s := startServer(t, serverOpts{})
	dir := t.TempDir()
	write := dirWriter(t, dir)
	write("iris/part-0.csv", "a,b\n1,2\n")
	write("iris/part-1.csv", "a,b\n3,4\n")
	folder := write("data.yml", "$schema: https://azuremlschemas.azureedge.net/latest/data.schema.json\nname: iris\ntype: uri_folder\npath: ./iris\ndescription: Iris parts\n")
	got := strings.TrimSpace(mustRun(t, s.env, "data", "create", "-f", folder, "--query", "[version, path]", "-o", "tsv"))
	prefix := "azureml://datastores/workspaceblobstore/paths/LocalUpload/"
	if !strings.HasPrefix(got, "1\n"+prefix) || !strings.HasSuffix(got, "/") {
		t.Fatalf("a local folder registered as %q, want version 1 at its upload's folder", got)
	}
	// The same files again are the same version (the same upload).
	if again := strings.TrimSpace(mustRun(t, s.env, "data", "create", "-f", folder, "--version", "1", "--query", "path", "-o", "tsv")); "1\n"+again != got {
		t.Errorf("the same folder again = %q, want %q", again, got)
	}
	write("iris.csv", "a,b\n5,6\n")
	file := strings.TrimSpace(mustRun(t, s.env, "data", "create", "--name", "iris", "--type", "uri_file", "--path", filepath.Join(dir, "iris.csv"), "--query", "path", "-o", "tsv"))
	if !strings.HasPrefix(file, prefix) || !strings.HasSuffix(file, "/iris.csv") {
		t.Errorf("a local file registered as %q, want the file in its upload", file)
	}
	if v := strings.TrimSpace(mustRun(t, s.env, "data", "show", "--name", "iris", "--label", "latest", "--query", "version", "-o", "tsv")); v != "2" {
		t.Errorf("latest = %q, want 2", v)
	}
	mustRun(t, s.env, "data", "create", "--name", "remote", "--type", "uri_file", "--path", "https://example.com/iris.csv", "-o", "none")
	mustRun(t, s.env, "data", "archive", "--name", "iris", "--version", "2", "-o", "none")
	if v := strings.TrimSpace(mustRun(t, s.env, "data", "show", "--name", "iris", "--label", "latest", "--query", "version", "-o", "tsv")); v != "1" {
		t.Errorf("latest after archiving 2 = %q, want 1", v)
	}
	list := mustRun(t, s.env, "data", "list", "-o", "tsv")
	if !strings.Contains(list, "iris\t1\turi_folder") || !strings.Contains(list, "remote\t1\turi_file\thttps://example.com/iris.csv") || strings.Contains(list, "iris\t2") {
		t.Errorf("list = %q", list)
	}

	for args, field := range map[string][]string{
		"path": {"data", "create", "--name", "bad", "--path", "azureml://datastores/ds/paths/a/../../b"},
		"type": {"data", "create", "--name", "bad", "--type", "uri_table", "--path", "s3://b/k"},
	} {
		_, stderr, code := run(t, s.env, field...)
		if code == 0 || !strings.Contains(stderr, args) {
			t.Errorf("%v: exit %d, %q; want refused naming %s", field, code, stderr, args)
		}
	}
	_, stderr, code := run(t, s.env, "data", "create", "--name", "bad", "--type", "uri_file", "--path", filepath.Join(dir, "iris"))
	if code == 0 || !strings.Contains(stderr, "path") || !strings.Contains(stderr, "uri_folder") {
		t.Errorf("a folder as a uri_file: exit %d, %q", code, stderr)
	}

	write("model/MLmodel", "flavors:\n  python_function: {}\n")
	modelFile := write("model.yml", "name: clf\ntype: mlflow_model\npath: model\nproperties:\n  framework: sklearn\n")
	if got := strings.TrimSpace(mustRun(t, s.env, "model", "create", "-f", modelFile, "--query", "[version, type]", "-o", "tsv")); got != "1\nmlflow_model" {
		t.Errorf("model create = %q", got)
	}
	if got := mustRun(t, s.env, "model", "show", "--name", "clf", "--version", "1", "--query", "path", "-o", "tsv"); !strings.HasPrefix(got, prefix) {
		t.Errorf("model path = %q", got)
	}

	// A failed upload registers nothing: the quota refuses the upload
	// before any version is created.
	mustRun(t, s.env, "workspace", "update", "--storage-quota-bytes", "64KiB", "-o", "none")
	big := make([]byte, 1<<20)
	if _, err := rand.Read(big); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "big"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "big", "blob.bin"), big, 0o644); err != nil {
		t.Fatal(err)
	}
	_, stderr, code = run(t, s.env, "data", "create", "--name", "big", "--path", filepath.Join(dir, "big"))
	if code == 0 || !strings.Contains(stderr, "storage_quota") {
		t.Fatalf("an upload past the quota: exit %d, %q", code, stderr)
	}
	if list := mustRun(t, s.env, "data", "list", "--name", "big", "--include-archived", "-o", "tsv"); strings.TrimSpace(list) != "" {
		t.Errorf("a failed upload left a version: %q", list)
	}
}
