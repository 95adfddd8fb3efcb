package arm

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/arm/armasset"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job/paralleljob"
)

// oneCode stands in for the code assets (another part's package) at this
// edge: it knows one code version.
type oneCode struct{}

func (oneCode) CodeArtifact(_ context.Context, ws, id string) (string, error) {
	if ws == "default" && strings.HasSuffix(id, "/codes/src/versions/1") {
		return "sha256:" + strings.Repeat("ab", 32), nil
	}
	return "", core.Errorf(core.ENOTFOUND, "code %q not found in workspace %q", id, ws)
}

// TestParallelComponentVersion: the parallel component azure-ai-ml 1.4.0
// registers for parallel_run_function (testdata/jobs/component_parallel.json,
// generated as pipeline_parallel.py's component) is kept: its task's code
// version packed, its environment a reference, partition_keys a list;
// shown again in Azure's shape, it reads back to the same component.
func TestParallelComponentVersion(t *testing.T) {
	raw, err := os.ReadFile("testdata/jobs/component_parallel.json")
	if err != nil {
		t.Fatal(err)
	}
	body, err := componentCode(context.Background(), oneCode{}, "default", raw)
	if err != nil {
		t.Fatal(err)
	}
	c, _, err := armasset.FromComponentVersion("default", "score", "1", body)
	if err != nil {
		t.Fatal(err)
	}
	if err := paralleljob.NormalizeComponent(c, true); err != nil {
		t.Fatal(err)
	}
	p := c.Parallel
	if c.Type != "parallel" || c.Code != "sha256:"+strings.Repeat("ab", 32) || c.Environment != "azureml:env:1" ||
		p.EntryScript != "score.py" || strings.Join(p.PartitionKeys, ",") != "Store,Brand" || p.MiniBatchSize != "10240" {
		t.Errorf("component %+v parallel %+v", c, p)
	}
	shown, err := json.Marshal(armasset.ToComponentVersion(Scope{Subscription: "s", ResourceGroup: "rg"}, c))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(shown), `"command"`) || !strings.Contains(string(shown), `"entry_script":"score.py"`) {
		t.Errorf("shown as %s", shown)
	}
	if !strings.Contains(string(shown), `/codes/src/versions/1`) || strings.Contains(string(shown), "sha256:") {
		t.Errorf("the task's code is not shown as the code version the SDK sent: %s", shown)
	}
	// Read back as the route reads a PUT: the code version packed again.
	shown, err = componentCode(context.Background(), oneCode{}, "default", shown)
	if err != nil {
		t.Fatal(err)
	}
	back, _, err := armasset.FromComponentVersion("default", "score", "1", shown)
	if err != nil {
		t.Fatalf("read back %s: %v", shown, err)
	}
	if back.Parallel == nil || back.Parallel.EntryScript != "score.py" || back.Code != c.Code || back.CodeAsset != "src:1" || back.Command != c.Command {
		t.Errorf("read back %+v", back)
	}
	// A code version of another workspace's, or one it lacks, is named.
	bad := strings.Replace(string(raw), "/codes/src/versions/1", "/codes/src/versions/9", 1)
	if _, err := componentCode(context.Background(), oneCode{}, "default", []byte(bad)); core.ErrorField(err) != "properties.componentSpec.task.code" {
		t.Errorf("a missing code version: %v", err)
	}
	other := strings.Replace(string(raw), "workspaces/default/environments", "workspaces/other/environments", 1)
	if _, err := componentCode(context.Background(), oneCode{}, "default", []byte(other)); core.ErrorField(err) != "properties.componentSpec.task.environment" {
		t.Errorf("another workspace's environment: %v", err)
	}
}
