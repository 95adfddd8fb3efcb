package app

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/store/postgres"
	"github.com/shoal-ml/shoal/store/sqlstore/storecopy"
)

// copier is a store that can be a copy's source or destination.
type copier interface {
	CopyEndpoint() storecopy.Endpoint
}

// CopyStore copies the whole state of the store at from into the store at
// to (URLs as --store takes them): jobs, attempts, nodes, computes, users,
// tokens, roles, identities, signing keys, events and the audit log, from
// one consistent snapshot of from (which may be serving), in one
// transaction on to, which must be new (created here if need be, never
// used by a server). withFiles moves the files (artifacts, logs, outputs)
// along, between a SQLite installation's files/ and PostgreSQL. Returns the rows copied
// per table, and the files moved ("files").
func CopyStore(ctx context.Context, from, to string, withFiles bool) (storecopy.Stats, error) {
	if from == "" || to == "" {
		return nil, errors.New("both stores are needed: --from and --to")
	}
	if err := mustExist(from); err != nil {
		return nil, err
	}
	src, srcWhere, err := openStore(ctx, from, "", nil, nil)
	if err != nil {
		return nil, fmt.Errorf("the source %s: %w", postgres.Redact(from), err)
	}
	defer src.Close()
	// A SQLite destination (a backup) holds every hash, sealed key and
	// record of the source: it is created 0600, for its owner alone.
	if err := createPrivateSQLite(to); err != nil {
		return nil, err
	}
	dst, dstWhere, err := openStore(ctx, to, "", nil, nil)
	if err != nil {
		return nil, fmt.Errorf("the destination: %w", err)
	}
	defer dst.Close()
	if srcWhere == dstWhere {
		return nil, &core.Error{Code: core.EINVALID, Field: "to", Message: "the source and the destination are the same store"}
	}
	sc, ok1 := src.(copier)
	dc, ok2 := dst.(copier)
	if !ok1 || !ok2 {
		return nil, errors.New("these stores cannot be copied")
	}
	stats, err := storecopy.Copy(ctx, sc.CopyEndpoint(), dc.CopyEndpoint())
	if err != nil {
		return nil, fmt.Errorf("copy %s to %s: %w", srcWhere, dstWhere, err)
	}
	if !withFiles {
		return stats, nil
	}
	n, err := copyFiles(ctx, src, dst, srcWhere, dstWhere)
	if err != nil {
		return stats, fmt.Errorf("the store was copied, its files not all (%d moved): %w", n, err)
	}
	stats["files"] = n
	return stats, nil
}

// mustExist refuses a SQLite source that does not exist: opening it would
// create an empty one and copy nothing.
func mustExist(url string) error {
	path, ok := strings.CutPrefix(url, "sqlite://")
	if !ok {
		return nil
	}
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return &core.Error{Code: core.ENOTFOUND, Field: "from", Message: fmt.Sprintf("%s does not exist", path)}
	}
	return nil
}

// SQLiteURL is the store URL of a SQLite file.
func SQLiteURL(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	return "sqlite://" + abs, nil
}

// DataDirStore is the store URL of a data dir's SQLite file (the default
// store).
func DataDirStore(dataDir string) (string, error) {
	if dataDir == "" {
		var err error
		if dataDir, err = DefaultDataDir(); err != nil {
			return "", err
		}
	}
	return SQLiteURL(filepath.Join(dataDir, "shoal.db"))
}

// createPrivateSQLite creates the missing SQLite file of url (and its
// journal files, whose mode SQLite copies from it) empty and mode 0600,
// whatever the umask; a store URL of another kind is left alone.
func createPrivateSQLite(url string) error {
	path, ok := strings.CutPrefix(url, "sqlite://")
	if !ok {
		return nil
	}
	if i := strings.IndexByte(path, '?'); i >= 0 {
		path = path[:i]
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("the destination: %w", err)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return fmt.Errorf("the destination: %w", err)
	}
	defer f.Close()
	return f.Chmod(0o600)
}
