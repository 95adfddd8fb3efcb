package sqlstore

import (
	"errors"
	"fmt"
	"syscall"

	"github.com/shoal-ml/shoal"
)

// sqliteFull is SQLite's result code for a full disk (SQLITE_FULL); the
// low byte of an extended result code is its primary code.
const sqliteFull = 13

// pgDiskFull is PostgreSQL's SQLSTATE for a full disk (class 53,
// insufficient resources).
const pgDiskFull = "53100"

// diskFull turns a store error caused by a full disk into an error a
// client can act on (storage_full, HTTP 507: retry once space is freed),
// naming the cause, instead of a bare internal error. The transaction was rolled back, so nothing
// was changed. Other errors are returned as they are.
func diskFull(err error) error {
	if err == nil {
		return nil
	}
	var se *shoal.Error
	if errors.As(err, &se) {
		return err
	}
	full := errors.Is(err, syscall.ENOSPC)
	var lite interface{ Code() int }
	if errors.As(err, &lite) && lite.Code()&0xff == sqliteFull {
		full = true
	}
	var pg interface{ SQLState() string }
	if errors.As(err, &pg) && pg.SQLState() == pgDiskFull {
		full = true
	}
	if !full {
		return err
	}
	return &shoal.Error{Code: shoal.ESTORAGEFULL, Message: fmt.Sprintf(
		"the store cannot write: its disk is full (%v); nothing was changed; the operator must free space in the data dir, then retry", err)}
}
