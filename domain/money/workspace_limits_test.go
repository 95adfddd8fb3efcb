package money_test

import (
	"testing"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/money"
)

func TestWorkspaceLimits(t *testing.T) {
	var zero money.WorkspaceLimits
	if zero.LogCap() != 100<<20 || zero.StorageQuota() != 10<<30 {
		t.Errorf("defaults: %d %d", zero.LogCap(), zero.StorageQuota())
	}
	if got := money.LogCutMarker(100 << 20); got != "\n[shoal: log cut at 100 MiB; the rest was discarded]\n" {
		t.Errorf("marker %q", got)
	}
	for _, bad := range []money.WorkspaceLimits{{MaxLogBytes: -1}, {StorageQuotaBytes: 1<<50 + 1}} {
		if err := money.ValidateWorkspaceLimits(bad); core.ErrorCode(err) != core.EINVALID {
			t.Errorf("%+v: %v", bad, err)
		}
	}
	if err := money.ValidateWorkspaceLimits(money.WorkspaceLimits{MaxLogBytes: 10, StorageQuotaBytes: 1}); err != nil {
		t.Error(err)
	}
}
