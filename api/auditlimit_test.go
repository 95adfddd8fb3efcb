package api

import (
	"testing"
	"time"
)

func TestAuditLimiterBoundsRecordsPerSourceAndSecond(t *testing.T) {
	var l auditLimiter
	t0 := time.Unix(1000, 0)
	for i := 0; i < anonymousAuditPerSecond; i++ {
		if !l.allow("10.0.0.1:5000", t0) {
			t.Fatalf("refusal %d was not recorded", i+1)
		}
	}
	if l.allow("10.0.0.1:5001", t0) {
		t.Fatal("a refusal past the bound was recorded")
	}
	if !l.allow("10.0.0.2:5000", t0) {
		t.Fatal("another source shares the first one's bound")
	}
	if !l.allow("10.0.0.1:5000", t0.Add(time.Second)) {
		t.Fatal("the bound did not reset the next second")
	}
}
