package shoal_test

import (
	"testing"

	"github.com/shoal-ml/shoal"
)

func TestWorkspaceLimits(t *testing.T) {
	var zero shoal.WorkspaceLimits
	if zero.LogCap() != 100<<20 || zero.StorageQuota() != 10<<30 {
		t.Errorf("defaults: %d %d", zero.LogCap(), zero.StorageQuota())
	}
	if got := shoal.LogCutMarker(100 << 20); got != "\n[shoal: log cut at 100 MiB; the rest was discarded]\n" {
		t.Errorf("marker %q", got)
	}
	for _, bad := range []shoal.WorkspaceLimits{{MaxLogBytes: -1}, {StorageQuotaBytes: 1<<50 + 1}} {
		if err := shoal.ValidateWorkspaceLimits(bad); shoal.ErrorCode(err) != shoal.EINVALID {
			t.Errorf("%+v: %v", bad, err)
		}
	}
	if err := shoal.ValidateWorkspaceLimits(shoal.WorkspaceLimits{MaxLogBytes: 10, StorageQuotaBytes: 1}); err != nil {
		t.Error(err)
	}
}
