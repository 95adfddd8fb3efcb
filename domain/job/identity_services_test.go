package job_test

import (
	"testing"

	"github.com/shoal-ml/shoal/domain/core/coretest"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/job/interactive"
	"github.com/shoal-ml/shoal/domain/job/jobtest"
)

// Azure's identity and services, as its example files write them, are
// taken and put in their canonical spelling.
func TestJobIdentityAndServicesAsAzureWritesThem(t *testing.T) {
	spec, err := job.DecodeJobSpec([]byte(`{"command": "python x.py", "compute": "cpu",
		"identity": {"type": "UserIdentity"},
		"services": {"my_vscode": {"type": "vs_code"}, "my_jupyter_lab": {"job_service_type": "JupyterLab"},
			"my_tensorboard": {"type": "tensor_board", "log_dir": "outputs/tblogs"},
			"my_ssh": {"type": "ssh", "ssh_public_keys": "ssh-ed25519 AAAA me", "nodes": "all"},
			"app": {"type": "custom", "port": 8080, "properties": {"x": 1}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if err := job.NormalizeJobSpec(spec); err != nil {
		t.Fatal(err)
	}
	if spec.Identity.Type != job.IdentityUserIdentity {
		t.Errorf("identity %+v", spec.Identity)
	}
	want := map[string]string{"my_vscode": interactive.ServiceVSCode, "my_jupyter_lab": interactive.ServiceJupyterLab, "my_tensorboard": interactive.ServiceTensorBoard, "my_ssh": interactive.ServiceSSH, "app": interactive.ServiceCustom}
	for name, typ := range want {
		if s := spec.Services[name]; s == nil || s.Type != typ {
			t.Errorf("service %s = %+v, want %s", name, s, typ)
		}
	}
	if s := spec.Services["app"]; s.Port != 8080 || s.Properties["x"] != "1" {
		t.Errorf("custom service %+v", s)
	}
	for _, typ := range []string{"managed", "Managed", "managed_identity", "aml_token", "AMLToken"} {
		s := jobtest.ValidCommandJob()
		s.Identity = &job.JobIdentity{Type: typ}
		if err := job.NormalizeJobSpec(s); err != nil {
			t.Errorf("identity %s: %v", typ, err)
		}
	}
	s := jobtest.ValidCommandJob()
	s.Identity = &job.JobIdentity{Type: "managed", ClientID: "11111111-1111-1111-1111-111111111111"}
	if err := job.NormalizeJobSpec(s); err != nil || s.Identity.ClientID == "" {
		t.Errorf("managed identity with a client ID: %v %+v", err, s.Identity)
	}
}

func TestJobIdentityAndServicesRefused(t *testing.T) {
	tests := []struct {
		name  string
		edit  func(*job.JobSpec)
		field string
		frags []string
	}{
		{"identity without type", func(s *job.JobSpec) { s.Identity = &job.JobIdentity{} }, "identity.type", []string{"user_identity, managed or aml_token"}},
		{"unknown identity type", func(s *job.JobSpec) { s.Identity = &job.JobIdentity{Type: "service_principal"} }, "identity.type", []string{"unknown identity type"}},
		{"user identity naming a client", func(s *job.JobSpec) {
			s.Identity = &job.JobIdentity{Type: "user_identity", ClientID: "x"}
		}, "identity.client_id", []string{"type only"}},
		{"aml token naming a resource", func(s *job.JobSpec) {
			s.Identity = &job.JobIdentity{Type: "aml_token", MSIResourceID: "/subscriptions/x"}
		}, "identity.msi_resource_id", []string{"type only"}},
		{"client id with a newline", func(s *job.JobSpec) {
			s.Identity = &job.JobIdentity{Type: "managed", ClientID: "a\nb"}
		}, "identity.client_id", nil},
		{"service without type", func(s *job.JobSpec) { s.Services = map[string]*interactive.Service{"x": {}} }, "services.x.type", []string{"required"}},
		{"unknown service", func(s *job.JobSpec) { s.Services = map[string]*interactive.Service{"x": {Type: "rdp"}} }, "services.x.type", []string{"unknown service type"}},
		{"custom without port", func(s *job.JobSpec) { s.Services = map[string]*interactive.Service{"x": {Type: "custom"}} }, "services.x.port", []string{"required"}},
		{"port out of range", func(s *job.JobSpec) {
			s.Services = map[string]*interactive.Service{"x": {Type: "custom", Port: 70000}}
		}, "services.x.port", []string{"between 1 and 65535"}},
		{"ssh without keys", func(s *job.JobSpec) { s.Services = map[string]*interactive.Service{"x": {Type: "ssh"}} }, "services.x.ssh_public_keys", []string{"required"}},
		{"nodes a number", func(s *job.JobSpec) {
			s.Services = map[string]*interactive.Service{"x": {Type: "vs_code", Nodes: "2"}}
		}, "services.x.nodes", []string{"all"}},
		{"log dir out of the job", func(s *job.JobSpec) {
			s.Services = map[string]*interactive.Service{"x": {Type: "tensor_board", LogDir: "../../etc"}}
		}, "services.x.log_dir", []string{"inside the job's working directory"}},
		{"log dir absolute", func(s *job.JobSpec) {
			s.Services = map[string]*interactive.Service{"x": {Type: "tensor_board", LogDir: "/etc"}}
		}, "services.x.log_dir", nil},
		{"log dir on jupyter", func(s *job.JobSpec) {
			s.Services = map[string]*interactive.Service{"x": {Type: "jupyter_lab", LogDir: "logs"}}
		}, "services.x.log_dir", []string{"tensor_board's"}},
		{"ssh key with a control character", func(s *job.JobSpec) {
			s.Services = map[string]*interactive.Service{"x": {Type: "ssh", SSHPublicKeys: "ssh-ed25519 A\x1b[2J"}}
		}, "services.x.ssh_public_keys", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := jobtest.ValidCommandJob()
			tt.edit(s)
			coretest.WantFieldError(t, job.NormalizeJobSpec(s), tt.field, tt.frags...)
		})
	}
}
