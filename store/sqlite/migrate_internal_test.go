package sqlite

import (
	"database/sql"
	"log/slog"
	"path/filepath"
	"testing"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/store/sqlstore/migrate"
	"github.com/shoal-ml/shoal/store/storetest"
)

// The migrations that move or derive data keep it: a store as an older
// Shoal left it reads back through today's methods once opened
// (storetest.MigrationCases).
func TestMigrationsKeepData(t *testing.T) {
	for _, c := range storetest.MigrationCases() {
		t.Run(c.Name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "shoal.db")
			raw, err := sql.Open("sqlite", dsn(path, false))
			if err != nil {
				t.Fatal(err)
			}
			if err := migrate.Apply(t.Context(), raw, storetest.MigrationsUpTo(t, migrationFS, c.Version), nil, core.SystemClock{}, slog.New(slog.DiscardHandler)); err != nil {
				t.Fatalf("migrate to %d: %v", c.Version, err)
			}
			if err := c.Fill(raw); err != nil {
				t.Fatal(err)
			}
			if err := raw.Close(); err != nil {
				t.Fatal(err)
			}
			db, err := Open(t.Context(), Config{Path: path})
			if err != nil {
				t.Fatalf("Open after version %d: %v", c.Version, err)
			}
			defer db.Close()
			c.Check(t, db)
		})
	}
}
