package kubernetes

import (
	"context"
	"errors"
	"fmt"
	"net"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/node"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
)

// Provision creates node req's Secret (its join token) and pod, and
// returns the pod's name. It returns once the API has accepted the pod;
// the node joins when Kubernetes has scheduled and started it. A pod
// the API refuses for a ResourceQuota or LimitRange is EQUOTA; one it
// cannot reach EUNAVAILABLE.
func (p *Provider) Provision(ctx context.Context, req node.ProvisionRequest) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	if req.Node == nil {
		return "", core.Errorf(core.EINVALID, "kubernetes provider: no node to provision")
	}
	n := req.Node
	name := PodName(n.ID)
	sec, err := p.core.createSecret(ctx, p.cfg.Namespace, p.secret(req))
	if apierrors.IsAlreadyExists(err) {
		// A try before this one left it (its pod was never made, or is
		// gone): the token is the new one.
		sec, err = p.core.updateSecret(ctx, p.cfg.Namespace, p.secret(req))
	}
	if err != nil {
		return "", p.classify(err, "create the join token Secret of node "+n.ID)
	}
	pod, err := p.core.createPod(ctx, p.cfg.Namespace, p.Pod(req))
	if err != nil {
		p.deleteSecret(context.WithoutCancel(ctx), name)
		return "", p.classify(err, "create the pod of node "+n.ID+" ("+describe(n)+")")
	}
	// The Secret goes with its pod, whoever deletes the pod (an eviction,
	// kubectl): Kubernetes' garbage collector follows the owner.
	patch := fmt.Sprintf(`{"metadata":{"ownerReferences":[{"apiVersion":"v1","kind":"Pod","name":%q,"uid":%q}]}}`, pod.Name, pod.UID)
	if err := p.core.patchSecret(context.WithoutCancel(ctx), p.cfg.Namespace, sec.Name, types.MergePatchType, []byte(patch)); err != nil {
		// Release deletes it anyway.
		p.log.Warn("owning the join token Secret by its pod failed", "node", n.ID, "err", err)
	}
	p.log.Info("pod created", "node", n.ID, "pod", pod.Name, "image", p.image(req))
	return pod.Name, nil
}

// classify maps an API error to Shoal's codes, with the API's message
// (which names the resource and the rule, never a credential).
func (p *Provider) classify(err error, what string) error {
	var ne net.Error
	switch {
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return err
	case apierrors.IsForbidden(err) && isQuota(err):
		return core.Errorf(core.EQUOTA, "Kubernetes refused to %s: %v", what, err)
	case apierrors.IsForbidden(err), apierrors.IsUnauthorized(err):
		return core.Errorf(core.EFORBIDDEN, "Kubernetes refused to %s in namespace %s (see the Role in docs/guides/kubernetes.md): %v", what, p.cfg.Namespace, err)
	case apierrors.IsInvalid(err):
		return core.Errorf(core.EINVALID, "Kubernetes refused to %s: %v", what, err)
	case apierrors.IsServerTimeout(err), apierrors.IsTimeout(err), apierrors.IsTooManyRequests(err),
		apierrors.IsServiceUnavailable(err), apierrors.IsInternalError(err), errors.As(err, &ne):
		return core.Errorf(core.EUNAVAILABLE, "Kubernetes API at %s: could not %s: %v", p.host, what, err)
	}
	return fmt.Errorf("kubernetes provider: %s: %w", what, err)
}

// isQuota says whether a Forbidden error is a ResourceQuota's (exceeded
// quota) or a LimitRange's refusal rather than RBAC's.
func isQuota(err error) bool {
	var se apierrors.APIStatus
	if !errors.As(err, &se) {
		return false
	}
	msg := se.Status().Message
	return contains(msg, "exceeded quota") || contains(msg, "must specify") || contains(msg, "maximum") || contains(msg, "minimum")
}

// Release deletes the node's pod (its grace period lets the agent stop
// its ranks) and Secret; a node whose pod is already gone is released.
func (p *Provider) Release(ctx context.Context, n *node.Node) error {
	if n == nil || n.ProviderRef == "" {
		return nil
	}
	derr := p.core.deletePod(ctx, p.cfg.Namespace, n.ProviderRef)
	if derr != nil && !apierrors.IsNotFound(derr) {
		return p.classify(derr, "delete pod "+n.ProviderRef+" of node "+n.ID)
	}
	if err := p.deleteSecret(ctx, n.ProviderRef); err != nil {
		return err
	}
	if derr == nil {
		p.log.Info("pod deleted", "node", n.ID, "pod", n.ProviderRef)
	}
	return nil
}

func (p *Provider) deleteSecret(ctx context.Context, name string) error {
	err := p.core.deleteSecret(ctx, p.cfg.Namespace, name)
	if err != nil && !apierrors.IsNotFound(err) {
		return p.classify(err, "delete Secret "+name)
	}
	return nil
}

// Alive reports whether the node's pod exists, is Pending or Running,
// and is not being deleted.
func (p *Provider) Alive(ctx context.Context, n *node.Node) (bool, error) {
	pod, err := p.pod(ctx, n)
	if err != nil || pod == nil {
		return false, err
	}
	return alive(pod), nil
}

func alive(pod *corev1.Pod) bool {
	return pod.DeletionTimestamp == nil && (pod.Status.Phase == corev1.PodPending || pod.Status.Phase == corev1.PodRunning)
}

// pod reads the node's pod; nil when there is none.
func (p *Provider) pod(ctx context.Context, n *node.Node) (*corev1.Pod, error) {
	if n == nil || n.ProviderRef == "" {
		return nil, nil
	}
	pod, err := p.core.getPod(ctx, p.cfg.Namespace, n.ProviderRef)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, p.classify(err, "read pod "+n.ProviderRef+" of node "+n.ID)
	}
	return pod, nil
}
