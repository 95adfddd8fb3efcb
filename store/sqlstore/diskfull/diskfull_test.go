package diskfull

import (
	"errors"
	"fmt"
	"syscall"
	"testing"

	"github.com/shoal-ml/shoal/domain/core"
)

type liteErr int

func (e liteErr) Error() string { return fmt.Sprintf("sqlite error %d", int(e)) }
func (e liteErr) Code() int     { return int(e) }

type pgErr string

func (e pgErr) Error() string    { return "pg error " + string(e) }
func (e pgErr) SQLState() string { return string(e) }

// pgIOErr is PostgreSQL's I/O error with the message it carries.
type pgIOErr string

func (e pgIOErr) Error() string    { return string(e) + " (SQLSTATE 58030)" }
func (e pgIOErr) SQLState() string { return "58030" }

// A full disk, as SQLite, PostgreSQL or the OS reports it, becomes a
// storage_full error naming the cause; anything else is left alone.
func TestDiskFullIsReportedAsSuch(t *testing.T) {
	for _, err := range []error{
		fmt.Errorf("store: commit: %w", liteErr(13)),
		fmt.Errorf("store: commit: %w", liteErr(13|(1<<8))),
		fmt.Errorf("store: insert: %w", pgErr("53100")),
		fmt.Errorf("write wal: %w", syscall.ENOSPC),
		fmt.Errorf("write wal: %w", syscall.EDQUOT),
		fmt.Errorf("store: commit: %w", pgIOErr(`could not write to file "pg_wal/xlogtemp.123": No space left on device`)),
		fmt.Errorf("store: commit: %w", pgIOErr(`could not extend file "base/1/2": Disk quota exceeded`)),
	} {
		got := Classify(err)
		if core.ErrorCode(got) != core.ESTORAGEFULL {
			t.Errorf("%v: code %q, want %q", err, core.ErrorCode(got), core.ESTORAGEFULL)
		}
	}
	for _, err := range []error{
		nil,
		fmt.Errorf("store: commit: %w", liteErr(5)), // SQLITE_BUSY
		fmt.Errorf("store: insert: %w", pgErr("23505")),
		fmt.Errorf("store: read: %w", pgIOErr(`could not read block 3 in file "base/1/2": read only 0 of 8192 bytes`)),
		core.Errorf(core.ENOTFOUND, "no such job"),
		errors.New("something else"),
	} {
		if got := Classify(err); got != err {
			t.Errorf("%v became %v", err, got)
		}
	}
}
