package compute_test

import (
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/domain/compute"
)

// idle_time_before_scale_down: adaptive (a Shoal extension) sets the
// adaptive idle policy and keeps the default number as its fallback;
// wait_cost_per_hour goes with it only.
func TestAdaptiveIdleDecode(t *testing.T) {
	spec, err := compute.DecodeComputeSpec([]byte(`{"name":"cpu1","type":"amlcompute","size":"Standard_DS3_v2","idle_time_before_scale_down":"adaptive","wait_cost_per_hour":2.5}`))
	if err != nil {
		t.Fatal(err)
	}
	if spec.IdlePolicy != compute.IdlePolicyAdaptive || spec.IdleTimeBeforeScaleDown != nil || *spec.WaitCostPerHour != 2.5 {
		t.Fatalf("spec %+v", spec)
	}
	cat := defaultCatalog(t)
	if _, _, err := compute.NormalizeClusterSpec(spec, cat, "local"); err != nil || *spec.IdleTimeBeforeScaleDown != 120 {
		t.Fatalf("normalized: %v %v", err, spec.IdleTimeBeforeScaleDown)
	}
	for doc, field := range map[string]string{
		`{"name":"cpu1","size":"Standard_DS3_v2","idle_time_before_scale_down":120,"wait_cost_per_hour":2}`:         "wait_cost_per_hour",
		`{"name":"cpu1","size":"Standard_DS3_v2","idle_time_before_scale_down":"adaptive","wait_cost_per_hour":-1}`: "wait_cost_per_hour",
		`{"name":"cpu1","size":"Standard_DS3_v2","idle_policy":"sometimes"}`:                                        "idle_policy",
		`{"name":"cpu1","size":"Standard_DS3_v2","idle_time_before_scale_down":"whenever"}`:                         "idle_time_before_scale_down",
	} {
		spec, err := compute.DecodeComputeSpec([]byte(doc))
		if err == nil {
			_, _, err = compute.NormalizeClusterSpec(spec, cat, "local")
		}
		if err == nil || !strings.Contains(err.Error(), field) {
			t.Errorf("%s: %v, want an error naming %s", doc, err, field)
		}
	}
}
