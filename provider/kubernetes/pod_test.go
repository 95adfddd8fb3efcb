package kubernetes

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/domain/node"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
)

func testProvider(t *testing.T, cfg Config) *Provider {
	t.Helper()
	if cfg.Namespace == "" {
		cfg.Namespace = "ml"
	}
	if cfg.NodeImage == "" {
		cfg.NodeImage = "example.com/base:1"
	}
	if cfg.AgentImage == "" {
		cfg.AgentImage = "example.com/shoal-agent:1"
	}
	if err := cfg.check(); err != nil {
		t.Fatal(err)
	}
	p, err := newWithRest(cfg, &rest.Config{Host: "https://k8s.example:6443", BearerToken: "secret-token"})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func gpuRequest() node.ProvisionRequest {
	return node.ProvisionRequest{
		Node:      &node.Node{ID: "gpu-cluster-n7", Compute: "gpu-cluster", VCPUs: 6, MemoryGB: 112, GPUs: 1},
		JoinToken: "the-join-token", ServerURL: "https://shoal.example:8443", ServerCA: []byte("-----BEGIN CERTIFICATE-----\n"),
	}
}

// A GPU size's pod asks for nvidia.com/gpu in requests and limits, and
// for its CPUs and memory as limits and requests alike by default
// (Guaranteed QoS).
func TestPodAsksForTheSizesGPUsCPUsAndMemory(t *testing.T) {
	pod := testProvider(t, Config{}).Pod(gpuRequest())
	res := pod.Spec.Containers[0].Resources
	for _, rl := range []corev1.ResourceList{res.Limits, res.Requests} {
		if q := rl[GPUResource]; q.Cmp(resource.MustParse("1")) != 0 {
			t.Errorf("nvidia.com/gpu = %s, want 1", q.String())
		}
		if q := rl[corev1.ResourceCPU]; q.Cmp(resource.MustParse("6")) != 0 {
			t.Errorf("cpu = %s, want 6", q.String())
		}
		if q := rl[corev1.ResourceMemory]; q.Cmp(resource.MustParse("112Gi")) != 0 {
			t.Errorf("memory = %s, want 112Gi", q.String())
		}
	}
}

// RequestFraction lowers CPU and memory requests, never limits or GPUs.
func TestRequestFractionScalesOnlyCPUAndMemoryRequests(t *testing.T) {
	pod := testProvider(t, Config{RequestFraction: 0.25}).Pod(gpuRequest())
	res := pod.Spec.Containers[0].Resources
	if q := res.Requests[corev1.ResourceCPU]; q.Cmp(resource.MustParse("1500m")) != 0 {
		t.Errorf("cpu request = %s, want 1500m", q.String())
	}
	if q := res.Requests[corev1.ResourceMemory]; q.Cmp(resource.MustParse("28Gi")) != 0 {
		t.Errorf("memory request = %s, want 28Gi", q.String())
	}
	if q := res.Limits[corev1.ResourceCPU]; q.Cmp(resource.MustParse("6")) != 0 {
		t.Errorf("cpu limit = %s, want 6", q.String())
	}
	if q := res.Requests[GPUResource]; q.Cmp(resource.MustParse("1")) != 0 {
		t.Errorf("gpu request = %s, want 1", q.String())
	}
}

// The pod carries the location's placement and security settings, runs
// as non-root, never restarts, injects the agent from the agent image
// and runs it in the node image, with the join token only by reference.
func TestPodSpecCarriesLocationSettingsAndInjectsTheAgent(t *testing.T) {
	uid, gid := int64(2000), int64(3000)
	secs := int64(60)
	p := testProvider(t, Config{
		NodeSelector: map[string]string{"pool": "a100"}, Labels: map[string]string{"team": "nlp"},
		Tolerations:     []Toleration{{Key: "nvidia.com/gpu", Operator: "Exists", Effect: "NoSchedule", TolerationSeconds: &secs}},
		PriorityClass:   "batch-low",
		SecurityContext: SecurityContext{RunAsUser: &uid, RunAsGroup: &gid},
		ImagePullPolicy: "IfNotPresent", TerminationGrace: 20 * time.Second, AgentArgs: []string{"--orphan-timeout", "5m"},
	})
	req := gpuRequest()
	pod := p.Pod(req)
	s := pod.Spec
	if pod.Name != "shoal-gpu-cluster-n7" || pod.Namespace != "ml" {
		t.Errorf("pod %s/%s", pod.Namespace, pod.Name)
	}
	if s.NodeSelector["pool"] != "a100" || pod.Labels["team"] != "nlp" || pod.Labels[LabelNode] != "gpu-cluster-n7" || pod.Labels[LabelManagedBy] != "shoal" {
		t.Errorf("selector %v, labels %v", s.NodeSelector, pod.Labels)
	}
	if len(s.Tolerations) != 1 || s.Tolerations[0].Key != "nvidia.com/gpu" || s.Tolerations[0].Effect != corev1.TaintEffectNoSchedule || *s.Tolerations[0].TolerationSeconds != 60 {
		t.Errorf("tolerations %+v", s.Tolerations)
	}
	if s.PriorityClassName != "batch-low" || s.RestartPolicy != corev1.RestartPolicyNever || *s.TerminationGracePeriodSeconds != 20 {
		t.Errorf("priority %q, restart %q, grace %d", s.PriorityClassName, s.RestartPolicy, *s.TerminationGracePeriodSeconds)
	}
	if sc := s.SecurityContext; !*sc.RunAsNonRoot || *sc.RunAsUser != 2000 || *sc.RunAsGroup != 3000 {
		t.Errorf("security context %+v", sc)
	}
	if *s.AutomountServiceAccountToken {
		t.Error("the pod mounts a service account token; the agent needs none")
	}
	init, main := s.InitContainers[0], s.Containers[0]
	if init.Image != "example.com/shoal-agent:1" || main.Image != "example.com/base:1" || main.ImagePullPolicy != corev1.PullIfNotPresent {
		t.Errorf("images: init %s, main %s (%s)", init.Image, main.Image, main.ImagePullPolicy)
	}
	if init.Command[0] != "/shoal" || init.Command[len(init.Command)-1] != main.Command[0] {
		t.Errorf("init %v does not install what main runs (%v)", init.Command, main.Command)
	}
	args := strings.Join(main.Args, " ")
	for _, want := range []string{"agent --server https://shoal.example:8443 --node-id gpu-cluster-n7", "--preempt-on-sigterm", "--node-image example.com/base:1", "--address $(SHOAL_POD_IP)", "--orphan-timeout 5m"} {
		if !strings.Contains(args, want) {
			t.Errorf("args %q lack %q", args, want)
		}
	}
	specJSON, err := json.Marshal(pod)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(specJSON), req.JoinToken) {
		t.Error("the join token is in the pod's spec")
	}
	var tokenRef bool
	for _, e := range main.Env {
		if e.Name == "SHOAL_JOIN_TOKEN" && e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil && e.ValueFrom.SecretKeyRef.Name == pod.Name {
			tokenRef = true
		}
	}
	if !tokenRef {
		t.Errorf("SHOAL_JOIN_TOKEN is not read from the node's Secret: %+v", main.Env)
	}
	if sec := p.secret(req); string(sec.Data[tokenKey]) != req.JoinToken || sec.Name != pod.Name {
		t.Errorf("secret %s holds %q", sec.Name, sec.Data[tokenKey])
	}
	// A node provisioned for a job's image runs in it.
	req.Image = "example.com/train:3"
	if img := p.Pod(req).Spec.Containers[0].Image; img != "example.com/train:3" {
		t.Errorf("job image: pod runs %s", img)
	}
}

func TestPodNameIsADNSLabel(t *testing.T) {
	for id, want := range map[string]string{
		"cpu-cluster-n1": "shoal-cpu-cluster-n1",
		"My_Cluster-n2":  "shoal-my-cluster-n2-",
	} {
		got := PodName(id)
		if !strings.HasPrefix(got, want) || len(got) > 63 || !dnsLabel.MatchString(got) {
			t.Errorf("PodName(%q) = %q, want a DNS label starting %q", id, got, want)
		}
	}
	long := PodName(strings.Repeat("a", 80) + "-n1")
	if len(long) > 63 || !dnsLabel.MatchString(long) || long == PodName(strings.Repeat("a", 80)+"-n2") {
		t.Errorf("long ids: %q not a unique DNS label", long)
	}
}

// Bad config is refused with the field and the rule named.
func TestConfigErrorsNameTheField(t *testing.T) {
	zero := int64(0)
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{NodeImage: "a", AgentImage: "b"}, "namespace: is required"},
		{Config{Namespace: "ML", NodeImage: "a", AgentImage: "b"}, `namespace "ML": must be a DNS label`},
		{Config{Namespace: "ml", AgentImage: "b"}, "node_image: is required"},
		{Config{Namespace: "ml", NodeImage: "a"}, "agent_image: is required"},
		{Config{Namespace: "ml", NodeImage: "a", AgentImage: "b", RequestFraction: 2}, "request_fraction 2"},
		{Config{Namespace: "ml", NodeImage: "a", AgentImage: "b", SecurityContext: SecurityContext{RunAsUser: &zero}}, "security_context.run_as_user: 0 is root"},
		{Config{Namespace: "ml", NodeImage: "a", AgentImage: "b", Tolerations: []Toleration{{Operator: "Maybe"}}}, `tolerations[0].operator "Maybe"`},
		{Config{Namespace: "ml", NodeImage: "a", AgentImage: "b", ImagePullPolicy: "Sometimes"}, `image_pull_policy "Sometimes"`},
		{Config{Namespace: "ml", NodeImage: "a", AgentImage: "b", Labels: map[string]string{"shoal.dev/node": "x"}}, `labels["shoal.dev/node"]`},
	} {
		if err := tc.cfg.check(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.cfg, err, tc.want)
		}
	}
}

// Kubernetes' reasons become the node's: the scheduler's message while
// Pending, a DisruptionTarget condition or an Evicted pod is preempted.
func TestStatusOfReadsPendingReasonAndPreemption(t *testing.T) {
	pending := &corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{{
		Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: "Unschedulable",
		Message: "0/3 nodes are available: 3 Insufficient nvidia.com/gpu.",
	}}}}
	if st := StatusOf(pending); st.Pending != "Unschedulable: 0/3 nodes are available: 3 Insufficient nvidia.com/gpu." || st.Running || st.Preempted {
		t.Errorf("pending: %+v", st)
	}
	pull := &corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodPending, ContainerStatuses: []corev1.ContainerStatus{{
		Name: "node", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ErrImageNeverPull", Message: "image not present"}},
	}}}}
	if st := StatusOf(pull); st.Pending != "container node: ErrImageNeverPull: image not present" {
		t.Errorf("image: %+v", st)
	}
	now := metav1.Now()
	target := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{DeletionTimestamp: &now}, Status: corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{{
		Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: "EvictionByEvictionAPI", Message: "Eviction API: evicting",
	}}}}
	if st := StatusOf(target); !st.Preempted || st.Running || !strings.Contains(st.Reason, "EvictionByEvictionAPI") {
		t.Errorf("disruption target: %+v", st)
	}
	evicted := &corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodFailed, Reason: "Evicted", Message: "The node was low on resource: memory."}}
	if st := StatusOf(evicted); !st.Preempted || st.Reason != "Evicted: The node was low on resource: memory." {
		t.Errorf("evicted: %+v", st)
	}
	if st := StatusOf(&corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodRunning}}); !st.Running || st.Preempted || st.Pending != "" {
		t.Errorf("running: %+v", st)
	}
}
