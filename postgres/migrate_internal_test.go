package postgres

import (
	"database/sql"
	"log/slog"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver

	"github.com/shoal-ml/shoal"
	"github.com/shoal-ml/shoal/internal/testpg"
	"github.com/shoal-ml/shoal/sqlstore"
	"github.com/shoal-ml/shoal/storetest"
)

// Migration 0020 moves a workspace's budgets, quotas and limits out of
// settings into their tables, keeping them: a store at version 19 with
// the old rows reads them back through the typed methods once opened.
func TestMigrationMovesWorkspaceSettings(t *testing.T) {
	url := testpg.Start(t).NewDatabase(t)
	raw, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	if err := sqlstore.Migrate(t.Context(), raw, storetest.MigrationsUpTo(t, migrationFS, 19), nil, shoal.SystemClock{}, slog.New(slog.DiscardHandler)); err != nil {
		t.Fatalf("migrate to 19: %v", err)
	}
	for k, v := range storetest.LegacySettings() {
		if _, err := raw.Exec(`INSERT INTO settings (key, value) VALUES ($1, $2)`, k, v); err != nil {
			t.Fatal(err)
		}
	}
	if err := raw.Close(); err != nil {
		t.Fatal(err)
	}
	db, err := Open(t.Context(), Config{URL: url})
	if err != nil {
		t.Fatalf("Open after version 19: %v", err)
	}
	defer db.Close()
	storetest.CheckLegacySettings(t, db)
}

// Migration 0029 counts the live nodes of a store at version 28 from
// their documents.
func TestMigrationCountsLiveNodes(t *testing.T) {
	url := testpg.Start(t).NewDatabase(t)
	raw, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	if err := sqlstore.Migrate(t.Context(), raw, storetest.MigrationsUpTo(t, migrationFS, 28), nil, shoal.SystemClock{}, slog.New(slog.DiscardHandler)); err != nil {
		t.Fatalf("migrate to 28: %v", err)
	}
	for _, q := range storetest.LegacyNodeRows() {
		if _, err := raw.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	if err := raw.Close(); err != nil {
		t.Fatal(err)
	}
	db, err := Open(t.Context(), Config{URL: url})
	if err != nil {
		t.Fatalf("Open after version 28: %v", err)
	}
	defer db.Close()
	storetest.CheckLegacyNodes(t, db)
}
