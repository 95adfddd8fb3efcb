package kubernetes

import (
	"context"
	"fmt"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
)

// coreClient is the part of Kubernetes' core/v1 API the provider calls
// (a node's pod and its join token Secret), over a REST client whose
// scheme holds the core group alone. client-go's typed clients register
// every API group of Kubernetes in one scheme when the program starts
// (k8s.io/client-go/kubernetes/scheme, 57 groups): in a Shoal server that
// was the largest of its package inits and, with the file store's name
// check, about 5.5 MB of an idle server's 59 MB (2026-12-01), whether or
// not a compute uses Kubernetes.
// The scheme here is made when the first provider is.
type coreClient struct{ rc *rest.RESTClient }

var (
	coreCodecsOnce sync.Once
	coreCodecs     serializer.CodecFactory
)

// newCoreClient returns a client of the core/v1 API at rc, set up as
// client-go's typed core client sets itself up (its path, version and
// JSON serializer, without conversion).
func newCoreClient(rc *rest.Config) (coreClient, error) {
	coreCodecsOnce.Do(func() {
		s := runtime.NewScheme()
		// The core kinds, and with them the API's options and its
		// Status, which carries every error the API returns.
		if err := corev1.AddToScheme(s); err != nil {
			panic(fmt.Sprintf("kubernetes provider: the core/v1 scheme: %v", err)) // the package's own types: never
		}
		coreCodecs = serializer.NewCodecFactory(s)
	})
	cfg := rest.CopyConfig(rc)
	gv := corev1.SchemeGroupVersion
	cfg.GroupVersion = &gv
	cfg.APIPath = "/api"
	cfg.NegotiatedSerializer = coreCodecs.WithoutConversion()
	if cfg.UserAgent == "" {
		cfg.UserAgent = rest.DefaultKubernetesUserAgent()
	}
	c, err := rest.RESTClientFor(cfg)
	if err != nil {
		return coreClient{}, err
	}
	return coreClient{rc: c}, nil
}

// createSecret creates s in namespace ns and returns it as stored.
func (c coreClient) createSecret(ctx context.Context, ns string, s *corev1.Secret) (*corev1.Secret, error) {
	out := &corev1.Secret{}
	return out, c.rc.Post().Namespace(ns).Resource("secrets").Body(s).Do(ctx).Into(out)
}

// updateSecret replaces the Secret of s's name in namespace ns.
func (c coreClient) updateSecret(ctx context.Context, ns string, s *corev1.Secret) (*corev1.Secret, error) {
	out := &corev1.Secret{}
	return out, c.rc.Put().Namespace(ns).Resource("secrets").Name(s.Name).Body(s).Do(ctx).Into(out)
}

// patchSecret patches the Secret name in namespace ns with data, a patch
// of type pt.
func (c coreClient) patchSecret(ctx context.Context, ns, name string, pt types.PatchType, data []byte) error {
	return c.rc.Patch(pt).Namespace(ns).Resource("secrets").Name(name).Body(data).Do(ctx).Error()
}

// deleteSecret deletes the Secret name in namespace ns.
func (c coreClient) deleteSecret(ctx context.Context, ns, name string) error {
	return c.rc.Delete().Namespace(ns).Resource("secrets").Name(name).Do(ctx).Error()
}

// createPod creates pod in namespace ns and returns it as stored (with
// its UID).
func (c coreClient) createPod(ctx context.Context, ns string, pod *corev1.Pod) (*corev1.Pod, error) {
	out := &corev1.Pod{}
	return out, c.rc.Post().Namespace(ns).Resource("pods").Body(pod).Do(ctx).Into(out)
}

// getPod reads the pod name in namespace ns.
func (c coreClient) getPod(ctx context.Context, ns, name string) (*corev1.Pod, error) {
	out := &corev1.Pod{}
	return out, c.rc.Get().Namespace(ns).Resource("pods").Name(name).Do(ctx).Into(out)
}

// deletePod deletes the pod name in namespace ns.
func (c coreClient) deletePod(ctx context.Context, ns, name string) error {
	return c.rc.Delete().Namespace(ns).Resource("pods").Name(name).Do(ctx).Error()
}
