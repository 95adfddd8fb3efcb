// Package interactive is what a job serves while it runs (Azure ML's
// services: JupyterLab, SSH, TensorBoard, VS Code or a custom port): the
// services: block decoded and checked, and each service's status on each
// node as the rank reports it. A job holds its services; nothing here
// knows of the job.
package interactive

import (
	"encoding/json"
	"strings"

	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job/jobdecode"
	"github.com/shoal-ml/shoal/domain/job/jobio"
)

// Job service types (Azure ML's services.<name>.type, snake_case).
const (
	ServiceJupyterLab  = "jupyter_lab"
	ServiceSSH         = "ssh"
	ServiceTensorBoard = "tensor_board"
	ServiceVSCode      = "vs_code"
	ServiceCustom      = "custom"
)

// MaxJobServices bounds a job's services.
const MaxJobServices = 16

// serviceKeys are the keys of one service: Azure's (type, or
// job_service_type as azure-ai-ml 1.4 writes it; port, nodes,
// properties, log_dir, ssh_public_keys) and the read-only ones of a
// shown job.
var serviceKeys = compute.KeySchema{
	"type": nil, "job_service_type": nil, "port": nil, "nodes": nil, "properties": nil,
	"log_dir": nil, "ssh_public_keys": nil,
	"endpoint": compute.ReadOnly, "status": compute.ReadOnly, "error_message": compute.ReadOnly, "instances": compute.ReadOnly,
}

// Service is an interactive application a job asks for while it runs
// (services.<name>): Jupyter Lab, SSH, TensorBoard, VS Code, or a custom
// port of its own.
type Service struct {
	Type string `json:"type"`
	// Port is where the application listens in the job (custom's, or
	// another port for a known one).
	Port int `json:"port,omitempty"`
	// Nodes is "all" to serve it on every node; empty: the first.
	Nodes string `json:"nodes,omitempty"`
	// LogDir is TensorBoard's log folder, relative to the working dir.
	LogDir string `json:"log_dir,omitempty"`
	// SSHPublicKeys are the keys an ssh service lets in.
	SSHPublicKeys string            `json:"ssh_public_keys,omitempty"`
	Properties    map[string]string `json:"properties,omitempty"`
	// Status, Endpoint and ErrorMessage are the service's state on its
	// first node, and Instances on each node, in a shown job (filled on
	// read from the agents' reports, never stored with the spec).
	Status       string              `json:"status,omitempty"`
	Endpoint     string              `json:"endpoint,omitempty"`
	ErrorMessage string              `json:"error_message,omitempty"`
	Instances    []ServiceNodeStatus `json:"instances,omitempty"`
}

// DecodeJobServices reads services, nil when absent.
func DecodeJobServices(raw json.RawMessage) (map[string]*Service, error) {
	if compute.NonNull(raw) == nil {
		return nil, nil
	}
	var m map[string]json.RawMessage
	if jobdecode.JSONKind(raw) != '{' || json.Unmarshal(raw, &m) != nil {
		return nil, core.FieldErrorf("services", "must be a mapping of service names to services ({type: jupyter_lab}), got %s", compute.ShortJSON(raw))
	}
	if len(m) > MaxJobServices {
		return nil, core.FieldErrorf("services", "must have at most %d services, got %d", MaxJobServices, len(m))
	}
	out := make(map[string]*Service, len(m))
	for _, name := range core.SortedKeys(m) {
		field := jobio.KeyPath("services", name)
		if err := jobio.ValidateIOName(field, name); err != nil {
			return nil, err
		}
		if jobdecode.JSONKind(m[name]) != '{' {
			return nil, core.FieldErrorf(field, "must be a mapping with type: jupyter_lab, ssh, tensor_board, vs_code or custom")
		}
		d, err := jobdecode.CheckedMapping(m[name], field, serviceKeys)
		if err != nil {
			return nil, err
		}
		s := &Service{}
		var alt string
		if err := d.DecodeFields(field+".",
			jobdecode.StringField("type", &s.Type), jobdecode.StringField("job_service_type", &alt),
			jobdecode.TextField("nodes", &s.Nodes), jobdecode.StringField("log_dir", &s.LogDir), jobdecode.StringField("ssh_public_keys", &s.SSHPublicKeys),
			jobdecode.ValueField("port", &s.Port, func(raw json.RawMessage) (int, error) {
				if compute.NonNull(raw) == nil {
					return 0, nil
				}
				n, err := compute.CheckInteger(field+".port", raw)
				if err != nil {
					return 0, err
				}
				return *n, nil
			}),
			jobdecode.JobField{Key: "properties", Decode: func(raw json.RawMessage, path string) (err error) {
				s.Properties, err = decodeServiceProperties(raw, path)
				return err
			}},
		); err != nil {
			return nil, err
		}
		if s.Type == "" {
			s.Type = alt
		}
		out[name] = s
	}
	return out, nil
}

func decodeServiceProperties(raw json.RawMessage, path string) (map[string]string, error) {
	if compute.NonNull(raw) == nil {
		return nil, nil
	}
	var m map[string]json.RawMessage
	if jobdecode.JSONKind(raw) != '{' || json.Unmarshal(raw, &m) != nil {
		return nil, core.FieldErrorf(path, "must be a mapping of names to values")
	}
	out := make(map[string]string, len(m))
	for _, k := range core.SortedKeys(m) {
		v, err := jobio.Text(m[k], jobio.KeyPath(path, k))
		if err != nil {
			return nil, err
		}
		out[k] = v
	}
	return out, nil
}

// NormalizeJobServices puts each service's type in its canonical
// spelling (Azure's JupyterLab, SSH, TensorBoard, VSCode are taken too)
// and checks its settings: a custom service needs its port, an ssh one
// its public keys; nodes is all or absent; log_dir stays inside the job.
func NormalizeJobServices(field string, services map[string]*Service) error {
	for _, name := range core.SortedKeys(services) {
		s := services[name]
		f := jobio.KeyPath(field, name)
		if s == nil {
			return core.FieldErrorf(f, "must be a mapping with type: jupyter_lab, ssh, tensor_board, vs_code or custom")
		}
		switch strings.ToLower(strings.ReplaceAll(strings.TrimSpace(s.Type), "_", "")) {
		case "jupyterlab":
			s.Type = ServiceJupyterLab
		case "ssh":
			s.Type = ServiceSSH
		case "tensorboard":
			s.Type = ServiceTensorBoard
		case "vscode":
			s.Type = ServiceVSCode
		case "custom":
			s.Type = ServiceCustom
		case "":
			return core.FieldErrorf(f+".type", "is required: jupyter_lab, ssh, tensor_board, vs_code or custom")
		default:
			return core.FieldErrorf(f+".type", "unknown service type %q; use jupyter_lab, ssh, tensor_board, vs_code or custom", core.Short(s.Type))
		}
		if s.Port < 0 || s.Port > 65535 {
			return core.FieldErrorf(f+".port", "must be a port between 1 and 65535, got %d", s.Port)
		}
		if s.Type == ServiceCustom && s.Port == 0 {
			return core.FieldErrorf(f+".port", "is required for a custom service: the port the job's application listens on")
		}
		if s.Type == ServiceSSH && strings.TrimSpace(s.SSHPublicKeys) == "" {
			return core.FieldErrorf(f+".ssh_public_keys", "is required for an ssh service: the public key(s) allowed to log in")
		}
		if n := strings.ToLower(strings.TrimSpace(s.Nodes)); n != "" && n != "all" {
			return core.FieldErrorf(f+".nodes", "must be all (every node) or absent (the first node), got %q", core.Short(s.Nodes))
		} else {
			s.Nodes = n
		}
		if s.LogDir != "" {
			if s.Type != ServiceTensorBoard {
				return core.FieldErrorf(f+".log_dir", "is tensor_board's")
			}
			if err := core.ValidatePath(f+".log_dir", s.LogDir); err != nil {
				return err
			}
			if strings.HasPrefix(s.LogDir, "/") || strings.Contains("/"+s.LogDir+"/", "/../") {
				return core.FieldErrorf(f+".log_dir", "%q must be a folder inside the job's working directory (outputs/tblogs)", core.Short(s.LogDir))
			}
		}
		if err := core.NoControl(f+".ssh_public_keys", strings.ReplaceAll(s.SSHPublicKeys, "\n", " ")); err != nil {
			return err
		}
	}
	return nil
}
