package armcompute

import (
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/core"
)

// An overflowing idle time is refused naming the field, never stored.
func TestFromResourceDurationOverflow(t *testing.T) {
	_, err := FromResource("c1", []byte(`{"properties":{"computeType":"AmlCompute","properties":{"scaleSettings":{"maxNodeCount":1,"nodeIdleTimeBeforeScaleDown":"PT2251799813685249H"}}}}`))
	if err == nil || !strings.Contains(err.Error(), "nodeIdleTimeBeforeScaleDown") || core.ErrorCode(err) != core.EINVALID {
		t.Fatalf("err = %v; want EINVALID naming nodeIdleTimeBeforeScaleDown", err)
	}
}

// A PUT body reads into the spec the services check, with Azure's
// spellings; what cannot be is refused naming the field.
func TestFromResource(t *testing.T) {
	spec, err := FromResource("c1", []byte(`{"location":"westus","identity":{"type":"SystemAssigned"},"properties":{"computeType":"AmlCompute",
		"properties":{"vmSize":"STANDARD_DS3_V2","vmPriority":"LowPriority","remoteLoginPortPublicAccess":"Enabled",
		"scaleSettings":{"maxNodeCount":4,"minNodeCount":1,"nodeIdleTimeBeforeScaleDown":"PT2M"}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if spec.Type != "amlcompute" || spec.Size != "STANDARD_DS3_V2" || spec.Tier != compute.TierLowPriority || *spec.MaxInstances != 4 ||
		*spec.MinInstances != 1 || *spec.IdleTimeBeforeScaleDown != 120 || !*spec.SSHPublicAccessEnabled || spec.Identity.Type != "system_assigned" {
		t.Errorf("spec %+v", spec)
	}
	for body, field := range map[string]string{
		`{"properties":{"computeType":"AKS"}}`:                                                                                   "properties.computeType",
		`{"properties":{"computeType":"Kubernetes","properties":{"namespace":3}}}`:                                               "properties.properties",
		`{"properties":{"computeType":"AmlCompute","properties":{"vmPriority":"Spot"}}}`:                                         "vmPriority",
		`{"properties":{"computeType":"AmlCompute","properties":{"scaleSettings":{"nodeIdleTimeBeforeScaleDown":"2 minutes"}}}}`: "nodeIdleTimeBeforeScaleDown",
		`{"identity":{"type":"Magic"},"properties":{"computeType":"AmlCompute"}}`:                                                "identity.type",
		`{}`:       "properties",
		`not json`: "body",
	} {
		_, err := FromResource("c1", []byte(body))
		var e *core.Error
		if err == nil || !strings.Contains(err.Error(), field) {
			t.Errorf("%s: %v; want an error naming %s", body, err, field)
		} else if core.ErrorCode(err) != core.EINVALID {
			t.Errorf("%s: code %s (%v)", body, core.ErrorCode(err), e)
		}
	}
}

// Setup scripts as azure-ai-ml sends them (a path as scriptData, a
// command as scriptArguments, "5m" or "Nonem" as the timeout) and back.
func TestSetupScripts(t *testing.T) {
	spec, err := FromResource("ci", []byte(`{"properties":{"computeType":"ComputeInstance","properties":{"vmSize":"Standard_DS3_v2",
		"setupScripts":{"scripts":{"creationScript":{"scriptSource":"workspaceStorage","scriptArguments":"pip install -r req.txt","timeout":"5m"},
		"startupScript":{"scriptSource":"workspaceStorage","scriptData":"setup/start.sh","timeout":"Nonem"}}}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	cs, ss := spec.SetupScripts.CreationScript, spec.SetupScripts.StartupScript
	if cs.Command != "pip install -r req.txt" || cs.Path != "" || *cs.TimeoutMinutes != 5 || ss.Path != "setup/start.sh" || ss.TimeoutMinutes != nil {
		t.Fatalf("setup scripts %+v %+v", cs, ss)
	}
	back := string(setupScriptsTo(spec.SetupScripts))
	want := `{"scripts":{"creationScript":{"scriptSource":"workspaceStorage","scriptArguments":"pip install -r req.txt","timeout":"5m"},"startupScript":{"scriptSource":"workspaceStorage","scriptData":"setup/start.sh"}}}`
	if back != want {
		t.Errorf("written back as\n%s\nwant\n%s", back, want)
	}
	inline, err := FromResource("ci", []byte(`{"properties":{"computeType":"ComputeInstance","properties":{
		"setupScripts":{"scripts":{"creationScript":{"scriptSource":"inline","scriptData":"echo","scriptArguments":"hi"}}}}}}`))
	if err != nil || inline.SetupScripts.CreationScript.Command != "echo hi" {
		t.Errorf("inline script: %+v %v", inline, err)
	}
	for body, field := range map[string]string{
		`{"scripts":{"creationScript":{"scriptSource":"http","scriptData":"x"}}}`: "creationScript.scriptSource",
		`{"scripts":{"startupScript":{"scriptData":"x.sh","timeout":"soon"}}}`:    "startupScript.timeout",
	} {
		_, err := FromResource("ci", []byte(`{"properties":{"computeType":"ComputeInstance","properties":{"setupScripts":`+body+`}}}`))
		if core.ErrorCode(err) != core.EINVALID || !strings.Contains(err.Error(), field) {
			t.Errorf("%s: %v; want an error naming %s", body, err, field)
		}
	}
	_, err = FromResource("ci", []byte(`{"properties":{"computeType":"ComputeInstance","properties":{"customServices":[{"name":"rstudio"}]}}}`))
	if core.ErrorCode(err) != core.EINVALID || !strings.Contains(err.Error(), "customServices") {
		t.Errorf("customServices: %v; want a refusal naming the field", err)
	}
}
