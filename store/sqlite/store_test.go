package sqlite_test

import (
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/store"
	"github.com/shoal-ml/shoal/store/sqlite"
	"github.com/shoal-ml/shoal/store/sqlite/sqlitetest"
	"github.com/shoal-ml/shoal/store/storetest"
)

func open(t *testing.T, path string, clock core.Clock) *sqlite.DB {
	t.Helper()
	db, err := sqlite.Open(t.Context(), sqlite.Config{Path: path, Clock: clock})
	if err != nil {
		t.Fatalf("Open(%q): %v", path, err)
	}
	return db
}

// TestStore runs the conformance suite on stores copied from one migrated
// once (sqlitetest.Path): the suite is about the queries, and migrating
// each of its stores was a third of this package's CPU under the race
// detector. The migrations are tested on fresh files by the tests below
// and TestMigrations*.
func TestStore(t *testing.T) {
	storetest.Run(t, func(t *testing.T, clock core.Clock) store.Store {
		db := open(t, sqlitetest.Path(t, t.TempDir(), "shoal.db"), clock)
		t.Cleanup(func() {
			if err := db.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
		})
		return db
	})
}

func TestReopenKeepsData(t *testing.T) {
	// A path with characters that need escaping in a file: URI, in a
	// directory that does not exist yet.
	path := filepath.Join(t.TempDir(), "dir with space", "a?b#c%20", "shoal.db")
	clock := storetest.NewClock(storetest.Start)
	db := open(t, path, clock)
	var created *compute.Compute
	err := db.Update(t.Context(), func(tx store.Tx) error {
		if err := tx.InsertWorkspace(&core.Workspace{Name: "prod", Location: "westeurope", CreatedOn: tx.Now()}); err != nil {
			return err
		}
		created = &compute.Compute{
			ComputeSpec: compute.ComputeSpec{Name: "gpu", Type: compute.ComputeTypeCluster,
				SSHSettings: &compute.SSHSettings{AdminUsername: "u", AdminPassword: "pw"}},
			Workspace: "prod", Version: 3, ProvisioningState: compute.ProvisioningSucceeded,
			ProvisioningErrors: []compute.ProvisioningError{}, CreatedOn: tx.Now(), ModifiedOn: tx.Now(),
		}
		if err := tx.InsertCompute(created); err != nil {
			return err
		}
		if err := tx.AppendEvent(&core.Event{Time: tx.Now(), Workspace: "prod", ResourceType: core.ResourceCompute, ResourceName: "gpu", Kind: core.EventCreated}); err != nil {
			return err
		}
		return tx.PutSetting("k", "v")
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("database file: %v", err)
	}

	db = open(t, path, clock)
	defer db.Close()
	err = db.View(t.Context(), func(tx store.Tx) error {
		c, err := tx.GetCompute("prod", "gpu")
		if err != nil {
			return err
		}
		if c.Version != 3 || c.ETag != `"3"` || c.SSHSettings == nil || c.SSHSettings.AdminPassword != "pw" || !c.CreatedOn.Equal(created.CreatedOn) {
			t.Errorf("compute after reopen: %+v", c)
		}
		if _, err := tx.GetWorkspace("prod"); err != nil {
			return err
		}
		if v, err := tx.GetSetting("k"); err != nil || v != "v" {
			t.Errorf("setting after reopen: %q, %v", v, err)
		}
		events, err := tx.ListEvents(core.EventFilter{})
		if err != nil || len(events) != 1 || events[0].ID != 1 {
			t.Errorf("events after reopen: %v, %v", events, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// IDs keep growing after a reopen.
	err = db.Update(t.Context(), func(tx store.Tx) error {
		e := &core.Event{Time: tx.Now(), Workspace: "prod", Kind: core.EventDeleted}
		if err := tx.AppendEvent(e); err != nil {
			return err
		}
		if e.ID != 2 {
			t.Errorf("event ID after reopen = %d, want 2", e.ID)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestMigrationsIdempotent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "shoal.db")
	for i := range 3 {
		db := open(t, path, nil)
		if err := db.Close(); err != nil {
			t.Fatalf("Close %d: %v", i, err)
		}
	}
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	rows, err := raw.Query(`SELECT version, name FROM schema_migrations ORDER BY version`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var got []string
	for rows.Next() {
		var v int64
		var name string
		if err := rows.Scan(&v, &name); err != nil {
			t.Fatal(err)
		}
		got = append(got, name)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if len(got) == 0 || got[0] != "0001_init.sql" {
		t.Errorf("schema_migrations = %v, want each migration once, starting with 0001_init.sql", got)
	}
	seen := map[string]bool{}
	for _, n := range got {
		if seen[n] {
			t.Errorf("migration %s recorded twice", n)
		}
		seen[n] = true
	}
	var mode string
	if err := raw.QueryRow(`PRAGMA journal_mode`).Scan(&mode); err != nil || !strings.EqualFold(mode, "wal") {
		t.Errorf("journal_mode = %q, %v; want wal", mode, err)
	}
}

func TestNewerSchemaRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "shoal.db")
	db := open(t, path, nil)
	db.Close()
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Exec(`INSERT INTO schema_migrations (version, name, applied_on) VALUES (9999, '9999_future.sql', 0)`); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	_, err = sqlite.Open(t.Context(), sqlite.Config{Path: path})
	if err == nil || !strings.Contains(err.Error(), "newer") {
		t.Errorf("Open of a newer schema: %v, want an error saying it is newer", err)
	}
}

func TestOpenUncreatableDirectory(t *testing.T) {
	// A regular file where a parent directory should be.
	file := filepath.Join(t.TempDir(), "not-a-dir")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(file, "sub", "shoal.db")
	db, err := sqlite.Open(t.Context(), sqlite.Config{Path: path})
	if err == nil {
		db.Close()
		t.Fatalf("Open(%q) succeeded", path)
	}
	msg := err.Error()
	if !strings.Contains(msg, "create directory") || !strings.Contains(msg, path) {
		t.Errorf("Open(%q) error %q should say it cannot create the directory and name the path", path, msg)
	}
}

func TestOpenEmptyPath(t *testing.T) {
	if _, err := sqlite.Open(t.Context(), sqlite.Config{}); err == nil {
		t.Errorf("Open with an empty path succeeded")
	}
}

func TestDefaultClock(t *testing.T) {
	db := open(t, filepath.Join(t.TempDir(), "shoal.db"), nil)
	defer db.Close()
	before := time.Now().UTC().Truncate(time.Microsecond)
	err := db.View(t.Context(), func(tx store.Tx) error {
		now := tx.Now()
		if now.Before(before) || now.After(time.Now()) || now.Location() != time.UTC || now.Nanosecond()%1000 != 0 {
			t.Errorf("Tx.Now() = %v with the default clock", now)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestViewRunsDuringUpdate(t *testing.T) {
	db := open(t, filepath.Join(t.TempDir(), "shoal.db"), nil)
	defer db.Close()
	if err := db.Update(t.Context(), func(tx store.Tx) error { return tx.PutSetting("k", "old") }); err != nil {
		t.Fatal(err)
	}
	inUpdate, release := make(chan struct{}), make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- db.Update(t.Context(), func(tx store.Tx) error {
			if err := tx.PutSetting("k", "new"); err != nil {
				return err
			}
			close(inUpdate)
			<-release
			return nil
		})
	}()
	<-inUpdate
	viewDone := make(chan error, 1)
	go func() {
		viewDone <- db.View(t.Context(), func(tx store.Tx) error {
			v, err := tx.GetSetting("k")
			if err == nil && v != "old" {
				t.Errorf("View saw uncommitted value %q", v)
			}
			return err
		})
	}()
	select {
	case err := <-viewDone:
		if err != nil {
			t.Errorf("View during Update: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Error("View waited for the Update to finish")
		close(release)
		<-viewDone
		<-done
		return
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
