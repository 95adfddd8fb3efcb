// Package migrate brings a SQL store's schema up to date: the sqlite and
// postgres stores each apply their own migration files through Apply.
package migrate

import (
	"context"
	"database/sql"
	"fmt"
	"io/fs"
	"log/slog"
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/shoal-ml/shoal/domain/core"
)

// migration is one schema change, from a file named NNNN_description.sql.
type migration struct {
	version int64
	name    string
	sql     string
}

// loadMigrations reads the migrations in fsys's "migrations" directory in
// version order.
func loadMigrations(fsys fs.FS) ([]migration, error) {
	entries, err := fs.ReadDir(fsys, "migrations")
	if err != nil {
		return nil, fmt.Errorf("read migrations: %w", err)
	}
	var out []migration
	seen := map[int64]string{}
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".sql") {
			continue
		}
		prefix, _, ok := strings.Cut(e.Name(), "_")
		v, err := strconv.ParseInt(prefix, 10, 64)
		if !ok || err != nil || v <= 0 {
			return nil, fmt.Errorf("migration %q: name must start with a positive number and '_'", e.Name())
		}
		if other, dup := seen[v]; dup {
			return nil, fmt.Errorf("migrations %q and %q have the same version %d", other, e.Name(), v)
		}
		seen[v] = e.Name()
		b, err := fs.ReadFile(fsys, path.Join("migrations", e.Name()))
		if err != nil {
			return nil, fmt.Errorf("read migration %q: %w", e.Name(), err)
		}
		out = append(out, migration{version: v, name: e.Name(), sql: string(b)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].version < out[j].version })
	return out, nil
}

// Apply applies the migrations of fsys ("migrations/NNNN_name.sql") not
// yet recorded in schema_migrations, each in its own transaction together
// with its record. lock, when set, runs first in each of those
// transactions: a store shared by several servers serialises their
// migrations there.
func Apply(ctx context.Context, db *sql.DB, fsys fs.FS, lock func(context.Context, *sql.Tx) error, clock core.Clock, log *slog.Logger) error {
	migrations, err := loadMigrations(fsys)
	if err != nil {
		return err
	}
	if err := inTx(ctx, db, lock, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version    BIGINT PRIMARY KEY,
		name       TEXT NOT NULL,
		applied_on BIGINT NOT NULL
	)`)
		return err
	}); err != nil {
		return fmt.Errorf("create schema_migrations: %w", err)
	}
	var current int64
	if err := db.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&current); err != nil {
		return fmt.Errorf("read schema version: %w", err)
	}
	if n := len(migrations); n > 0 && current > migrations[n-1].version {
		return fmt.Errorf("database schema version %d is newer than this program knows (%d); upgrade Shoal", current, migrations[n-1].version)
	}
	for _, m := range migrations {
		applied, err := applyMigration(ctx, db, m, lock, clock)
		if err != nil {
			return fmt.Errorf("apply migration %s: %w", m.name, err)
		}
		if applied {
			log.Info("applied database migration", "version", m.version, "name", m.name)
		}
	}
	return nil
}

// applyMigration runs m unless it is already recorded, and reports whether it ran.
func applyMigration(ctx context.Context, db *sql.DB, m migration, lock func(context.Context, *sql.Tx) error, clock core.Clock) (applied bool, err error) {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return false, fmt.Errorf("begin: %w", err)
	}
	defer func() {
		if !applied {
			_ = tx.Rollback()
		}
	}()
	if lock != nil {
		if err := lock(ctx, tx); err != nil {
			return false, fmt.Errorf("lock: %w", err)
		}
	}
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM schema_migrations WHERE version = $1`, m.version).Scan(&n); err != nil {
		return false, fmt.Errorf("check: %w", err)
	}
	if n > 0 {
		return false, nil
	}
	if _, err := tx.ExecContext(ctx, m.sql); err != nil {
		return false, err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations (version, name, applied_on) VALUES ($1, $2, $3)`,
		m.version, m.name, clock.Now().UnixMicro()); err != nil {
		return false, fmt.Errorf("record: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return false, fmt.Errorf("commit: %w", err)
	}
	return true, nil
}

// inTx runs fn in a transaction, after lock when set.
func inTx(ctx context.Context, db *sql.DB, lock func(context.Context, *sql.Tx) error, fn func(*sql.Tx) error) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if lock != nil {
		if err := lock(ctx, tx); err != nil {
			_ = tx.Rollback()
			return err
		}
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	return tx.Commit()
}
