package arm

import (
	"context"
	"errors"
	"fmt"
	"testing"
)

// TestClientGoneIsNoServerError: an ARM request that failed because its
// client went away is answered 499 (what the metrics and the audit log
// record), not 500.
func TestClientGoneIsNoServerError(t *testing.T) {
	for _, err := range []error{context.Canceled, fmt.Errorf("list computes: %w", context.Canceled)} {
		if status, code := azureCode(err); status != 499 || code != "ClientClosedRequest" {
			t.Errorf("azureCode(%v) = %d %s, want 499 ClientClosedRequest", err, status, code)
		}
	}
	if status, _ := azureCode(errors.New("disk on fire")); status != 500 {
		t.Errorf("an internal error: %d, want 500", status)
	}
}
