package postgres_test

import (
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/internal/testpg"
	"github.com/shoal-ml/shoal/store"
	"github.com/shoal-ml/shoal/store/postgres"
	"github.com/shoal-ml/shoal/store/storetest"
)

// The conformance suite the SQLite store passes, nothing skipped, against
// a real PostgreSQL server: each case on a database of its own.
func TestStore(t *testing.T) {
	t.Parallel() // beside TestWriterCutOffMidTransactionReleasesItsLocks, which mostly waits
	pg := testpg.Start(t)
	storetest.Run(t, func(t *testing.T, clock core.Clock) store.Store {
		db, err := postgres.Open(t.Context(), postgres.Config{URL: pg.NewDatabase(t), Clock: clock})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if err := db.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
		})
		return db
	})
}

// A password in the URL is never in an error or a log line.
func TestPasswordNeverShown(t *testing.T) {
	_, err := postgres.Open(t.Context(), postgres.Config{URL: "postgres://shoal:s3cret-pw@127.0.0.1:1/x?connect_timeout=1"})
	if err == nil || strings.Contains(err.Error(), "s3cret-pw") {
		t.Fatalf("error %v: want a failure without the password", err)
	}
	if got := postgres.Redact("postgres://u:s3cret-pw@h/db"); strings.Contains(got, "s3cret-pw") {
		t.Fatalf("Redact = %q", got)
	}
}
