package filestore

import (
	"errors"
	"fmt"
	"syscall"
	"testing"

	"github.com/shoal-ml/shoal/domain/core"
)

// A write refused for space or quota is storage_full; other errors pass.
func TestNoSpace(t *testing.T) {
	for _, e := range []syscall.Errno{syscall.ENOSPC, syscall.EDQUOT} {
		if got := noSpace(fmt.Errorf("write log: %w", e)); core.ErrorCode(got) != core.ESTORAGEFULL {
			t.Errorf("%v: %v", e, got)
		}
	}
	other := errors.New("permission denied")
	if noSpace(other) != other || noSpace(nil) != nil {
		t.Error("other errors are changed")
	}
}
