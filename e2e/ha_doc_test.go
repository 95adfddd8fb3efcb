package e2e_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/shoal-ml/shoal/internal/testpg"
)

// haExampleHeading starts the worked example of the high-availability
// page; its first yaml block is the config both servers run.
const haExampleHeading = "A worked example"

// The high-availability page's worked example, as written, makes two
// servers with data dirs of their own that both become ready on one
// PostgreSQL store: it gives both the same secrets_key_file (without it
// the second retries its start forever, its signing keys sealed with a
// key it does not have). Only what points at the page's machines is
// replaced: the store's URL and the key file's path by this test's, the
// load balancer's advertise_url and the ssh location (machines the test
// does not have) left out.
func TestHighAvailabilityDocExample(t *testing.T) {
	t.Parallel()
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	page, err := os.ReadFile(filepath.Join(root, "docs", "operations", "high-availability.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(page), haExampleHeading)
	if !ok {
		t.Fatalf("docs/operations/high-availability.md has no %q", haExampleHeading)
	}
	_, block, ok := strings.Cut(after, "```yaml\n")
	block, _, ok2 := strings.Cut(block, "```")
	if !ok || !ok2 {
		t.Fatal("the worked example has no yaml block")
	}
	cfg := map[string]any{}
	if err := yaml.Unmarshal([]byte(block), &cfg); err != nil {
		t.Fatalf("the worked example's config: %v", err)
	}
	for _, key := range []string{"store", "secrets_key_file"} {
		if _, ok := cfg[key]; !ok {
			t.Fatalf("the worked example's config has no %s:, which every server sharing a store needs the same of", key)
		}
	}
	pg := testpg.Start(t)
	cfg["store"] = pg.NewDatabase(t)
	cfg["secrets_key_file"] = filepath.Join(t.TempDir(), "secrets.key")
	delete(cfg, "advertise_url")
	delete(cfg, "locations")
	b, err := yaml.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	first := startServer(t, serverOpts{Config: string(b)})
	second := startServer(t, serverOpts{Config: string(b)})
	for _, s := range []*server{first, second} {
		waitFor(t, 30*time.Second, "the server at "+s.url+" to be ready", func() (bool, string) {
			r := readyz(s)
			return r["status"] == "ready" && (r["role"] == "leader" || r["role"] == "follower"), jsonStr(r)
		})
	}
}
