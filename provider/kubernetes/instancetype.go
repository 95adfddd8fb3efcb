package kubernetes

import (
	"maps"

	"github.com/shoal-ml/shoal/domain/catalog"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// placeInstanceType gives pod the instance type's placement and
// resources, as Azure's InstanceType does: its node selector over the
// location's (the instance type's value wins a shared key), its
// tolerations after the location's, and its requests and limits as
// written, in place of the size's figures.
func placeInstanceType(pod *corev1.Pod, it *catalog.InstanceType) {
	if it == nil {
		return
	}
	if len(it.NodeSelector) > 0 {
		sel := maps.Clone(pod.Spec.NodeSelector)
		if sel == nil {
			sel = map[string]string{}
		}
		maps.Copy(sel, it.NodeSelector)
		pod.Spec.NodeSelector = sel
	}
	for _, t := range it.Tolerations {
		pod.Spec.Tolerations = append(pod.Spec.Tolerations, corev1.Toleration{Key: t.Key,
			Operator: corev1.TolerationOperator(t.Operator), Value: t.Value,
			Effect: corev1.TaintEffect(t.Effect), TolerationSeconds: t.TolerationSeconds})
	}
	for i := range pod.Spec.Containers {
		if pod.Spec.Containers[i].Name == "node" {
			pod.Spec.Containers[i].Resources = corev1.ResourceRequirements{
				Requests: resourceList(it.Resources.Requests), Limits: resourceList(it.Resources.Limits)}
		}
	}
}

// resourceList parses the instance type's quantities; shoal's
// InstanceType.Check has accepted them, and one Kubernetes would still
// refuse is left out rather than crash the server.
func resourceList(m map[string]string) corev1.ResourceList {
	if len(m) == 0 {
		return nil
	}
	out := corev1.ResourceList{}
	for k, v := range m {
		if q, err := resource.ParseQuantity(v); err == nil {
			out[corev1.ResourceName(k)] = q
		}
	}
	return out
}
