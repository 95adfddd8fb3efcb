package armasset

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/arm/armcore"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job"
)

// FuzzFromEnvironmentVersion: any body is an environment version or a
// field error, never a crash; what decodes carries the path's name and
// version, and a build context that is not an uploaded artifact never
// gets through.
func FuzzFromEnvironmentVersion(f *testing.F) {
	for _, s := range []string{
		`{"properties":{"image":"python:3.11","condaFile":"dependencies: [numpy]","tags":{"a":"b"},"osType":"Linux","isArchived":true}}`,
		`{"properties":{"build":{"contextUri":"sha256:` + strings.Repeat("0", 64) + `","dockerfilePath":"Dockerfile"}}}`,
		`{"properties":{"build":{"contextUri":"https://acct.blob.core.windows.net/c/"},"inferenceConfig":{}}}`,
		`{}`, `null`, `[1]`, `{"properties":null}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		e, _, err := FromEnvironmentVersion("default", "fuzz-env", "1", data)
		if err != nil {
			if core.ErrorCode(err) != core.EINVALID || core.ErrorField(err) == "" {
				t.Fatalf("%v: not a field error", err)
			}
			return
		}
		if e.Name != "fuzz-env" || e.Version != "1" || e.Workspace != "default" {
			t.Fatalf("decoded %+v", e)
		}
		if e.Build != nil && !job.ValidateArtifactRef(e.Build.Path) {
			t.Fatalf("build context %q got through", e.Build.Path)
		}
	})
}

// FuzzFromComponentVersion: any body is a component version or a field
// error, never a crash; what decodes carries the path's name and version,
// and a version Shoal would register shows (ToComponentVersion) as a
// body that reads back to the same document.
func FuzzFromComponentVersion(f *testing.F) {
	seeds := []string{
		`{"properties":{"description":"d","tags":{"a":"b"},"isArchived":true,"componentSpec":{"$schema":"x","name":"fuzz-comp","version":"1","type":"command","command":"python t.py ${{inputs.n}} ${{outputs.m}}","inputs":{"n":{"type":"integer","default":3,"min":1}},"outputs":{"m":{"type":"uri_folder"}},"environment":"azureml:e:1"}}}`,
		`{"properties":{"componentSpec":{"command":"x","environment":{"image":"python:3.11"},"resources":{"instance_count":2},"distribution":{"type":"mpi"}}}}`,
		`{"properties":{"componentSpec":"train.yml"}}`, `{"properties":{"componentSpec":null}}`, `{}`, `null`, `[1]`,
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, _, err := FromComponentVersion("default", "fuzz-comp", "1", data)
		if err != nil {
			if core.ErrorCode(err) != core.EINVALID || core.ErrorField(err) == "" {
				t.Fatalf("%v: not a field error", err)
			}
			return
		}
		if c.Workspace != "default" || c.Name != "fuzz-comp" || c.Version != "1" {
			t.Fatalf("decoded %+v", c)
		}
		if job.NormalizeComponent(c, true) != nil {
			return
		}
		shown, err := json.Marshal(ToComponentVersion(armcore.Scope{Subscription: "s", ResourceGroup: "rg"}, c))
		if err != nil {
			t.Fatal(err)
		}
		back, _, err := FromComponentVersion("default", "fuzz-comp", "1", shown)
		if err == nil {
			err = job.NormalizeComponent(back, true)
		}
		if err != nil {
			t.Fatalf("%s does not read back: %v", shown, err)
		}
		if a, b := mustJSON(t, c), mustJSON(t, back); a != b {
			t.Fatalf("read back as %s, was %s", b, a)
		}
	})
}

// mustJSON is v as JSON.
func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
