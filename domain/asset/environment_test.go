package asset_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/domain/asset"
	"github.com/shoal-ml/shoal/domain/core"
)

// wantField fails unless err is a shoal error on field whose message has
// every one of words.
func wantField(t *testing.T, what string, err error, field string, words ...string) {
	t.Helper()
	var e *core.Error
	if !errors.As(err, &e) {
		t.Errorf("%s: %v, want an error on %s", what, err, field)
		return
	}
	if e.Field != field {
		t.Errorf("%s: field %q, want %q (%s)", what, e.Field, field, e.Message)
	}
	for _, w := range words {
		if !strings.Contains(e.Message, w) {
			t.Errorf("%s: %q does not say %q", what, e.Message, w)
		}
	}
}

func TestValidateImageReference(t *testing.T) {
	good := []string{
		"python", "python:3.11", "library/python:latest", "mcr.microsoft.com/azureml/openmpi4.1.0-ubuntu20.04",
		"localhost:5000/team/train:3", "localhost/train", "127.0.0.1:5000/a/b__c.d-e:v1.2_3",
		"[::1]:5000/x:y", "ubuntu@sha256:" + strings.Repeat("ab", 32), "reg.io/a:tag@sha256:" + strings.Repeat("0", 64),
		"a---b", "Docker.IO/library/ubuntu",
	}
	for _, s := range good {
		if err := asset.ValidateImageReference("image", s); err != nil {
			t.Errorf("%q: %v, want valid", s, err)
		}
	}
	bad := []struct{ ref, word string }{
		{"", "required"},
		{" ", "required"},
		{"Python:3", "lower-case"},
		{"team/Train", "lower-case"},
		{"python:3 11", "spaces"},
		{"python:", "tag"},
		{"python:.x", "tag"},
		{"python:" + strings.Repeat("a", 129), "tag"},
		{"python@sha256:abc", "digest"},
		{"python@" + strings.Repeat("a", 64), "digest"},
		{"-bad.io/x", "registry"},
		{"reg.io:port/x", "registry"},
		{"a//b", "path component"},
		{"a/_b", "path component"},
		{"a.", "path component"},
		{"reg.io/", "path component"},
		{"ubuntu\u00e9", "non-ASCII"},
		{strings.Repeat("a", 256), "too long"},
	}
	for _, c := range bad {
		wantField(t, c.ref, asset.ValidateImageReference("environment.image", c.ref), "environment.image", c.word)
	}
}

func TestNormalizeEnvironment(t *testing.T) {
	ok := &asset.Environment{Name: " train ", Image: "python:3.11", CondaFile: "dependencies: [python=3.11]"}
	if err := asset.NormalizeEnvironment(ok); err != nil {
		t.Fatal(err)
	}
	if ok.Name != "train" || ok.OSType != asset.OSTypeLinux {
		t.Errorf("normalized %+v: want the name trimmed and os_type linux", ok)
	}
	b := &asset.Environment{Name: "b", Version: "2.0", Build: &asset.EnvironmentBuild{Path: "sha256:" + strings.Repeat("a", 64)}}
	if err := asset.NormalizeEnvironment(b); err != nil || b.Build.DockerfilePath != "Dockerfile" {
		t.Errorf("build without dockerfile_path: %v, %+v; want Dockerfile by default", err, b.Build)
	}
	cases := []struct {
		name  string
		e     asset.Environment
		field string
		words []string
	}{
		{"no name", asset.Environment{Image: "x"}, "name", []string{"required"}},
		{"bad name", asset.Environment{Name: "a b", Image: "x"}, "name", []string{"letters"}},
		{"name with a colon", asset.Environment{Name: "a:1", Image: "x"}, "name", nil},
		{"reserved name", asset.Environment{Name: "AzureML-mine", Image: "x"}, "name", []string{"reserves"}},
		{"bad version", asset.Environment{Name: "a", Version: "1/2", Image: "x"}, "version", nil},
		{"long version", asset.Environment{Name: "a", Version: strings.Repeat("1", 65), Image: "x"}, "version", nil},
		{"neither", asset.Environment{Name: "a"}, "image", []string{"image", "build"}},
		{"both", asset.Environment{Name: "a", Image: "x", Build: &asset.EnvironmentBuild{Path: "p"}}, "build", []string{"not both"}},
		{"conda on a build", asset.Environment{Name: "a", CondaFile: "x", Build: &asset.EnvironmentBuild{Path: "p"}}, "conda_file", []string{"needs image"}},
		{"bad image", asset.Environment{Name: "a", Image: "Bad"}, "image", []string{"lower-case"}},
		{"dockerfile outside", asset.Environment{Name: "a", Build: &asset.EnvironmentBuild{Path: "p", DockerfilePath: "../Dockerfile"}}, "build.dockerfile_path", []string{"inside"}},
		{"dockerfile absolute", asset.Environment{Name: "a", Build: &asset.EnvironmentBuild{Path: "p", DockerfilePath: "/Dockerfile"}}, "build.dockerfile_path", nil},
		{"blank build path", asset.Environment{Name: "a", Build: &asset.EnvironmentBuild{Path: " "}}, "build.path", nil},
		{"windows", asset.Environment{Name: "a", Image: "x", OSType: "Windows"}, "os_type", []string{"Linux"}},
		{"unknown os", asset.Environment{Name: "a", Image: "x", OSType: "mac"}, "os_type", nil},
		{"conda too big", asset.Environment{Name: "a", Image: "x", CondaFile: strings.Repeat("x", asset.MaxCondaFileBytes+1)}, "conda_file", nil},
		{"bad tag", asset.Environment{Name: "a", Image: "x", Tags: map[string]string{"": "v"}}, "tags", nil},
	}
	for _, c := range cases {
		e := c.e
		wantField(t, c.name, asset.NormalizeEnvironment(&e), c.field, c.words...)
	}
}

func TestParseEnvironmentRef(t *testing.T) {
	good := []struct {
		in                             string
		name, version, label, registry string
		curated                        bool
	}{
		{"azureml:train:3", "train", "3", "", "", false},
		{"AzureML:train@latest", "train", "", "latest", "", false},
		{"azureml:train@LATEST", "train", "", "latest", "", false},
		{"azureml:AzureML-sklearn-1.0-ubuntu20.04-py38-cpu@latest", "AzureML-sklearn-1.0-ubuntu20.04-py38-cpu", "", "latest", "", true},
		{"azureml:AzureML-sklearn-1.0-ubuntu20.04-py38-cpu:33", "AzureML-sklearn-1.0-ubuntu20.04-py38-cpu", "33", "", "", true},
		{"azureml://registries/azureml/environments/sklearn-1.5/labels/latest", "sklearn-1.5", "", "latest", "azureml", true},
		{"azureml://registries/azureml/environments/sklearn-1.5/versions/7", "sklearn-1.5", "7", "", "azureml", true},
		{"azureml://registries/team/environments/x/versions/1", "x", "1", "", "team", false},
		{"/subscriptions/s/resourceGroups/g/providers/Microsoft.MachineLearningServices/workspaces/ws/environments/train/versions/2", "train", "2", "", "", false},
		{"azureml:/subscriptions/s/resourceGroups/g/providers/Microsoft.MachineLearningServices/workspaces/ws/environments/train/versions/2", "train", "2", "", "", false},
	}
	for _, c := range good {
		r, err := asset.ParseEnvironmentRef(c.in)
		if err != nil {
			t.Errorf("%s: %v", c.in, err)
			continue
		}
		if r.Name != c.name || r.Version != c.version || r.Label != c.label || r.Registry != c.registry || r.Curated() != c.curated {
			t.Errorf("%s: %+v (curated %v)", c.in, r, r.Curated())
		}
	}
	bad := []struct{ in, word string }{
		{"train:1", "not an environment reference"},
		{"azureml:train", "names no version"},
		{"azureml:train@stable", "only label"},
		{"azureml:train:1/2", "invalid version"},
		{"azureml::1", "invalid name"},
		{"azureml:a b@latest", "invalid name"},
		{"azureml://registries/azureml/models/x/versions/1", "registry reference"},
		{"azureml://registries/azureml/environments/x/tags/1", "versions/<version> or labels/latest"},
		{"/subscriptions/s/workspaces/ws/computes/c", "resource ID"},
	}
	for _, c := range bad {
		_, err := asset.ParseEnvironmentRef(c.in)
		wantField(t, c.in, err, "environment", c.word)
	}
}

func TestValidateCuratedEnvironments(t *testing.T) {
	if err := asset.ValidateCuratedEnvironments(map[string]string{
		"AzureML-sklearn-1.0-ubuntu20.04-py38-cpu": "localhost:5000/sklearn:1.0", "sklearn-1.5:3": "python:3.11",
	}); err != nil {
		t.Fatal(err)
	}
	wantField(t, "bad name", asset.ValidateCuratedEnvironments(map[string]string{"a b": "python"}), "curated_environments.a b", "not a curated environment name")
	wantField(t, "bad version", asset.ValidateCuratedEnvironments(map[string]string{"a:/": "python"}), "curated_environments.a:/", "version")
	wantField(t, "bad image", asset.ValidateCuratedEnvironments(map[string]string{"sklearn-1.5": "Py thon"}), "curated_environments.sklearn-1.5", "spaces")
}

func FuzzParseEnvironmentRef(f *testing.F) {
	for _, s := range []string{"azureml:a:1", "azureml:a@latest", "azureml://registries/azureml/environments/x/labels/latest", "/subscriptions/s/workspaces/w/environments/e/versions/1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := asset.ParseEnvironmentRef(s)
		if err == nil && (r.Name == "" || (r.Version == "") == (r.Label == "")) {
			t.Errorf("%q parsed to %+v: a name and exactly one of version and label", s, r)
		}
	})
}

func FuzzValidateImageReference(f *testing.F) {
	for _, s := range []string{"python:3.11", "localhost:5000/a/b:c", "a@sha256:" + strings.Repeat("0", 64), "[::1]:1/x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if err := asset.ValidateImageReference("image", s); err != nil && core.ErrorCode(err) != core.EINVALID {
			t.Errorf("%q: %v, want EINVALID", s, err)
		}
	})
}
