package kubernetes

import (
	"context"
	"strings"

	"github.com/shoal-ml/shoal/domain/node"
	corev1 "k8s.io/api/core/v1"
)

// PodStatus is what a node's pod says about the node.
type PodStatus struct {
	// Phase is the pod's phase ("" when the pod is gone).
	Phase string
	// Running is true when the pod is Running and not being deleted.
	Running bool
	// Pending is why a Pending pod is not running yet: Kubernetes'
	// scheduler message ("0/3 nodes are available: 3 Insufficient
	// cpu.") or a container's waiting reason (ErrImagePull); "" when not
	// pending or no reason was given yet.
	Pending string
	// Preempted is true when Kubernetes took the pod back: evicted (node
	// pressure, the eviction API) or preempted for a pod of a higher
	// priority. Its node's work is requeued without spending retries.
	Preempted bool
	// Reason says why the pod ended or was taken back.
	Reason string
}

// Status reads the node's pod. A node whose pod is gone has the zero
// PodStatus.
func (p *Provider) Status(ctx context.Context, n *node.Node) (PodStatus, error) {
	pod, err := p.pod(ctx, n)
	if err != nil || pod == nil {
		return PodStatus{}, err
	}
	return StatusOf(pod), nil
}

// StatusOf reads a pod's status as a node's.
func StatusOf(pod *corev1.Pod) PodStatus {
	st := PodStatus{Phase: string(pod.Status.Phase), Running: pod.Status.Phase == corev1.PodRunning && pod.DeletionTimestamp == nil}
	for _, c := range pod.Status.Conditions {
		switch {
		case c.Type == corev1.DisruptionTarget && c.Status == corev1.ConditionTrue:
			// Kubernetes 1.26+: set before the pod is deleted by
			// preemption (PreemptionByScheduler), the eviction API
			// (EvictionByEvictionAPI), a taint (DeletionByTaintManager)
			// or node pressure (TerminationByKubelet).
			st.Preempted = true
			st.Reason = joinReason(c.Reason, c.Message)
		case c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && pod.Status.Phase == corev1.PodPending:
			st.Pending = joinReason(c.Reason, c.Message)
		}
	}
	if pod.Status.Reason == "Evicted" || pod.Status.Reason == "Preempting" {
		st.Preempted = true
		st.Reason = joinReason(pod.Status.Reason, pod.Status.Message)
	}
	if pod.Status.Phase == corev1.PodPending && st.Pending == "" {
		for _, cs := range append(append([]corev1.ContainerStatus(nil), pod.Status.InitContainerStatuses...), pod.Status.ContainerStatuses...) {
			if w := cs.State.Waiting; w != nil && w.Reason != "" && w.Reason != "PodInitializing" && w.Reason != "ContainerCreating" {
				st.Pending = "container " + cs.Name + ": " + joinReason(w.Reason, w.Message)
				break
			}
		}
	}
	if pod.Status.Phase == corev1.PodFailed && st.Reason == "" {
		st.Reason = joinReason(pod.Status.Reason, pod.Status.Message)
	}
	return st
}

// joinReason is "Reason: message", or whichever is there.
func joinReason(reason, msg string) string {
	msg = strings.TrimSpace(msg)
	switch {
	case reason == "":
		return msg
	case msg == "":
		return reason
	}
	return reason + ": " + msg
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }

// NodeStatus implements shoal.NodeWatcher: a Pending pod's reason, a pod
// taken back, a pod that ended or is gone.
func (p *Provider) NodeStatus(ctx context.Context, n *node.Node) (node.ProviderNodeStatus, error) {
	pod, err := p.pod(ctx, n)
	if err != nil {
		return node.ProviderNodeStatus{}, err
	}
	if pod == nil {
		return node.ProviderNodeStatus{Ended: true, Reason: "its pod " + n.ProviderRef + " is gone"}, nil
	}
	st := StatusOf(pod)
	out := node.ProviderNodeStatus{Preempted: st.Preempted, Reason: st.Reason}
	if st.Pending != "" {
		out.Waiting = "pod " + pod.Name + " Pending: " + st.Pending
	}
	if !st.Preempted && (st.Phase == "Failed" || st.Phase == "Succeeded") {
		out.Ended, out.Reason = true, "its pod "+pod.Name+" "+st.Phase+": "+st.Reason
	}
	return out, nil
}
