package api_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/server/config"
)

const k8sClusterID = "/subscriptions/s/resourceGroups/rg/providers/Microsoft.Kubernetes/connectedClusters/prod"

func newKubernetesEnv(t *testing.T) *testEnv {
	t.Helper()
	cfg, err := config.Parse(strings.NewReader(`locations:
  - name: local
  - name: k8s
    provider: kubernetes
    kubernetes:
      namespace: ml
      node_image: a
      agent_image: b
      resource_id: ` + k8sClusterID + `
      instance_types:
        small:
          node_selector: {pool: cpu}
          resources:
            requests: {cpu: 500m, memory: 1Gi}
            limits: {cpu: "1", memory: 2Gi}
`))
	if err != nil {
		t.Fatal(err)
	}
	return newTestEnvConfig(t, cfg)
}

// An attached Kubernetes compute goes through the native API as Azure's
// YAML writes it, shows the cluster's resource_id, and its GET body
// applies again unchanged.
func TestKubernetesComputeRoundTripsThroughTheAPI(t *testing.T) {
	e := newKubernetesEnv(t)
	const path = "/api/v1/workspaces/default/computes/k8s-small"
	doc := `{"type":"kubernetes","name":"k8s-small","resource_id":"` + k8sClusterID + `","namespace":"ml","instance_type":"small","identity":{"type":"system_assigned"},"tags":{"team":"nlp"}}`
	resp, body := do(t, e.ts, e.admin, "PUT", path, doc, nil)
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("create: %d %v", resp.StatusCode, body)
	}
	_, got := do(t, e.ts, e.admin, "GET", path, "", nil)
	if got["type"] != "kubernetes" || got["resource_id"] != k8sClusterID || got["namespace"] != "ml" || got["instance_type"] != "small" ||
		got["location"] != "k8s" || got["size"] != "small@k8s" || got["max_instances"] != float64(4) {
		t.Fatalf("show: %v", got)
	}
	resp, again := do(t, e.ts, e.admin, "PUT", path, mustJSON(got), nil)
	if resp.StatusCode != http.StatusOK || again["etag"] != got["etag"] {
		t.Fatalf("applying the show output: %d %v (etag %v, was %v)", resp.StatusCode, again, again["etag"], got["etag"])
	}
	resp, body = do(t, e.ts, e.admin, "PUT", path, strings.Replace(doc, `"small"`, `"defaultinstancetype"`, 1), nil)
	if resp.StatusCode != http.StatusConflict || !strings.Contains(mustJSON(body), "instance_type") {
		t.Fatalf("changing the instance type: %d %v", resp.StatusCode, body)
	}
	// Jobs: the compute's instance type, or an unknown one refused
	// naming resources.instance_type and the list.
	jobs := "/api/v1/workspaces/default/jobs"
	if resp, body := do(t, e.ts, e.admin, "POST", jobs, `{"name":"on-small","command":"echo hi","compute":"k8s-small","resources":{"instance_type":"SMALL"}}`, nil); resp.StatusCode != http.StatusCreated {
		t.Fatalf("job on its instance type: %d %v", resp.StatusCode, body)
	}
	resp, body = do(t, e.ts, e.admin, "POST", jobs, `{"name":"on-huge","command":"echo hi","compute":"k8s-small","resources":{"instance_type":"huge"}}`, nil)
	if msg := mustJSON(body); resp.StatusCode != http.StatusBadRequest || !strings.Contains(msg, "resources.instance_type") || !strings.Contains(msg, "defaultinstancetype, small") {
		t.Fatalf("unknown instance type: %d %v", resp.StatusCode, body)
	}
}

// The ARM API takes computeType Kubernetes (resourceId, properties.namespace
// and defaultInstanceType) and shows it as Azure does.
func TestKubernetesComputeRoundTripsThroughARM(t *testing.T) {
	e := newKubernetesEnv(t)
	const path = "/subscriptions/s/resourceGroups/rg/providers/Microsoft.MachineLearningServices/workspaces/default/computes/k8s-arm?api-version=2024-04-01"
	put := `{"properties":{"computeType":"Kubernetes","resourceId":"` + k8sClusterID + `","description":"attached","properties":{"namespace":"ml","defaultInstanceType":"small"}}}`
	if resp, body := do(t, e.ts, e.admin, "PUT", path, put, nil); resp.StatusCode >= 300 {
		t.Fatalf("PUT: %d %v", resp.StatusCode, body)
	}
	_, got := do(t, e.ts, e.admin, "GET", path, "", nil)
	p, _ := got["properties"].(map[string]any)
	kp, _ := p["properties"].(map[string]any)
	its, _ := kp["instanceTypes"].(map[string]any)
	small, _ := its["small"].(map[string]any)
	if p["computeType"] != "Kubernetes" || p["resourceId"] != k8sClusterID || p["isAttachedCompute"] != true || p["computeLocation"] != "k8s" ||
		kp["namespace"] != "ml" || kp["defaultInstanceType"] != "small" || small == nil || mustJSON(small["nodeSelector"]) != `{"pool":"cpu"}` {
		t.Fatalf("GET: %v", mustJSON(got))
	}
	if resp, body := do(t, e.ts, e.admin, "PUT", path, mustJSON(got), nil); resp.StatusCode != http.StatusOK {
		t.Fatalf("PUT of the GET body: %d %v", resp.StatusCode, body)
	}
	_, keys := do(t, e.ts, e.admin, "POST", strings.Replace(path, "k8s-arm?", "k8s-arm/listKeys?", 1), "", nil)
	if keys["computeType"] != "Kubernetes" {
		t.Errorf("listKeys: %v", keys)
	}
	bad := strings.Replace(put, k8sClusterID, "/subscriptions/s/providers/Microsoft.Kubernetes/connectedClusters/other", 1)
	if resp, body := do(t, e.ts, e.admin, "PUT", strings.Replace(path, "k8s-arm", "k8s-bad", 1), bad, nil); resp.StatusCode != http.StatusBadRequest || !strings.Contains(mustJSON(body), "resource_id") {
		t.Fatalf("unknown cluster: %d %v", resp.StatusCode, body)
	}
}
