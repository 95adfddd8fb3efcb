package kubernetes

import (
	"testing"

	"github.com/shoal-ml/shoal/domain/catalog"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// A node of an instance type gets the instance type's requests and
// limits as written (GPUs as nvidia.com/gpu), its node selector over the
// location's and its tolerations after the location's.
func TestPodOfAnInstanceTypeCarriesItsResourcesAndSelector(t *testing.T) {
	p := testProvider(t, Config{NodeSelector: map[string]string{"pool": "general", "zone": "a"},
		Tolerations: []Toleration{{Key: "spot", Operator: "Exists"}}})
	req := gpuRequest()
	req.InstanceType = &catalog.InstanceType{Name: "gpu-a100", NodeSelector: map[string]string{"pool": "a100"},
		Tolerations: []catalog.KubernetesToleration{{Key: "nvidia.com/gpu", Operator: "Exists", Effect: "NoSchedule"}},
		Resources: catalog.InstanceTypeResources{
			Requests: map[string]string{"cpu": "3500m", "memory": "30Gi", "nvidia.com/gpu": "1"},
			Limits:   map[string]string{"cpu": "4", "memory": "32Gi", "nvidia.com/gpu": "1"}}}
	pod := p.Pod(req)
	if sel := pod.Spec.NodeSelector; sel["pool"] != "a100" || sel["zone"] != "a" || len(sel) != 2 {
		t.Errorf("node selector %v, want pool=a100 (the instance type's) and zone=a (the location's)", sel)
	}
	if p.cfg.NodeSelector["pool"] != "general" {
		t.Error("the location's node selector was changed in place")
	}
	if tol := pod.Spec.Tolerations; len(tol) != 2 || tol[0].Key != "spot" || tol[1].Key != "nvidia.com/gpu" || tol[1].Effect != corev1.TaintEffectNoSchedule {
		t.Errorf("tolerations %+v", tol)
	}
	res := pod.Spec.Containers[0].Resources
	for name, want := range map[string][2]string{"cpu": {"3500m", "4"}, "memory": {"30Gi", "32Gi"}, "nvidia.com/gpu": {"1", "1"}} {
		r, l := res.Requests[corev1.ResourceName(name)], res.Limits[corev1.ResourceName(name)]
		if r.Cmp(resource.MustParse(want[0])) != 0 || l.Cmp(resource.MustParse(want[1])) != 0 {
			t.Errorf("%s: request %s limit %s, want %s and %s", name, r.String(), l.String(), want[0], want[1])
		}
	}
	// Without an instance type the size's figures stay.
	if q := p.Pod(gpuRequest()).Spec.Containers[0].Resources.Limits[corev1.ResourceCPU]; q.Cmp(resource.MustParse("6")) != 0 {
		t.Errorf("cpu without an instance type = %s, want the size's 6", q.String())
	}
}
