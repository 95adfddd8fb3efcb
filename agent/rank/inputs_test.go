package rank

import (
	"slices"
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/domain/asset"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/node"
)

// Only a task with an input fetched as files gets an inputs folder; a
// literal input is substituted in the command and needs none.
func TestHasFileInputs(t *testing.T) {
	for name, c := range map[string]struct {
		inputs map[string]*job.JobInput
		want   bool
	}{
		"none":    {nil, false},
		"literal": {map[string]*job.JobInput{"lr": {Value: 0.1}}, false},
		"nil":     {map[string]*job.JobInput{"x": nil}, false},
		"file":    {map[string]*job.JobInput{"lr": {Value: 0.1}, "data": {Path: "art-1", Type: "uri_folder"}}, true},
	} {
		if got := hasFileInputs(&node.AgentTask{Inputs: c.inputs}); got != c.want {
			t.Errorf("%s: hasFileInputs = %v, want %v", name, got, c.want)
		}
	}
}

// A direct input is the URI itself: it needs no inputs folder.
func TestHasFileInputsDirect(t *testing.T) {
	src := map[string]*node.DataSource{"d": {Kind: node.DataS3, URI: "azureml://datastores/s3/paths/x/"}}
	direct := &node.AgentTask{Inputs: map[string]*job.JobInput{"d": {Path: "azureml://datastores/s3/paths/x/", Mode: "direct"}}, InputSources: src}
	mounted := &node.AgentTask{Inputs: map[string]*job.JobInput{"d": {Path: "azureml://datastores/s3/paths/x/"}}, InputSources: src}
	if hasFileInputs(direct) || !hasFileInputs(mounted) {
		t.Errorf("hasFileInputs: direct %v (want false), ro_mount %v (want true)", hasFileInputs(direct), hasFileInputs(mounted))
	}
}

// The account of a Blob service URL, for its shared key: the host's
// first label, or Azurite's path-style first segment.
func TestBlobAccount(t *testing.T) {
	for url, want := range map[string]string{
		"https://acct.blob.core.windows.net":       "acct",
		"http://10.1.2.3:10000/devstoreaccount1":   "devstoreaccount1",
		"http://10.1.2.3:10000/devstoreaccount1/":  "devstoreaccount1",
		"https://team.blob.core.chinacloudapi.cn/": "team",
	} {
		if got := blobAccount(url); got != want {
			t.Errorf("blobAccount(%q) = %q, want %q", url, got, want)
		}
	}
}

// The server's own endpoint is denied by name and by address, on its
// URL's port or the scheme's default.
func TestDeniedEndpoints(t *testing.T) {
	if got := deniedEndpoints("http://127.0.0.1:8080"); !slices.Contains(got, "127.0.0.1:8080") {
		t.Errorf("deniedEndpoints = %v", got)
	}
	if got := deniedEndpoints("https://localhost"); !slices.Contains(got, "localhost:443") || !slices.Contains(got, "127.0.0.1:443") {
		t.Errorf("deniedEndpoints = %v, want localhost:443 and 127.0.0.1:443", got)
	}
}

// The cache's key names where the bytes are, never a credential: two
// datastores with other secrets on one container share entries.
func TestSourceIdentityHoldsNoSecret(t *testing.T) {
	a := &node.DataSource{Kind: node.DataS3, ServiceURL: "http://s3:9000", Container: "b", Prefix: "p/", Credentials: &asset.Credentials{SecretAccessKey: "s1"}}
	b := *a
	b.Credentials = &asset.Credentials{SecretAccessKey: "s2"}
	if sourceIdentity(a) != sourceIdentity(&b) || strings.Contains(sourceIdentity(a), "s1") {
		t.Errorf("identity %q", sourceIdentity(a))
	}
	c := *a
	c.Prefix = "q/"
	if sourceIdentity(a) == sourceIdentity(&c) {
		t.Error("two prefixes share an identity")
	}
}
