package app

import (
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/domain/core"
)

// The store's URL comes from --store, else SHOAL_STORE, else the config
// file's store:. A password in --store is refused when the server runs as
// root (every job on the host can read a command line) and is a warning
// otherwise; in the environment or the config file it is fine.
func TestResolveStore(t *testing.T) {
	const (
		withPW   = "postgres://shoal:hunter2@db.lab:5432/shoal?sslmode=require"
		queryPW  = "postgres://shoal@db.lab:5432/shoal?password=hunter2"
		noPW     = "postgres://shoal@db.lab:5432/shoal"
		sqliteDB = "sqlite:///var/lib/shoal/shoal.db"
	)
	for _, c := range []struct {
		name              string
		flag, env, config string
		root              bool
		want              string
		refused, warned   bool
	}{
		{"flag wins over env and config", noPW, sqliteDB, "sqlite:///other.db", true, noPW, false, false},
		{"env wins over config", "", withPW, sqliteDB, true, withPW, false, false},
		{"config when neither", "", "", withPW, true, withPW, false, false},
		{"nothing: SQLite in the data dir", "", "", "", true, "", false, false},
		{"a password in --store as root", withPW, "", "", true, "", true, false},
		{"a password in --store's query as root", queryPW, sqliteDB, "", true, "", true, false},
		{"a password in --store, not root", withPW, "", "", false, withPW, false, true},
		{"a SQLite --store as root", sqliteDB, "", "", true, sqliteDB, false, false},
	} {
		got, warning, err := resolveStore(c.flag, c.env, c.config, c.root)
		if c.refused {
			if core.ErrorCode(err) != core.EINVALID || !strings.Contains(err.Error(), "--store: a password on the command line is readable by every process on this host, including jobs: put the URL in SHOAL_STORE or in the config file's store:") {
				t.Errorf("%s: %v; want refused naming --store, SHOAL_STORE and the config file", c.name, err)
			}
			if err != nil && strings.Contains(err.Error(), "hunter2") {
				t.Errorf("%s: the refusal shows the password: %v", c.name, err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%s: %q, %v; want %q", c.name, got, err, c.want)
		}
		if (warning != "") != c.warned || strings.Contains(warning, "hunter2") {
			t.Errorf("%s: warning %q; want one: %v, without the password", c.name, warning, c.warned)
		}
	}
}
