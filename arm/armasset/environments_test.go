package armasset

import (
	"strings"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/arm/armcore"
	"github.com/shoal-ml/shoal/domain/asset"
	"github.com/shoal-ml/shoal/domain/core"
)

// A PUT body reads into the version the service registers; what Shoal
// cannot keep is refused naming the field, and a storage URL as a build
// context is refused saying what Shoal takes instead.
func TestFromEnvironmentVersion(t *testing.T) {
	ctx := "sha256:" + strings.Repeat("ab", 32)
	e, archived, err := FromEnvironmentVersion("default", "train", "3", []byte(`{"id":"/x","name":"3","systemData":{"createdAt":"2024-01-01T00:00:00Z"},
		"properties":{"build":{"contextUri":"`+ctx+`","dockerfilePath":"docker/Dockerfile"},"description":"d","tags":{"a":"b"},"osType":"Linux",
		"isArchived":true,"isAnonymous":false,"environmentType":"UserCreated","autoRebuild":"Disabled","provisioningState":"Succeeded","properties":{}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if e.Workspace != "default" || e.Name != "train" || e.Version != "3" || e.Build == nil || e.Build.Path != ctx || e.Build.DockerfilePath != "docker/Dockerfile" ||
		e.Description != "d" || e.Tags["a"] != "b" || e.OSType != "Linux" || e.Image != "" || archived == nil || !*archived {
		t.Fatalf("%+v %+v archived %v", e, e.Build, archived)
	}
	if _, archived, _ := FromEnvironmentVersion("w", "n", "1", []byte(`{"properties":{"image":"python:3.11"}}`)); archived != nil {
		t.Errorf("a body without isArchived says %v", *archived)
	}
	for body, field := range map[string]string{
		`{"properties":{"build":{"contextUri":"https://acct.blob.core.windows.net/azureml/ctx/"}}}`: "properties.build.contextUri",
		`{"properties":{"build":{"contextUri":"git+https://github.com/x/y"}}}`:                      "properties.build.contextUri",
		`{"properties":{"image":"x","isAnonymous":true}}`:                                           "properties.isAnonymous",
		`{"properties":{"image":"x","inferenceConfig":{}}}`:                                         "properties.inferenceConfig",
		`{"properties":{"image":"x","properties":{"k":"v"}}}`:                                       "properties.properties",
		`{"properties":{"image":"x","stage":"Production"}}`:                                         "properties.stage",
		`{"properties":{"image":"x","environmentType":"Curated"}}`:                                  "properties.environmentType",
		`{"properties":{"image":"x","autoRebuild":"OnBaseImageUpdate"}}`:                            "properties.autoRebuild",
		`{"name":"x"}`:     "properties",
		`{"properties":7}`: "body",
	} {
		_, _, err := FromEnvironmentVersion("w", "n", "1", []byte(body))
		if core.ErrorCode(err) != core.EINVALID || core.ErrorField(err) != field {
			t.Errorf("%s: %v, want EINVALID naming %s", body, err, field)
		}
	}
	_, _, err = FromEnvironmentVersion("w", "n", "1", []byte(`{"properties":{"build":{"contextUri":"https://acct.blob.core.windows.net/c/"}}}`))
	if msg := core.ErrorMessage(err); !strings.Contains(msg, "uploaded") || !strings.Contains(msg, "sha256:") {
		t.Errorf("contextUri message: %q", msg)
	}
}

// Errors of the environments service name Azure's fields.
func TestArmEnvironmentError(t *testing.T) {
	for from, to := range map[string]string{
		"build.path": "properties.build.contextUri", "build.dockerfile_path": "properties.build.dockerfilePath",
		"image": "properties.image", "conda_file": "properties.condaFile", "os_type": "properties.osType",
		"tags.a/b": "properties.tags.a/b", "description": "properties.description", "name": "name",
	} {
		err := EnvironmentVersionError(core.FieldErrorf(from, "is wrong"), "train", "1")
		if core.ErrorField(err) != to || core.ErrorMessage(err) != to+": is wrong" || core.ErrorCode(err) != core.EINVALID {
			t.Errorf("%s: %q %q", from, core.ErrorField(err), core.ErrorMessage(err))
		}
	}
	conflict := &core.Error{Code: core.ECONFLICT, Field: "version", Message: "version: differs (omit --version for the next)"}
	if err := EnvironmentVersionError(conflict, "train", "1"); core.ErrorCode(err) != core.ECONFLICT || strings.Contains(err.Error(), "--version") || !strings.Contains(err.Error(), "train already has version 1") {
		t.Errorf("a conflict: %v", err)
	}
	notFound := core.Errorf(core.ENOTFOUND, "workspace %q not found", "x")
	if err := EnvironmentVersionError(notFound, "train", "1"); err != notFound {
		t.Errorf("not found changed: %v", err)
	}
}

// A container adds up its versions (the store's order, newest first).
func TestToEnvironmentContainer(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	v := func(version string, archived bool, age int) *asset.Environment {
		return &asset.Environment{Workspace: "default", Name: "train", Version: version, Archived: archived, CreatedOn: t0.Add(-time.Duration(age) * time.Hour), CreatedBy: "u" + version}
	}
	scope := armcore.Scope{Subscription: "s", ResourceGroup: "rg"}
	for _, tc := range []struct {
		versions              []*asset.Environment
		archived              bool
		latest, next, firstBy string
	}{
		{[]*asset.Environment{v("3", false, 0), v("2", false, 1), v("1", false, 2)}, false, "3", "4", "u1"},
		{[]*asset.Environment{v("v9", true, 0), v("2", false, 1), v("1", true, 2)}, false, "2", "3", "u1"},
		{[]*asset.Environment{v("5", true, 0), v("1", true, 2)}, true, "5", "6", "u1"},
		{[]*asset.Environment{v("beta", false, 0)}, false, "beta", "1", "ubeta"},
	} {
		c, err := ToEnvironmentContainer(scope, tc.versions)
		if err != nil {
			t.Fatal(err)
		}
		p := c.Properties
		if *p.IsArchived != tc.archived || p.LatestVersion != tc.latest || p.NextVersion != tc.next || c.SystemData.CreatedBy != tc.firstBy ||
			c.Name != "train" || c.ID != "/subscriptions/s/resourceGroups/rg/providers/Microsoft.MachineLearningServices/workspaces/default/environments/train" {
			t.Errorf("%+v %+v", c, p)
		}
	}
	if _, err := ToEnvironmentContainer(scope, nil); err == nil {
		t.Error("a container of no version")
	}
}
