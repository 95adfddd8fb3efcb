package compute_test

import (
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/domain/catalog"
	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/server/config"
)

// TestInstanceSpecRules: each instance rule, with the field it names.
func TestInstanceSpecRules(t *testing.T) {
	cat := defaultCatalog(t)
	for _, tc := range []struct {
		name, doc, field, fragment string
		check                      func(t *testing.T, s *compute.ComputeSpec)
	}{
		{name: "defaults", doc: `{"name": "ci-one", "type": "computeinstance"}`, check: func(t *testing.T, s *compute.ComputeSpec) {
			if s.Size != compute.DefaultInstanceSize || *s.SSHPublicAccessEnabled || !*s.EnableSSO || *s.ReleaseQuotaOnStop || *s.MaxConcurrentJobs != 4 || s.IdleTimeBeforeShutdownMinutes != nil {
				t.Errorf("defaults: %+v", s)
			}
		}},
		{name: "ComputeInstance spelling", doc: `{"name": "ci-one", "type": "ComputeInstance"}`},
		{name: "root unset means no root", doc: `{"name": "ci-one", "type": "computeinstance"}`, check: func(t *testing.T, s *compute.ComputeSpec) {
			if s.EnableRootAccess == nil || *s.EnableRootAccess {
				t.Errorf("enable_root_access: %v, want false shown", s.EnableRootAccess)
			}
		}},
		{name: "root refused without isolation", doc: `{"name": "ci-one", "type": "computeinstance", "enable_root_access": true}`, field: "enable_root_access", fragment: "root on every user's work"},
		{name: "root false", doc: `{"name": "ci-one", "type": "computeinstance", "enable_root_access": false}`},
		{name: "idle PT30M", doc: `{"name": "ci-one", "type": "computeinstance", "idle_time_before_shutdown": "PT30M"}`, check: idleIs(30)},
		{name: "idle P3D", doc: `{"name": "ci-one", "type": "computeinstance", "idle_time_before_shutdown": "P3D"}`, check: idleIs(4320)},
		{name: "idle minutes as a string", doc: `{"name": "ci-one", "type": "computeinstance", "idle_time_before_shutdown_minutes": "30"}`, check: idleIs(30)},
		{name: "idle 15", doc: `{"name": "ci-one", "type": "computeinstance", "idle_time_before_shutdown_minutes": 15}`, check: idleIs(15)},
		{name: "idle 4320", doc: `{"name": "ci-one", "type": "computeinstance", "idle_time_before_shutdown_minutes": 4320}`, check: idleIs(4320)},
		{name: "idle 14", doc: `{"name": "ci-one", "type": "computeinstance", "idle_time_before_shutdown_minutes": 14}`, field: "idle_time_before_shutdown_minutes", fragment: "between 15 and 4320"},
		{name: "idle 4321", doc: `{"name": "ci-one", "type": "computeinstance", "idle_time_before_shutdown_minutes": 4321}`, field: "idle_time_before_shutdown_minutes", fragment: "between 15 and 4320"},
		{name: "idle PT10M", doc: `{"name": "ci-one", "type": "computeinstance", "idle_time_before_shutdown": "PT10M"}`, field: "idle_time_before_shutdown_minutes", fragment: "between 15 and 4320"},
		{name: "idle forms disagree", doc: `{"name": "ci-one", "type": "computeinstance", "idle_time_before_shutdown": "PT30M", "idle_time_before_shutdown_minutes": 60}`, field: "idle_time_before_shutdown", fragment: "disagrees"},
		{name: "idle not a duration", doc: `{"name": "ci-one", "type": "computeinstance", "idle_time_before_shutdown": "half an hour"}`, field: "idle_time_before_shutdown", fragment: "ISO 8601"},
		{name: "a cluster key", doc: `{"name": "ci-one", "type": "computeinstance", "max_instances": 2}`, field: "max_instances", fragment: "unknown key"},
		{name: "name rule", doc: `{"name": "1ci", "type": "computeinstance"}`, field: "name", fragment: "start with a letter"},
		{name: "description with ESC", doc: `{"name": "ci-one", "type": "computeinstance", "description": "x\u001b[2J"}`, field: "description", fragment: "control characters"},
		{name: "key without SSH", doc: `{"name": "ci-one", "type": "computeinstance", "ssh_settings": {"ssh_key_value": "ssh-ed25519 AAAA x"}}`, field: "ssh_settings.ssh_key_value", fragment: "SSH is disabled"},
		{name: "not a public key", doc: `{"name": "ci-one", "type": "computeinstance", "ssh_public_access_enabled": true, "ssh_settings": {"ssh_key_value": "hello"}}`, field: "ssh_settings.ssh_key_value", fragment: "public key"},
		{name: "a private key", doc: `{"name": "ci-one", "type": "computeinstance", "ssh_public_access_enabled": true, "ssh_settings": {"ssh_key_value": "-----BEGIN OPENSSH PRIVATE KEY-----\nx\n-----END OPENSSH PRIVATE KEY-----"}}`, field: "ssh_settings.ssh_key_value", fragment: "private key"},
		{name: "PEM public key", doc: `{"name": "ci-one", "type": "computeinstance", "ssh_public_access_enabled": true, "ssh_settings": {"ssh_key_value": "-----BEGIN PUBLIC KEY-----\nMIIB\n-----END PUBLIC KEY-----"}}`},
		{name: "SSH enabled, key later", doc: `{"name": "ci-one", "type": "computeinstance", "ssh_public_access_enabled": true}`},
		{name: "admin user is read-only", doc: `{"name": "ci-one", "type": "computeinstance", "ssh_settings": {"admin_username": "root"}}`, field: "ssh_settings.admin_username", fragment: "azureuser"},
		{name: "on behalf of nobody", doc: `{"name": "ci-one", "type": "computeinstance", "create_on_behalf_of": {"user_tenant_id": "t"}}`, field: "create_on_behalf_of.user_object_id", fragment: "required"},
		{name: "five schedules", doc: `{"name": "ci-one", "type": "computeinstance", "schedules": {"compute_start_stop": [` + strings.TrimSuffix(strings.Repeat(`{"action": "stop", "trigger": {"type": "cron", "expression": "0 18 * * *"}},`, 5), ",") + `]}}`, field: "schedules.compute_start_stop", fragment: "at most 4"},
		{name: "four schedules", doc: `{"name": "ci-one", "type": "computeinstance", "schedules": {"compute_start_stop": [` + strings.TrimSuffix(strings.Repeat(`{"action": "Stop", "status": "x", "trigger": {"type": "Cron", "expression": "0 18 * * *"}},`, 4), ",") + `]}}`, field: "schedules.compute_start_stop[0].status", fragment: "unknown key"},
		{name: "schedule action", doc: `{"name": "ci-one", "type": "computeinstance", "schedules": {"compute_start_stop": [{"action": "reboot", "trigger": {"type": "cron", "expression": "0 18 * * *"}}]}}`, field: "schedules.compute_start_stop[0].action", fragment: "start or stop"},
		{name: "schedule Azure spellings", doc: `{"name": "ci-one", "type": "computeinstance", "schedules": {"compute_start_stop": [{"action": "Stop", "state": "Enabled", "trigger": {"type": "Cron", "expression": "0 18 * * *"}}]}}`, check: func(t *testing.T, s *compute.ComputeSpec) {
			sc := s.Schedules.ComputeStartStop[0]
			if sc.Action != "stop" || sc.State != "enabled" || sc.Trigger.Type != "cron" {
				t.Errorf("not canonical: %+v %+v", sc, sc.Trigger)
			}
		}},
		{name: "cron without expression", doc: `{"name": "ci-one", "type": "computeinstance", "schedules": {"compute_start_stop": [{"action": "stop", "trigger": {"type": "cron"}}]}}`, field: "schedules.compute_start_stop[0].trigger.expression", fragment: "five fields"},
		{name: "script with both", doc: `{"name": "ci-one", "type": "computeinstance", "setup_scripts": {"creation_script": {"path": "a.sh", "command": "echo"}}}`, field: "setup_scripts.creation_script", fragment: "not both"},
		{name: "script with neither", doc: `{"name": "ci-one", "type": "computeinstance", "setup_scripts": {"startup_script": {"timeout_minutes": 3}}}`, field: "setup_scripts.startup_script", fragment: "path"},
		{name: "script timeout", doc: `{"name": "ci-one", "type": "computeinstance", "setup_scripts": {"startup_script": {"command": "x", "timeout_minutes": 0}}}`, field: "setup_scripts.startup_script.timeout_minutes", fragment: "between 1 and 1440"},
		{name: "app image", doc: `{"name": "ci-one", "type": "computeinstance", "custom_applications": [{"name": "rstudio", "image": {"reference": "ghcr.io/azure/rocker-rstudio-ml-verse:latest"}, "endpoints": [{"target": 8787}]}]}`, check: func(t *testing.T, s *compute.ComputeSpec) {
			if im := s.CustomApplications[0].Image; im.Type != "docker" {
				t.Errorf("image type %q, want docker", im.Type)
			}
		}},
		{name: "app without image or command", doc: `{"name": "ci-one", "type": "computeinstance", "custom_applications": [{"name": "web", "endpoints": [{"target": 8787}]}]}`, field: "custom_applications[0].image", fragment: "is required"},
		{name: "app bad image", doc: `{"name": "ci-one", "type": "computeinstance", "custom_applications": [{"name": "web", "image": {"reference": "Bad Image"}, "endpoints": [{"target": 8787}]}]}`, field: "custom_applications[0].image.reference", fragment: "spaces"},
		{name: "app bind mount in the home", doc: `{"name": "ci-one", "type": "computeinstance", "custom_applications": [{"name": "web", "image": {"reference": "x/y:1"}, "endpoints": [{"target": 8787}], "bind_mounts": [{"source": "/home/azureuser/cloudfiles/", "target": "/home/azureuser/cloudfiles", "read_only": true}]}]}`, check: func(t *testing.T, s *compute.ComputeSpec) {
			if m := s.CustomApplications[0].BindMounts[0]; m.Source != "/home/azureuser/cloudfiles" || !m.ReadOnly {
				t.Errorf("bind mount %+v, want the clean source, read-only", m)
			}
		}},
		{name: "app bind mount outside the home", doc: `{"name": "ci-one", "type": "computeinstance", "custom_applications": [{"name": "web", "image": {"reference": "x/y:1"}, "endpoints": [{"target": 8787}], "bind_mounts": [{"source": "/home/azureuser/a", "target": "/a"}, {"source": "/etc", "target": "/x"}]}]}`, field: "custom_applications[0].bind_mounts[1].source", fragment: "outside the instance's home"},
		{name: "app bind mount of another home", doc: `{"name": "ci-one", "type": "computeinstance", "custom_applications": [{"name": "web", "image": {"reference": "x/y:1"}, "endpoints": [{"target": 8787}], "bind_mounts": [{"source": "/home/azureuser2", "target": "/x"}]}]}`, field: "custom_applications[0].bind_mounts[0].source", fragment: "outside"},
		{name: "app bind mount climbing", doc: `{"name": "ci-one", "type": "computeinstance", "custom_applications": [{"name": "web", "image": {"reference": "x/y:1"}, "endpoints": [{"target": 8787}], "bind_mounts": [{"source": "/home/azureuser/../../etc", "target": "/x"}]}]}`, field: "custom_applications[0].bind_mounts[0].source", fragment: "'..'"},
		{name: "app bind mount relative", doc: `{"name": "ci-one", "type": "computeinstance", "custom_applications": [{"name": "web", "image": {"reference": "x/y:1"}, "endpoints": [{"target": 8787}], "bind_mounts": [{"source": "cloudfiles", "target": "/x"}]}]}`, field: "custom_applications[0].bind_mounts[0].source", fragment: "absolute"},
		{name: "app bind mount over the root", doc: `{"name": "ci-one", "type": "computeinstance", "custom_applications": [{"name": "web", "image": {"reference": "x/y:1"}, "endpoints": [{"target": 8787}], "bind_mounts": [{"source": "/home/azureuser", "target": "/"}]}]}`, field: "custom_applications[0].bind_mounts[0].target", fragment: "root"},
		{name: "app bind mount without image", doc: `{"name": "ci-one", "type": "computeinstance", "custom_applications": [{"name": "web", "command": "x", "endpoints": [{"target": 8787}], "bind_mounts": [{"source": "/home/azureuser", "target": "/x"}]}]}`, field: "custom_applications[0].bind_mounts[0]", fragment: "needs an application with an image"},
		{name: "app named jupyter", doc: `{"name": "ci-one", "type": "computeinstance", "custom_applications": [{"name": "jupyter", "command": "x", "endpoints": [{"target": 8787}]}]}`, field: "custom_applications[0].name", fragment: "built-in"},
		{name: "app without endpoints", doc: `{"name": "ci-one", "type": "computeinstance", "custom_applications": [{"name": "web", "command": "x"}]}`, field: "custom_applications[0].endpoints", fragment: "at least one"},
		{name: "app port", doc: `{"name": "ci-one", "type": "computeinstance", "custom_applications": [{"name": "web", "command": "x", "endpoints": [{"target": 70000}]}]}`, field: "custom_applications[0].endpoints[0].target", fragment: "65535"},
		{name: "published twice", doc: `{"name": "ci-one", "type": "computeinstance", "custom_applications": [{"name": "a", "command": "x", "endpoints": [{"target": 80}]}, {"name": "b", "command": "y", "endpoints": [{"target": 80}]}]}`, field: "custom_applications[1].endpoints[0].published", fragment: "published by a"},
		{name: "published differs from target", doc: `{"name": "ci-one", "type": "computeinstance", "custom_applications": [{"name": "web", "command": "x", "endpoints": [{"target": 8787, "published": 80}]}]}`, field: "custom_applications[0].endpoints[0].published", fragment: "must equal target (8787)"},
		{name: "published equals target", doc: `{"name": "ci-one", "type": "computeinstance", "custom_applications": [{"name": "web", "command": "x", "endpoints": [{"target": 8787, "published": 8787}]}]}`, check: func(t *testing.T, s *compute.ComputeSpec) {
			if e := s.CustomApplications[0].Endpoints[0]; e.Published != 8787 {
				t.Errorf("endpoint %+v, want published 8787", e)
			}
		}},
		{name: "instance image on host processes", doc: `{"name": "ci-one", "type": "computeinstance", "image": "registry.example/team/ci:2"}`, field: "image", fragment: "run as processes on the host"},
		{name: "cpu floor", doc: `{"name": "ci-one", "type": "computeinstance", "idle_cpu_percent_below": 150}`, field: "idle_cpu_percent_below", fragment: "at most 100"},
		{name: "jobs", doc: `{"name": "ci-one", "type": "computeinstance", "max_concurrent_jobs": 0}`, field: "max_concurrent_jobs", fragment: "between 1 and 64"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec, err := compute.DecodeComputeSpec([]byte(tc.doc))
			if err == nil {
				_, _, err = compute.NormalizeComputeSpec(spec, cat, "local")
			}
			if tc.field == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				if spec.Type != compute.ComputeTypeInstance {
					t.Fatalf("type %q", spec.Type)
				}
				if tc.check != nil {
					tc.check(t, spec)
				}
				return
			}
			if err == nil {
				t.Fatalf("accepted; want an error on %s", tc.field)
			}
			if core.ErrorCode(err) != core.EINVALID || core.ErrorField(err) != tc.field || !strings.Contains(core.ErrorMessage(err), tc.fragment) {
				t.Fatalf("error %s %q (field %q); want field %q with %q", core.ErrorCode(err), core.ErrorMessage(err), core.ErrorField(err), tc.field, tc.fragment)
			}
		})
	}
}

func idleIs(m int) func(t *testing.T, s *compute.ComputeSpec) {
	return func(t *testing.T, s *compute.ComputeSpec) {
		if s.IdleTimeBeforeShutdownMinutes == nil || *s.IdleTimeBeforeShutdownMinutes != m {
			t.Errorf("idle minutes %v, want %d", s.IdleTimeBeforeShutdownMinutes, m)
		}
	}
}

// What cannot change after creation, and what can.
func TestInstanceImmutableFields(t *testing.T) {
	cat := defaultCatalog(t)
	norm := func(doc string) *compute.ComputeSpec {
		s, err := compute.DecodeComputeSpec([]byte(doc))
		if err == nil {
			_, _, err = compute.NormalizeComputeSpec(s, cat, "local")
		}
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	base := norm(`{"name": "ci-one", "type": "computeinstance"}`)
	if d := compute.InstanceImmutableDifferences(base, norm(`{"name": "ci-one", "type": "computeinstance", "idle_time_before_shutdown_minutes": 30, "description": "x"}`)); len(d) != 0 {
		t.Errorf("mutable fields reported immutable: %v", d)
	}
	d := compute.InstanceImmutableDifferences(base, norm(`{"name": "ci-one", "type": "computeinstance", "size": "Standard_D4s_v3", "ssh_public_access_enabled": true, "release_quota_on_stop": true}`))
	if strings.Join(d, ",") != "size,ssh_public_access_enabled,release_quota_on_stop" {
		t.Errorf("immutable differences %v", d)
	}
}

// A location's app_bind_mounts_allowed lets an application mount a path
// under it (and nothing beside it); a location with containers off
// refuses an application's image, naming the field.
func TestInstanceAppsAtALocation(t *testing.T) {
	cat := catalogFrom(t, `
locations:
  - name: lab
    app_bind_mounts_allowed: [/data/shared]
  - name: plain
    containers: "off"
`)
	app := func(loc, src string) string {
		return `{"name": "ci-one", "type": "computeinstance", "location": "` + loc + `", "custom_applications": [{"name": "web", "image": {"reference": "x/y:1"}, "endpoints": [{"target": 8787}], "bind_mounts": [{"source": "` + src + `", "target": "/d"}]}]}`
	}
	for _, tc := range []struct{ name, doc, field, fragment string }{
		{name: "allowed path", doc: app("lab", "/data/shared/team")},
		{name: "beside the allowed path", doc: app("lab", "/data/sharedx"), field: "custom_applications[0].bind_mounts[0].source", fragment: "app_bind_mounts_allowed: /data/shared"},
		{name: "containers off", doc: app("plain", "/home/azureuser"), field: "custom_applications[0].image", fragment: "runs no containers"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec, err := compute.DecodeComputeSpec([]byte(tc.doc))
			if err == nil {
				_, _, err = compute.NormalizeComputeSpec(spec, cat, "lab")
			}
			if tc.field == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil || core.ErrorField(err) != tc.field || !strings.Contains(err.Error(), tc.fragment) {
				t.Fatalf("err = %v (field %q), want field %q with %q", err, core.ErrorField(err), tc.field, tc.fragment)
			}
		})
	}
}

// catalogFrom is the catalog of a server config document.
func catalogFrom(t testing.TB, doc string) *catalog.Catalog {
	t.Helper()
	cfg, err := config.Parse(strings.NewReader(doc))
	if err != nil {
		t.Fatalf("parse config: %v", err)
	}
	cat, err := cfg.Catalog(nil)
	if err != nil {
		t.Fatalf("catalog: %v", err)
	}
	return cat
}

// Root access is Azure's default where an instance is a container of its
// own (root inside is not the host's) and refused, when asked, where it
// would run as processes on a shared host.
func TestRootAccessFollowsIsolation(t *testing.T) {
	cat, err := catalog.NewCatalog([]*catalog.Location{
		{Name: "boxed", Provider: "local", InstanceImage: "localhost/shoal-instance:1", Quota: catalog.DefaultQuotaLimits()},
		{Name: "bare", Provider: "local", Quota: catalog.DefaultQuotaLimits()},
	}, catalog.BuiltinSizes(), "boxed")
	if err != nil {
		t.Fatal(err)
	}
	spec := &compute.ComputeSpec{Name: "ci-boxed", Location: "boxed"}
	if _, _, err := compute.NormalizeInstanceSpec(spec, cat, "boxed"); err != nil || spec.EnableRootAccess == nil || !*spec.EnableRootAccess {
		t.Errorf("in a container: enable_root_access %v, %v; want true by default", spec.EnableRootAccess, err)
	}
	spec = &compute.ComputeSpec{Name: "ci-bare", Location: "bare"}
	if _, _, err := compute.NormalizeInstanceSpec(spec, cat, "boxed"); err != nil || *spec.EnableRootAccess {
		t.Errorf("as host processes: enable_root_access %v, %v; want false by default", *spec.EnableRootAccess, err)
	}
	yes := true
	spec = &compute.ComputeSpec{Name: "ci-bare", Location: "bare", EnableRootAccess: &yes}
	if _, _, err := compute.NormalizeInstanceSpec(spec, cat, "boxed"); core.ErrorField(err) != "enable_root_access" {
		t.Errorf("root asked as host processes: %v, want refused naming enable_root_access", err)
	}
	// An instance in a container runs its applications from images: a
	// command alone would run on the host, outside it.
	app := func() []*compute.CustomApplication {
		return []*compute.CustomApplication{{Name: "web", Command: "python3 -m http.server 8080", Endpoints: []*compute.AppEndpoint{{Target: 8080}}}}
	}
	spec = &compute.ComputeSpec{Name: "ci-boxed", Location: "boxed", CustomApplications: app()}
	if _, _, err := compute.NormalizeInstanceSpec(spec, cat, "boxed"); core.ErrorField(err) != "custom_applications[0].image" {
		t.Errorf("a command app in a container: %v, want refused naming custom_applications[0].image", err)
	}
	spec = &compute.ComputeSpec{Name: "ci-bare", Location: "bare", CustomApplications: app()}
	if _, _, err := compute.NormalizeInstanceSpec(spec, cat, "boxed"); err != nil {
		t.Errorf("a command app as host processes: %v", err)
	}
}

// An instance's own image is a valid reference, trimmed, at a location
// whose instances are containers; it cannot change after creation.
func TestInstanceOwnImage(t *testing.T) {
	cat, err := catalog.NewCatalog([]*catalog.Location{
		{Name: "boxed", Provider: "local", InstanceImage: "localhost/shoal-instance:1", Quota: catalog.DefaultQuotaLimits()},
		{Name: "off", Provider: "local", InstanceImage: "localhost/shoal-instance:1", Containers: catalog.ContainersOff, Quota: catalog.DefaultQuotaLimits()},
	}, catalog.BuiltinSizes(), "boxed")
	if err != nil {
		t.Fatal(err)
	}
	spec, err := compute.DecodeComputeSpec([]byte(`{"name": "ci-own", "type": "computeinstance", "image": " registry.example/team/ci:2 "}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := compute.NormalizeInstanceSpec(spec, cat, "boxed"); err != nil || spec.Image != "registry.example/team/ci:2" {
		t.Fatalf("image %q, %v; want the trimmed reference", spec.Image, err)
	}
	for _, tc := range []struct{ loc, image, fragment string }{
		{"boxed", "Bad Image", "spaces"},
		{"off", "registry.example/team/ci:2", "run as processes on the host"},
	} {
		spec := &compute.ComputeSpec{Name: "ci-own", Location: tc.loc, Image: tc.image}
		if _, _, err := compute.NormalizeInstanceSpec(spec, cat, "boxed"); core.ErrorField(err) != "image" || !strings.Contains(err.Error(), tc.fragment) {
			t.Errorf("%s at %s: %v; want refused naming image with %q", tc.image, tc.loc, err, tc.fragment)
		}
	}
	old := &compute.ComputeSpec{Name: "ci-own", Image: "a/b:1"}
	if d := compute.InstanceImmutableDifferences(old, &compute.ComputeSpec{Name: "ci-own", Image: "a/b:2"}); !strings.Contains(strings.Join(d, ","), "image") {
		t.Errorf("differences %v, want image", d)
	}
}
