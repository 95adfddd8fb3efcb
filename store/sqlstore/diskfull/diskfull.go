// Package diskfull tells a store error caused by a full disk (SQLite's,
// PostgreSQL's or the OS's words for it) from others, so that the SQL
// stores answer it as storage_full rather than as an internal error.
package diskfull

import (
	"errors"
	"fmt"
	"strings"
	"syscall"

	"github.com/shoal-ml/shoal/domain/core"
)

// sqliteFull is SQLite's result code for a full disk (SQLITE_FULL); the
// low byte of an extended result code is its primary code.
const sqliteFull = 13

// pgDiskFull is PostgreSQL's SQLSTATE for a full disk (class 53,
// insufficient resources); pgIOError is the one PostgreSQL reports for a
// failed file write, whose message then names the errno.
const (
	pgDiskFull = "53100"
	pgIOError  = "58030"
)

// Classify turns a store error caused by a full disk into an error a
// client can act on (storage_full, HTTP 507: retry once space is freed),
// naming the cause, instead of a bare internal error. The transaction was
// rolled back, so nothing was changed. Other errors are returned as they
// are.
func Classify(err error) error {
	if err == nil {
		return nil
	}
	var se *core.Error
	if errors.As(err, &se) {
		return err
	}
	full := errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT)
	var lite interface{ Code() int }
	if errors.As(err, &lite) && lite.Code()&0xff == sqliteFull {
		full = true
	}
	var pg interface{ SQLState() string }
	if errors.As(err, &pg) {
		switch pg.SQLState() {
		case pgDiskFull:
			full = true
		case pgIOError:
			// Out of space or over quota where PostgreSQL reports the
			// write's errno rather than DISK_FULL.
			msg := err.Error()
			full = strings.Contains(msg, "No space left on device") || strings.Contains(msg, "Disk quota exceeded")
		}
	}
	if !full {
		return err
	}
	return &core.Error{Code: core.ESTORAGEFULL, Message: fmt.Sprintf(
		"the store cannot write: its disk is full (%v); nothing was changed; the operator must free space in the data dir, then retry", err)}
}
