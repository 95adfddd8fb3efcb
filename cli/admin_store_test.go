package cli

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/cli/cmdutil"
	"github.com/shoal-ml/shoal/server/app"
	"github.com/shoal-ml/shoal/store/sqlite"
)

// runAs runs the CLI as if this process were root or not.
func runAs(t *testing.T, root bool, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var out, errOut bytes.Buffer
	g := &cmdutil.Globals{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errOut, IsRoot: func() bool { return root }}
	cmd := newRootCommand(g)
	cmd.SetArgs(args)
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	err = cmd.ExecuteContext(context.Background())
	return out.String(), errOut.String(), err
}

// `shoal admin` takes store URLs in flags: one with a password is refused
// as root (every process on the host, jobs included, reads a command
// line) and warned about otherwise; backup and restore read SHOAL_STORE
// when --store is not given.
func TestAdminStoreURLsOnTheCommandLine(t *testing.T) {
	dir := t.TempDir()
	pg := "postgres://shoal:hunter2@127.0.0.1:1/shoal?connect_timeout=1"
	src := filepath.Join(dir, "src.db")
	t.Setenv(app.StoreEnv, "")
	db, err := sqlite.Open(t.Context(), sqlite.Config{Path: src})
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	for _, c := range []struct {
		name string
		args []string
		flag string
	}{
		{"backup --store", []string{"admin", "backup", "--store", pg, "--to", filepath.Join(dir, "b1.db")}, "--store"},
		{"restore --store", []string{"admin", "restore", "--from", src, "--store", pg}, "--store"},
		{"migrate-store --to", []string{"admin", "migrate-store", "--from", "sqlite://" + src, "--to", pg}, "--to"},
		{"migrate-store --from", []string{"admin", "migrate-store", "--from", pg, "--to", "sqlite://" + filepath.Join(dir, "m.db")}, "--from"},
	} {
		_, errOut, err := runAs(t, true, c.args...)
		if err == nil || !strings.Contains(err.Error(), c.flag+": a password on the command line is readable by every process on this host, including jobs") || strings.Contains(err.Error(), "hunter2") {
			t.Errorf("%s as root: %v; want refused naming %s, without the password", c.name, err, c.flag)
		}
		_, errOut, err = runAs(t, false, c.args...)
		if !strings.Contains(errOut, "warning: "+c.flag+": a password on the command line") {
			t.Errorf("%s not as root: stderr %q; want a warning", c.name, errOut)
		}
		if err == nil || strings.Contains(err.Error(), "a password on the command line") {
			t.Errorf("%s not as root: %v; want it to go on (and fail to reach the database)", c.name, err)
		}
	}
	// SHOAL_STORE is the store when --store is not given.
	t.Setenv(app.StoreEnv, "sqlite://"+src)
	out, errOut, err := runAs(t, true, "admin", "backup", "--data-dir", filepath.Join(dir, "no-such-data-dir"), "--to", filepath.Join(dir, "b2.db"))
	if err != nil || !strings.Contains(out, "copied") {
		t.Fatalf("backup of SHOAL_STORE: %v %s %s", err, out, errOut)
	}
	// --store wins over SHOAL_STORE.
	_, _, err = runAs(t, true, "admin", "backup", "--store", "sqlite://"+filepath.Join(dir, "nope.db"), "--to", filepath.Join(dir, "b3.db"))
	if err == nil || !strings.Contains(err.Error(), "nope.db") {
		t.Errorf("--store over SHOAL_STORE: %v; want the --store file's error", err)
	}
}
