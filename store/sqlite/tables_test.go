package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/shoal-ml/shoal/store/sqlite"
	"github.com/shoal-ml/shoal/store/sqlstore/storecopy"
)

// Every table of the schema is copied by a store move and a backup, or
// named in storecopy.NotCopied with the reason: a table added by a
// migration and forgotten there would silently be lost by both (it
// happened to registered environments and registry logins).
func TestEveryTableIsCopiedOrSaysWhyNot(t *testing.T) {
	db, err := sqlite.Open(context.Background(), sqlite.Config{Path: filepath.Join(t.TempDir(), "shoal.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.CopyEndpoint().DB.Query(`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name != 'schema_migrations'`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	copied := map[string]bool{}
	for _, name := range storecopy.Tables {
		copied[name] = true
	}
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			t.Fatal(err)
		}
		if !copied[name] && storecopy.NotCopied[name] == "" {
			t.Errorf("table %s is neither in storecopy.Tables nor in storecopy.NotCopied", name)
		}
	}
}
