package app

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/store"
	"github.com/shoal-ml/shoal/store/postgres"
	"github.com/shoal-ml/shoal/store/sqlite"
)

// openStore opens the store a URL names: "" (SQLite in the data dir),
// sqlite:///absolute/path.db, or postgres://... (also postgresql://).
// The URL's password never appears in an error or a log line.
func openStore(ctx context.Context, raw, dataDir string, clock core.Clock, log *slog.Logger) (store.Store, string, error) {
	if raw == "" {
		path := filepath.Join(dataDir, "shoal.db")
		db, err := sqlite.Open(ctx, sqlite.Config{Path: path, Clock: clock, Logger: log})
		return db, "sqlite://" + path, err
	}
	scheme, rest, ok := strings.Cut(raw, "://")
	switch {
	case ok && scheme == "sqlite":
		// sqlite:///var/lib/shoal/shoal.db: the path after the empty host.
		u, err := url.Parse(raw)
		if err != nil || u.Host != "" || !filepath.IsAbs(u.Path) || strings.HasSuffix(u.Path, "/") {
			return nil, "", &core.Error{Code: core.EINVALID, Field: "store", Message: fmt.Sprintf("%q: a SQLite store is sqlite:///absolute/path/to/shoal.db", raw)}
		}
		db, err := sqlite.Open(ctx, sqlite.Config{Path: u.Path, Clock: clock, Logger: log})
		return db, "sqlite://" + u.Path, err
	case ok && (scheme == "postgres" || scheme == "postgresql") && rest != "":
		db, err := postgres.Open(ctx, postgres.Config{URL: raw, Clock: clock, Logger: log})
		return db, postgres.Redact(raw), err
	}
	return nil, "", &core.Error{Code: core.EINVALID, Field: "store", Message: fmt.Sprintf("%q: the store is sqlite:///path/to/shoal.db or postgres://user:password@host:5432/database", postgres.Redact(raw))}
}
