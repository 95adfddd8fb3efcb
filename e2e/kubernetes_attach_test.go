package e2e_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/internal/testk8s"
	"github.com/shoal-ml/shoal/provider/kubernetes"
)

const attachedClusterID = "/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/rg/providers/Microsoft.Kubernetes/connectedClusters/e2e"

// podSpec is the part of a pod the instance type sets.
type podSpec struct {
	Spec struct {
		NodeSelector map[string]string `json:"nodeSelector"`
		Containers   []struct {
			Name      string `json:"name"`
			Resources struct {
				Requests map[string]string `json:"requests"`
				Limits   map[string]string `json:"limits"`
			} `json:"resources"`
		} `json:"containers"`
	} `json:"spec"`
}

// Azure's `type: kubernetes` YAML attaches the kubernetes location as a
// compute (create -f, and show -o yaml applies again unchanged); a job
// naming its instance type runs in a pod carrying the instance type's
// requests, limits and node selector; an unknown instance type is
// refused naming resources.instance_type and the list.
func testKubernetesAttachedComputeRunsAnInstanceType(t *testing.T) {
	c := testk8s.Shared(t)
	c.ImportAgentImage(t)
	ns := c.Namespace(t)
	loc := kubernetesLocation(c, ns) + `      resource_id: ` + attachedClusterID + `
      instance_types:
        tiny:
          node_selector: {kubernetes.io/hostname: localhost}
          resources:
            requests: {cpu: 50m, memory: 64Mi}
            limits: {cpu: "1", memory: 256Mi}
`
	s := startServer(t, serverOpts{Config: fastJobsConfig + "locations:\n  - name: local\n" + loc})

	dir := t.TempDir()
	azure := filepath.Join(dir, "k8s-compute.yml")
	writeFile(t, azure, `$schema: https://azuremlschemas.azureedge.net/latest/kubernetesCompute.schema.json
type: kubernetes
name: k8s-tiny
resource_id: `+attachedClusterID+`
namespace: `+ns+`
identity:
  type: system_assigned
description: attached in e2e
instance_type: tiny
max_instances: 1
idle_time_before_scale_down: 2
`)
	mustRun(t, s.env, "compute", "create", "-f", azure, "-o", "none")
	shown := mustRun(t, s.env, "compute", "show", "-n", "k8s-tiny", "-o", "yaml")
	for _, want := range []string{"type: kubernetes", "resource_id: " + attachedClusterID, "namespace: " + ns, "instance_type: tiny", "location: k8s"} {
		if !strings.Contains(shown, want) {
			t.Errorf("show -o yaml lacks %q:\n%s", want, shown)
		}
	}
	again := filepath.Join(dir, "shown.yml")
	writeFile(t, again, shown)
	mustRun(t, s.env, "compute", "create", "-f", again, "-o", "none")
	if now := mustRun(t, s.env, "compute", "show", "-n", "k8s-tiny", "-o", "yaml"); now != shown {
		t.Errorf("applying show's output changed the compute:\n%s\nnow:\n%s", shown, now)
	}
	var types []struct {
		Name       string `json:"name"`
		Default    bool   `json:"default"`
		CPURequest string `json:"cpu_request"`
	}
	if err := json.Unmarshal([]byte(mustRun(t, s.env, "compute", "instance-type", "list", "-n", "k8s-tiny", "-o", "json")), &types); err != nil {
		t.Fatal(err)
	}
	if len(types) != 2 || types[1].Name != "tiny" || !types[1].Default || types[1].CPURequest != "50m" || types[0].Name != "defaultinstancetype" {
		t.Errorf("instance-type list: %+v", types)
	}
	// az ml compute attach's flags make one too.
	mustRun(t, s.env, "compute", "attach", "--type", "Kubernetes", "--name", "k8s-default", "--resource-id", "k8s", "-o", "none")
	if out := mustRun(t, s.env, "compute", "show", "-n", "k8s-default", "-o", "yaml"); !strings.Contains(out, "instance_type: defaultinstancetype") {
		t.Errorf("attached compute:\n%s", out)
	}

	stderr, _ := mustFail(t, s.env, "job", "create", "-f", writeJobFile(t, "type: command\ncommand: echo hi\ncompute: azureml:k8s-tiny\nresources:\n  instance_type: huge\n"))
	if !strings.Contains(stderr, "resources.instance_type") || !strings.Contains(stderr, "defaultinstancetype, tiny") {
		t.Errorf("unknown instance type: %s", stderr)
	}
	name := submitJob(t, s, writeJobFile(t, "type: command\ncommand: echo on tiny; sleep 3\ncompute: azureml:k8s-tiny\nresources:\n  instance_type: tiny\n"))
	waitJob(t, s, name, 2*time.Minute, "Running")
	a := currentAttempt(t, s, name)
	var pod podSpec
	if err := c.Client.Do(context.Background(), http.MethodGet, "/api/v1/namespaces/"+ns+"/pods/"+kubernetes.PodName(a.Ranks[0].NodeID), nil, &pod); err != nil {
		t.Fatalf("get pod: %v", err)
	}
	if pod.Spec.NodeSelector["kubernetes.io/hostname"] != "localhost" {
		t.Errorf("node selector %v", pod.Spec.NodeSelector)
	}
	var res string
	for _, ct := range pod.Spec.Containers {
		if ct.Name == "node" {
			res = fmt.Sprint(ct.Resources.Requests["cpu"], " ", ct.Resources.Requests["memory"], " ", ct.Resources.Limits["cpu"], " ", ct.Resources.Limits["memory"])
		}
	}
	if res != "50m 64Mi 1 256Mi" {
		t.Errorf("node container's requests and limits %q, want the instance type's 50m 64Mi 1 256Mi", res)
	}
	// Quota counts the node by its instance type: 1 vCPU (its CPU limit).
	var usages []struct {
		Name struct {
			Value string `json:"value"`
		} `json:"name"`
		CurrentValue int `json:"current_value"`
	}
	if err := json.Unmarshal([]byte(mustRun(t, s.env, "compute", "list-usage", "--location", "k8s", "-o", "json")), &usages); err != nil {
		t.Fatal(err)
	}
	held := -1
	for _, u := range usages {
		if u.Name.Value == "kubernetesInstanceTypeFamily" {
			held = u.CurrentValue
		}
	}
	if held != 1 {
		t.Errorf("kubernetesInstanceTypeFamily vCPUs in use = %d, want 1 (tiny's CPU limit): %+v", held, usages)
	}
	waitJob(t, s, name, time.Minute, "Completed")
	if log := jobLog(t, s, name); !strings.Contains(log, "on tiny") {
		t.Errorf("log %q", log)
	}
}
