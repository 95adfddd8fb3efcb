package filestore

import (
	"errors"
	"syscall"

	"github.com/shoal-ml/shoal/domain/core"
)

// noSpace turns a write that failed for want of disk space into a
// storage_full error naming the cause (HTTP 507; agents keep the data and
// retry), rather than a bare internal error; over a disk quota counts as
// full. Other errors pass unchanged.
func noSpace(err error) error {
	if err == nil || !(errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT)) {
		return err
	}
	return core.Errorf(core.ESTORAGEFULL, "the server's file store cannot write: its disk is full or over quota (%v); the operator must free space in the data dir, then retry", err)
}
