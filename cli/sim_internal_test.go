package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Without --cluster the replay has no price: it says so rather than
// report a cost of 0 as if it were one.
func TestSimWarnsThatCostIsZeroWithoutACluster(t *testing.T) {
	dir := t.TempDir()
	trace := filepath.Join(dir, "trace.csv")
	if err := os.WriteFile(trace, []byte("submit_time,duration,instance_count\n0,60,1\n30,60,1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	if code := RunWith(context.Background(), testSide, []string{"sim", "--trace", trace, "-o", "json"}, strings.NewReader(""), &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if !strings.Contains(errb.String(), "no --cluster") || !strings.Contains(errb.String(), "cost is 0") {
		t.Errorf("no warning about the missing price: %q", errb.String())
	}
	cluster := filepath.Join(dir, "c.yml")
	if err := os.WriteFile(cluster, []byte("name: cpu\nsize: Standard_DS3_v2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	errb.Reset()
	if code := RunWith(context.Background(), testSide, []string{"sim", "--trace", trace, "--cluster", cluster, "-o", "json"}, strings.NewReader(""), &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if strings.Contains(errb.String(), "cost is 0") {
		t.Errorf("warned with a cluster: %q", errb.String())
	}
}
