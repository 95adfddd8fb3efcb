package sqlite

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestReaderConnectionsAreQueryOnly(t *testing.T) {
	db, err := Open(t.Context(), Config{Path: filepath.Join(t.TempDir(), "shoal.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	// Bypass the Tx guard: the reader pool itself must refuse writes.
	_, err = db.ro.ExecContext(t.Context(), `INSERT INTO settings (key, value) VALUES ($1, $2)`, "k", "v")
	if err == nil {
		t.Fatal("write through a reader connection succeeded")
	}
	if !strings.Contains(strings.ToLower(err.Error()), "readonly") && !strings.Contains(strings.ToLower(err.Error()), "read-only") {
		t.Logf("write through a reader failed with: %v", err)
	}
}

func TestDSNEscapesPath(t *testing.T) {
	got := dsn("/tmp/a b/c?d#e%f.db", false)
	if !strings.HasPrefix(got, "file:/tmp/a%20b/c%3Fd%23e%25f.db?") {
		t.Errorf("dsn = %q", got)
	}
	if !strings.Contains(got, "_txlock=immediate") {
		t.Errorf("writer dsn %q lacks _txlock=immediate", got)
	}
	if r := dsn("/x.db", true); strings.Contains(r, "immediate") || !strings.Contains(r, "_query_only=1") {
		t.Errorf("reader dsn = %q", r)
	}
}
