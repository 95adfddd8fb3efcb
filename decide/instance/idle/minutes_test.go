package idle

import (
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/domain/core"
)

func TestValidateMinutesBounds(t *testing.T) {
	for _, m := range []int{MinMinutes, 30, MaxMinutes} {
		if err := ValidateMinutes(m); err != nil {
			t.Errorf("ValidateMinutes(%d) = %v, want nil", m, err)
		}
	}
	for _, m := range []int{-1, 0, 14, MaxMinutes + 1} {
		err := ValidateMinutes(m)
		if core.ErrorCode(err) != core.EINVALID || core.ErrorField(err) != "idle_time_before_shutdown_minutes" {
			t.Errorf("ValidateMinutes(%d) = %v, want EINVALID on idle_time_before_shutdown_minutes", m, err)
			continue
		}
		if msg := core.ErrorMessage(err); !strings.Contains(msg, "15") || !strings.Contains(msg, "4320") {
			t.Errorf("ValidateMinutes(%d) message %q does not name 15 and 4320", m, msg)
		}
	}
	if MinMinutes != 15 || MaxMinutes != 4320 {
		t.Errorf("bounds %d–%d, want 15–4320 (Azure's)", MinMinutes, MaxMinutes)
	}
}
