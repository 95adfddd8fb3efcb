package postgres

import (
	"database/sql"
	"log/slog"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/internal/testpg"
	"github.com/shoal-ml/shoal/store/sqlstore/migrate"
	"github.com/shoal-ml/shoal/store/storetest"
)

// The migrations that move or derive data keep it: a store as an older
// Shoal left it reads back through today's methods once opened
// (storetest.MigrationCases).
func TestMigrationsKeepData(t *testing.T) {
	srv := testpg.Start(t)
	for _, c := range storetest.MigrationCases() {
		t.Run(c.Name, func(t *testing.T) {
			url := srv.NewDatabase(t)
			raw, err := sql.Open("pgx", url)
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
			db, err := Open(t.Context(), Config{URL: url})
			if err != nil {
				t.Fatalf("Open after version %d: %v", c.Version, err)
			}
			defer db.Close()
			c.Check(t, db)
		})
	}
}
