package service_test

import (
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job"
)

// A job on a cluster runs on the cluster's nodes, all of its VM size: a
// resources.instance_type naming another size (a GPU size on a CPU
// cluster: the job would run on a CPU node and fail on nvidia-smi) is
// refused at submit, naming the field, the cluster's size and what to
// do. The cluster's own size (any case) and none at all are accepted.
func TestJobInstanceTypeMustBeTheClustersSize(t *testing.T) {
	h := newHarness(t, "")
	h.compute("cpu", 0, 2, 120)
	for _, tt := range []struct {
		name, instanceType string
		want               []string // "" want: accepted
	}{
		{"gpu-on-cpu", "Standard_NC6s_v3", []string{"resources.instance_type", "Standard_NC6s_v3", "1 V100 GPU", "Standard_DS3_v2", "no GPU"}},
		{"other-cpu", "Standard_D2s_v3", []string{"resources.instance_type", "Standard_D2s_v3", "Standard_DS3_v2"}},
		{"unknown", "gpu-large", []string{"resources.instance_type", "gpu-large", "Standard_DS3_v2"}},
		{"same", "standard_ds3_v2", nil},
		{"none", "", nil},
	} {
		spec := &job.JobSpec{Name: tt.name, Command: "nvidia-smi", Compute: "cpu", Resources: &job.JobResources{InstanceCount: 1, InstanceType: tt.instanceType}}
		_, _, err := h.svc.SubmitJob(h.ctx, ws, spec)
		if tt.want == nil {
			if err != nil {
				t.Errorf("%s: instance_type %q refused: %v", tt.name, tt.instanceType, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("%s: instance_type %q on a Standard_DS3_v2 cluster accepted", tt.name, tt.instanceType)
			continue
		}
		if core.ErrorCode(err) != core.EINVALID {
			t.Errorf("%s: code %s, want %s: %v", tt.name, core.ErrorCode(err), core.EINVALID, err)
		}
		for _, w := range tt.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q does not say %q", tt.name, err, w)
			}
		}
	}
}
