// Package kubernetes is the `kubernetes` provider: a location's nodes are
// pods in one namespace of an existing Kubernetes cluster, placed by
// Kubernetes' scheduler.
//
// A node's pod asks for its size's CPUs and memory (GPUs as
// nvidia.com/gpu) and carries the location's nodeSelector, labels,
// tolerations, priority class and security context. The agent is
// injected, not baked into an image: an init container from the
// location's agent_image (a static shoal binary, images/agent) copies the
// binary into an emptyDir, and the pod's main container runs that binary
// as `shoal agent` in the node's image, so ranks run as processes in the
// job's own image. The join token reaches the agent from a Secret of the
// node's own, never from the pod's spec.
//
// Provision creates the Secret and the pod and returns the pod's name as
// the node's ref; Alive reads the pod (Pending or Running, and not being
// deleted: alive); Release deletes both (a pod already gone is
// released). Status reports, for the server's node lifecycle, why a pod
// is still Pending (Kubernetes' scheduler message) and whether a pod was
// taken back (evicted or preempted).
//
// Only namespaced calls are made (pods, secrets), so one Role in the
// location's namespace is all the RBAC Shoal needs (docs/guides/kubernetes.md).
package kubernetes

import (
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/shoal-ml/shoal/domain/catalog"
	"github.com/shoal-ml/shoal/domain/node"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// Config configures a Provider.
type Config struct {
	// Kubeconfig is the path of a kubeconfig file; empty uses the
	// in-cluster credentials of the pod the server runs in.
	Kubeconfig string
	// Context is the kubeconfig context to use; empty: its current one.
	Context string
	// Namespace holds the nodes' pods and Secrets (required).
	Namespace string
	// NodeImage is the main container's image of a node provisioned for
	// no particular image (required).
	NodeImage string
	// AgentImage holds the static shoal binary at /shoal (required):
	// the init container copies it into the pod.
	AgentImage string
	// ImagePullPolicy is the containers' pull policy (Always,
	// IfNotPresent, Never); empty: Kubernetes' default.
	ImagePullPolicy string
	// NodeSelector, Labels, Tolerations and PriorityClass go on every pod
	// as they are.
	NodeSelector  map[string]string
	Labels        map[string]string
	Tolerations   []Toleration
	PriorityClass string
	// SecurityContext is the pods' security context; the zero value runs
	// as non-root user DefaultRunAsUser.
	SecurityContext SecurityContext
	// HostNetwork puts the pods on their node's network (the agents are
	// reached at the node's address).
	HostNetwork bool
	// RequestFraction scales the pods' CPU and memory requests below
	// their limits (the size): 1 (the default) asks for the whole size
	// (Guaranteed QoS); 0.25 lets Kubernetes pack four nodes where one
	// size fits, each still limited to the size.
	RequestFraction float64
	// TerminationGrace is the pods' terminationGracePeriodSeconds: how
	// long an agent has to report its ranks preempted before it is
	// killed (default 15s).
	TerminationGrace time.Duration
	// AgentArgs are added to each agent's command line.
	AgentArgs []string
	// Logger receives the provider's events; never a credential.
	Logger *slog.Logger
}

// Toleration is one of a pod's tolerations, Kubernetes' fields.
type Toleration struct {
	Key, Operator, Value, Effect string
	// TolerationSeconds bounds a NoExecute toleration; nil: forever.
	TolerationSeconds *int64
}

// SecurityContext is the pods' security context.
type SecurityContext struct {
	// RunAsUser and RunAsGroup are the uid and gid the containers run
	// as; RunAsUser nil means DefaultRunAsUser.
	RunAsUser, RunAsGroup *int64
	// FSGroup owns the pods' volumes.
	FSGroup *int64
}

// DefaultRunAsUser is the uid a node's containers run as when the
// location sets none: never root.
const DefaultRunAsUser = 1000

// DefaultTerminationGrace is how long a node's agent has between SIGTERM
// and SIGKILL when the location sets nothing.
const DefaultTerminationGrace = 15 * time.Second

// Provider is the kubernetes provider of one location.
type Provider struct {
	cfg  Config
	core coreClient
	host string
	log  *slog.Logger
}

var (
	_ node.Provider                 = (*Provider)(nil)
	_ node.NodeWatcher              = (*Provider)(nil)
	_ catalog.WorkIsolationReporter = (*Provider)(nil)
)

// New checks cfg and builds the provider's client; it does not reach the
// cluster. Errors name the config field.
func New(cfg Config) (*Provider, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	rc, err := restConfig(cfg.Kubeconfig, cfg.Context)
	if err != nil {
		return nil, err
	}
	return newWithRest(cfg, rc)
}

// newWithRest builds the provider over a REST config.
func newWithRest(cfg Config, rc *rest.Config) (*Provider, error) {
	rc = rest.CopyConfig(rc)
	rc.UserAgent = "shoal"
	if rc.Timeout == 0 {
		rc.Timeout = 30 * time.Second
	}
	core, err := newCoreClient(rc)
	if err != nil {
		return nil, fmt.Errorf("kubernetes provider: %w", err)
	}
	if cfg.RequestFraction == 0 {
		cfg.RequestFraction = 1
	}
	if cfg.TerminationGrace == 0 {
		cfg.TerminationGrace = DefaultTerminationGrace
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	// Only the API's host is ever logged: a kubeconfig's URL could carry
	// credentials in its user info.
	host := rc.Host
	if u, err := url.Parse(rc.Host); err == nil {
		host = u.Host
	}
	return &Provider{cfg: cfg, core: core, host: host,
		log: cfg.Logger.With("provider", "kubernetes", "api", host, "namespace", cfg.Namespace)}, nil
}

// restConfig reads the kubeconfig at path (its context ctxName, or its
// current one), or the in-cluster credentials when path is empty.
func restConfig(path, ctxName string) (*rest.Config, error) {
	if path == "" {
		rc, err := rest.InClusterConfig()
		if err != nil {
			return nil, fmt.Errorf("kubeconfig: empty, and no in-cluster credentials: %w", err)
		}
		return rc, nil
	}
	rules := &clientcmd.ClientConfigLoadingRules{ExplicitPath: path}
	rc, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules,
		&clientcmd.ConfigOverrides{CurrentContext: ctxName}).ClientConfig()
	if err != nil {
		// clientcmd's errors name the file and the missing entry, never
		// its secrets.
		return nil, fmt.Errorf("kubeconfig %s: %w", path, err)
	}
	return rc, nil
}

// dnsLabel is a Kubernetes namespace's rule (RFC 1123 label).
var dnsLabel = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)

func (cfg *Config) check() error {
	switch {
	case cfg.Namespace == "":
		return errors.New("namespace: is required (the namespace the nodes' pods run in)")
	case len(cfg.Namespace) > 63 || !dnsLabel.MatchString(cfg.Namespace):
		return fmt.Errorf("namespace %q: must be a DNS label (lowercase letters, digits and '-', at most 63)", cfg.Namespace)
	case cfg.NodeImage == "":
		return errors.New("node_image: is required (the image of nodes provisioned for no particular job image)")
	case cfg.AgentImage == "":
		return errors.New("agent_image: is required (an image holding the static shoal binary at /shoal; images/agent/Containerfile builds one)")
	case cfg.RequestFraction < 0 || cfg.RequestFraction > 1:
		return fmt.Errorf("request_fraction %g: must be more than 0 and at most 1", cfg.RequestFraction)
	case cfg.TerminationGrace < 0:
		return fmt.Errorf("termination_grace %s: must not be negative", cfg.TerminationGrace)
	}
	switch cfg.ImagePullPolicy {
	case "", "Always", "IfNotPresent", "Never":
	default:
		return fmt.Errorf("image_pull_policy %q: must be Always, IfNotPresent or Never", cfg.ImagePullPolicy)
	}
	if u := cfg.SecurityContext.RunAsUser; u != nil && *u == 0 {
		return errors.New("security_context.run_as_user: 0 is root; a node's pod runs as non-root")
	}
	for i, t := range cfg.Tolerations {
		switch t.Operator {
		case "", "Equal", "Exists":
		default:
			return fmt.Errorf("tolerations[%d].operator %q: must be Equal or Exists", i, t.Operator)
		}
		switch t.Effect {
		case "", "NoSchedule", "PreferNoSchedule", "NoExecute":
		default:
			return fmt.Errorf("tolerations[%d].effect %q: must be NoSchedule, PreferNoSchedule or NoExecute", i, t.Effect)
		}
	}
	for k := range cfg.Labels {
		if strings.HasPrefix(k, labelPrefix) {
			return fmt.Errorf("labels[%q]: the %s prefix is Shoal's own", k, labelPrefix)
		}
	}
	return nil
}

// Name returns "kubernetes".
func (p *Provider) Name() string { return "kubernetes" }

// WorkIsolation says what a node's work can read: its own pod.
func (p *Provider) WorkIsolation() string {
	return "each node is a pod of its own in namespace " + p.cfg.Namespace + ": its work sees only that pod's container (running as a non-root uid)"
}
