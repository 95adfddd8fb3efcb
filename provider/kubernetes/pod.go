package kubernetes

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"math"
	"regexp"
	"strings"

	"github.com/shoal-ml/shoal/domain/node"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Labels and paths of a node's pod.
const (
	labelPrefix = "shoal.dev/"
	// LabelNode is the label holding the Shoal node's id.
	LabelNode = labelPrefix + "node"
	// LabelCompute is the label holding the node's compute.
	LabelCompute = labelPrefix + "compute"
	// LabelManagedBy marks what Shoal made (app.kubernetes.io's label).
	LabelManagedBy = "app.kubernetes.io/managed-by"
	// AnnotationImage records the image the pod's node serves.
	AnnotationImage = labelPrefix + "image"

	// GPUResource is the extended resource a node's GPUs are asked as
	// (NVIDIA's device plugin).
	GPUResource = corev1.ResourceName("nvidia.com/gpu")

	// agentDir is the emptyDir holding the injected binary and the
	// node's work dir.
	agentDir = "/opt/shoal"
	// agentBinary is where the agent image keeps the binary.
	agentBinary = "/shoal"
	tokenKey    = "join-token"
)

// PodName is the name of node id's pod and of its Secret: "shoal-" and
// the id, made a DNS label (lowercase, '-' for anything else, at most 63
// characters, a hash of the id appended when it had to change).
func PodName(id string) string {
	name := "shoal-" + strings.ToLower(id)
	clean := strings.Trim(nonLabel.ReplaceAllString(name, "-"), "-")
	if clean == name && len(name) <= 63 {
		return name
	}
	sum := sha256.Sum256([]byte(id))
	suffix := "-" + hex.EncodeToString(sum[:4])
	if len(clean) > 63-len(suffix) {
		clean = strings.TrimRight(clean[:63-len(suffix)], "-")
	}
	return clean + suffix
}

var nonLabel = regexp.MustCompile(`[^a-z0-9-]+`)

// image is the image node req's pod runs: the job's it is provisioned
// for, else the location's node image.
func (p *Provider) image(req node.ProvisionRequest) string {
	if req.Image != "" {
		return req.Image
	}
	return p.cfg.NodeImage
}

// secret is the Secret holding node req's join token.
func (p *Provider) secret(req node.ProvisionRequest) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: PodName(req.Node.ID), Namespace: p.cfg.Namespace, Labels: p.labels(req.Node)},
		Type:       corev1.SecretTypeOpaque,
		Data:       map[string][]byte{tokenKey: []byte(req.JoinToken)},
	}
}

// labels are the location's labels and Shoal's own.
func (p *Provider) labels(n *node.Node) map[string]string {
	l := make(map[string]string, len(p.cfg.Labels)+3)
	for k, v := range p.cfg.Labels {
		l[k] = v
	}
	l[LabelManagedBy] = "shoal"
	l[LabelNode] = labelValue(n.ID)
	l[LabelCompute] = labelValue(n.Compute)
	return l
}

// labelValue makes s a label value (at most 63 of [A-Za-z0-9-_.],
// alphanumeric at both ends).
func labelValue(s string) string {
	s = nonLabelValue.ReplaceAllString(s, "-")
	if len(s) > 63 {
		s = s[:63]
	}
	return strings.Trim(s, "-_.")
}

var nonLabelValue = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// Pod is node req's pod: the size's resources, the location's
// placement and security settings, the agent injected by an init
// container and run in the node's image.
func (p *Provider) Pod(req node.ProvisionRequest) *corev1.Pod {
	n := req.Node
	name := PodName(n.ID)
	image := p.image(req)
	pull := corev1.PullPolicy(p.cfg.ImagePullPolicy)
	args := []string{"agent", "--server", req.ServerURL, "--node-id", n.ID,
		"--work-dir", agentDir + "/work", "--address", "$(SHOAL_POD_IP)",
		// SIGTERM is the pod being deleted: evicted, preempted or
		// released. The agent reports its ranks preempted (requeued,
		// retries unspent) before the grace period ends.
		"--preempt-on-sigterm",
		// The node's container is the job's image: ranks run in it as
		// processes, never in a container of their own.
		"--node-image", image}
	args = append(args, p.cfg.AgentArgs...)
	env := []corev1.EnvVar{
		{Name: "SHOAL_POD_IP", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "status.podIP"}}},
		{Name: "SHOAL_JOIN_TOKEN", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: name}, Key: tokenKey}}},
		{Name: "HOME", Value: agentDir + "/work"},
	}
	if len(req.ServerCA) > 0 {
		env = append(env, corev1.EnvVar{Name: "SHOAL_SERVER_CA", Value: base64.StdEncoding.EncodeToString(req.ServerCA)})
	}
	grace := int64(math.Ceil(p.cfg.TerminationGrace.Seconds()))
	noToken, nonRoot, noEscalation := false, true, false
	uid := int64(DefaultRunAsUser)
	if u := p.cfg.SecurityContext.RunAsUser; u != nil {
		uid = *u
	}
	containerSecurity := &corev1.SecurityContext{
		AllowPrivilegeEscalation: &noEscalation,
		Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
	}
	mount := []corev1.VolumeMount{{Name: "shoal", MountPath: agentDir}}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: p.cfg.Namespace, Labels: p.labels(n),
			Annotations: map[string]string{AnnotationImage: image},
		},
		Spec: corev1.PodSpec{
			RestartPolicy:                 corev1.RestartPolicyNever,
			TerminationGracePeriodSeconds: &grace,
			// The agent never talks to the Kubernetes API.
			AutomountServiceAccountToken: &noToken,
			HostNetwork:                  p.cfg.HostNetwork,
			NodeSelector:                 p.cfg.NodeSelector,
			PriorityClassName:            p.cfg.PriorityClass,
			Tolerations:                  p.tolerations(),
			SecurityContext: &corev1.PodSecurityContext{
				RunAsNonRoot: &nonRoot, RunAsUser: &uid,
				RunAsGroup: p.cfg.SecurityContext.RunAsGroup, FSGroup: p.cfg.SecurityContext.FSGroup,
			},
			Volumes: []corev1.Volume{{Name: "shoal", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}},
			InitContainers: []corev1.Container{{
				Name: "shoal-agent", Image: p.cfg.AgentImage, ImagePullPolicy: pull,
				Command:         []string{agentBinary, "agent", "install", agentDir + "/shoal"},
				VolumeMounts:    mount,
				SecurityContext: containerSecurity,
				Resources:       corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("128Mi")}},
			}},
			Containers: []corev1.Container{{
				Name: "node", Image: image, ImagePullPolicy: pull,
				Command:         []string{agentDir + "/shoal"},
				Args:            args,
				Env:             env,
				WorkingDir:      agentDir,
				VolumeMounts:    mount,
				SecurityContext: containerSecurity,
				Resources:       p.resources(n),
			}},
		},
	}
	placeInstanceType(pod, req.InstanceType)
	return pod
}

// resources are the size's: CPUs and memory as limits, requests scaled
// by RequestFraction; GPUs as nvidia.com/gpu, requested whole (an
// extended resource cannot be overcommitted).
func (p *Provider) resources(n *node.Node) corev1.ResourceRequirements {
	limits, requests := corev1.ResourceList{}, corev1.ResourceList{}
	if n.VCPUs > 0 {
		limits[corev1.ResourceCPU] = *resource.NewMilliQuantity(int64(n.VCPUs)*1000, resource.DecimalSI)
		requests[corev1.ResourceCPU] = *resource.NewMilliQuantity(max(1, int64(float64(n.VCPUs)*1000*p.cfg.RequestFraction)), resource.DecimalSI)
	}
	if n.MemoryGB > 0 {
		mib := int64(n.MemoryGB * 1024)
		limits[corev1.ResourceMemory] = *resource.NewQuantity(mib<<20, resource.BinarySI)
		requests[corev1.ResourceMemory] = *resource.NewQuantity(max(1, int64(float64(mib)*p.cfg.RequestFraction))<<20, resource.BinarySI)
	}
	if n.GPUs > 0 {
		gpus := *resource.NewQuantity(int64(n.GPUs), resource.DecimalSI)
		limits[GPUResource], requests[GPUResource] = gpus, gpus
	}
	return corev1.ResourceRequirements{Limits: limits, Requests: requests}
}

func (p *Provider) tolerations() []corev1.Toleration {
	var out []corev1.Toleration
	for _, t := range p.cfg.Tolerations {
		out = append(out, corev1.Toleration{Key: t.Key, Operator: corev1.TolerationOperator(t.Operator), Value: t.Value,
			Effect: corev1.TaintEffect(t.Effect), TolerationSeconds: t.TolerationSeconds})
	}
	return out
}

// String describes the pod's size for messages.
func describe(n *node.Node) string {
	return fmt.Sprintf("%d CPUs, %g GB, %d GPUs", n.VCPUs, n.MemoryGB, n.GPUs)
}
