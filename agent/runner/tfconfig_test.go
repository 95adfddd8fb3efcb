package runner

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// A tensorflow job's processes each get Azure ML's TF_CONFIG: the whole
// cluster, workers first then parameter servers, each on its node's
// reserved port + its local index, and their own task.
func TestTensorFlowEnvironment(t *testing.T) {
	tk := task(t, `printenv TF_CONFIG > "tf_$LOCAL_RANK"`)
	tk.Distribution = "tensorflow"
	tk.NodeCount, tk.Rank, tk.ProcessesPerNode = 2, 1, 2
	tk.WorkerCount, tk.ParameterServerCount = 3, 1
	tk.MasterAddr, tk.MasterPort = "10.0.0.4", 6105
	tk.Peers = []string{"10.0.0.4:6105", "10.0.0.5:7000"}
	res, _ := run(t, tk)
	if res.Reason != ReasonCompleted {
		t.Fatalf("result %+v", res)
	}
	wantCluster := map[string][]string{
		"worker": {"10.0.0.4:6105", "10.0.0.4:6106", "10.0.0.5:7000"},
		"ps":     {"10.0.0.5:7001"},
	}
	wantTask := []map[string]any{{"type": "worker", "index": 2.0}, {"type": "ps", "index": 0.0}}
	for local := range 2 {
		var got struct {
			Cluster     map[string][]string `json:"cluster"`
			Task        map[string]any      `json:"task"`
			Environment string              `json:"environment"`
		}
		raw := readFile(t, filepath.Join(tk.Dir, "tf_"+strconv.Itoa(local)))
		if err := json.Unmarshal([]byte(raw), &got); err != nil {
			t.Fatalf("TF_CONFIG of process %d: %v: %q", local, err, raw)
		}
		if !reflect.DeepEqual(got.Cluster, wantCluster) || !reflect.DeepEqual(got.Task, wantTask[local]) || got.Environment != "cloud" {
			t.Errorf("TF_CONFIG of process %d = %s", local, raw)
		}
	}
}

// One node names its tasks on the loopback; on several, a peer without
// a port gets the default one and a node without a peer the master's
// address.
func TestTensorFlowConfigOnOneNode(t *testing.T) {
	tk, err := normalize(Task{Command: "true", Dir: t.TempDir(), Distribution: "tensorflow", ProcessesPerNode: 2, WorkerCount: 2})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := tfConfig(tk, 1), `{"cluster":{"worker":["127.0.0.1:29500","127.0.0.1:29501"]},"environment":"cloud","task":{"index":1,"type":"worker"}}`; got != want {
		t.Errorf("TF_CONFIG = %s, want %s", got, want)
	}
	// A container's processes get the same (ctrhost starts from ProcessEnv).
	if got := ProcessEnv(tk, 1)["TF_CONFIG"]; got != tfConfig(tk, 1) {
		t.Errorf("a container's TF_CONFIG = %q", got)
	}
	// On one node the tasks are on the loopback whatever the master's
	// address (a namespace of the job's own may not have it).
	tk.MasterAddr = "10.0.0.9"
	if got, want := tfConfig(tk, 0), `{"cluster":{"worker":["127.0.0.1:29500","127.0.0.1:29501"]},"environment":"cloud","task":{"index":0,"type":"worker"}}`; got != want {
		t.Errorf("TF_CONFIG = %s, want %s", got, want)
	}
	tk.NodeCount, tk.ProcessesPerNode, tk.WorkerCount, tk.Peers = 2, 1, 2, []string{"10.1.1.1:0", ""}
	if got, want := tfConfig(tk, 0), `{"cluster":{"worker":["10.1.1.1:29500","10.0.0.9:29500"]},"environment":"cloud","task":{"index":0,"type":"worker"}}`; got != want {
		t.Errorf("TF_CONFIG = %s, want %s", got, want)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}
