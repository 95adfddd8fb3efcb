package cli

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/domain/asset"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/job/pipelinejob"
	"github.com/shoal-ml/shoal/domain/job/sweepjob"
	"github.com/shoal-ml/shoal/internal/testenv"
)

// jobSchemaRE picks the job files of Azure/azureml-examples: their
// $schema names a job schema (commandJob, pipelineJob, sweepJob,
// autoMLJob, sparkJob...), never a component's or an asset's.
var jobSchemaRE = regexp.MustCompile(`(?mi)^\$schema:\s*\S*job\.(schema\.)?json\s*$`)

// TestAzureMLExamplesAccepted measures how many of Azure's example job
// files (a checkout of Azure/azureml-examples named by
// SHOAL_AZUREML_EXAMPLES; its cli/jobs folder) Shoal accepts: `job
// create` reads the file and uploads its local files as a user's CLI
// does, and the server's decoders and rules (decode, normalize; registry
// references are refused at submission, but for Azure's curated
// environments, which a server maps to images: examplesCurated) take the
// document it sends. It
// logs every refusal and fails when fewer than SHOAL_AZUREML_EXAMPLES_MIN
// are accepted. The examples come from the internet, so the test runs
// only where a checkout is given.
func TestAzureMLExamplesAccepted(t *testing.T) {
	root := os.Getenv("SHOAL_AZUREML_EXAMPLES")
	testenv.Optional(t, "a checkout of Azure/azureml-examples", func() error {
		if root == "" {
			return errors.New("SHOAL_AZUREML_EXAMPLES is not set")
		}
		return nil
	}, "the examples come from the internet: git clone https://github.com/Azure/azureml-examples and set SHOAL_AZUREML_EXAMPLES to it")
	var files []string
	err := filepath.WalkDir(filepath.Join(root, "cli", "jobs"), func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !(strings.HasSuffix(p, ".yml") || strings.HasSuffix(p, ".yaml")) {
			return err
		}
		if b, err := os.ReadFile(p); err == nil && jobSchemaRE.Match(b) {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(files)
	accepted, decoded := 0, 0
	reasons := map[string]int{}
	for _, f := range files {
		rel, _ := filepath.Rel(root, f)
		why := acceptExample(t, f)
		if why == "" || why == registryRefusal {
			decoded++
		}
		if why == "" {
			accepted++
			t.Logf("ok      %s", rel)
			continue
		}
		t.Logf("refused %s: %s", rel, why)
		reasons[firstWords(why)]++
	}
	for _, k := range sortedByCount(reasons) {
		t.Logf("%3d × %s", reasons[k], k)
	}
	t.Logf("decoded %d of %d job files; accepted %d (the others name Azure's registries)", decoded, len(files), accepted)
	if min := os.Getenv("SHOAL_AZUREML_EXAMPLES_MIN"); min != "" {
		var n int
		if err := json.Unmarshal([]byte(min), &n); err != nil {
			t.Fatalf("SHOAL_AZUREML_EXAMPLES_MIN=%q: %v", min, err)
		}
		if accepted < n {
			t.Errorf("accepted %d of %d job files, want at least %d", accepted, len(files), n)
		}
	}
}

// acceptExample submits one file through the CLI and decodes what it
// sends as the server does; it returns why the file is refused, or "".
func acceptExample(t *testing.T, file string) string {
	rec, srv := newSubmitRecorder(t)
	if _, stderr, err := runCLI(t, srv, newFakeClock(), "job", "create", "-f", file, "-n", "example"); err != nil {
		return "cli: " + strings.TrimSpace(err.Error()+" "+stderr)
	}
	if len(rec.docs) != 1 {
		return "cli: sent no document"
	}
	body, err := json.Marshal(rec.docs[0])
	if err != nil {
		return err.Error()
	}
	typ, err := pipelinejob.DecodeJobType(body)
	if err != nil {
		return "server: " + err.Error()
	}
	switch typ {
	case job.JobTypePipeline:
		spec, err := pipelinejob.DecodePipelineSpec(body)
		if err == nil {
			err = pipelinejob.NormalizePipelineSpec(spec)
		}
		if err != nil {
			return "server: " + err.Error()
		}
	case job.JobTypeSweep:
		spec, err := sweepjob.DecodeSweepSpec(body)
		if err == nil {
			err = sweepjob.NormalizeSweepSpec(spec)
		}
		if err != nil {
			return "server: " + err.Error()
		}
	default:
		spec, err := job.DecodeJobSpec(body)
		if err == nil {
			err = job.NormalizeJobSpec(spec)
		}
		if err != nil {
			return "server: " + err.Error()
		}
	}
	// Azure's curated environments are taken where the operator maps
	// them (server config curated_environments:), as the server resolves
	// them at submission; other registry references are refused there.
	text := string(body)
	for _, ref := range environmentRefs(rec.docs[0]) {
		if _, err := asset.ResolveJobEnvironment(nil, "ws", ref, examplesCurated); err == nil {
			text = strings.ReplaceAll(text, ref, "")
		}
	}
	if strings.Contains(text, "azureml://registries/") {
		return registryRefusal
	}
	return ""
}

// examplesCurated maps the curated environments Azure's examples name to
// images, as an operator maps them (docs/guides/environments.md).
var examplesCurated = asset.CuratedEnvironments{
	"sklearn-1.5":               "registry.example.com/azureml/sklearn-1.5:latest",
	"acpt-pytorch-2.8-cuda12.6": "registry.example.com/azureml/acpt-pytorch-2.8-cuda12.6:latest",
	"tensorflow-2.16-cuda12":    "registry.example.com/azureml/tensorflow-2.16-cuda12:latest",
}

// environmentRefs lists the environment references (strings under an
// environment key, at any depth: a job's, a step's component's, a
// sweep's trial's) of a job document.
func environmentRefs(v any) []string {
	var out []string
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if s, ok := e.(string); ok && k == "environment" {
				out = append(out, s)
				continue
			}
			out = append(out, environmentRefs(e)...)
		}
	case []any:
		for _, e := range x {
			out = append(out, environmentRefs(e)...)
		}
	}
	return out
}

// registryRefusal is why a file the decoders take is refused at
// submission: Shoal has no registries of Azure's (azureml, azureml-meta)
// to take components and models from, nor environments but the curated
// ones an operator maps.
const registryRefusal = "server: registry references (azureml://registries/...), refused at submission"

// firstWords groups refusals by the start of their message.
func firstWords(s string) string {
	if len(s) > 90 {
		s = s[:90]
	}
	return s
}

func sortedByCount(m map[string]int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if m[keys[i]] != m[keys[j]] {
			return m[keys[i]] > m[keys[j]]
		}
		return keys[i] < keys[j]
	})
	return keys
}
