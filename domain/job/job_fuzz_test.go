package job_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/shoal-ml/shoal/domain/core/coretest"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/job/jobio"
)

// jobFuzzSeeds are command jobs as the CLI sends them, valid and not.
var jobFuzzSeeds = []string{
	``,
	`null`,
	`[]`,
	`"job"`,
	`{"command": "run"`,
	`{"command": "echo hi", "compute": "cpu-cluster"}`,
	`{"type": "sweep", "trial": {}}`,
	`{"command": "x ${{inputs.a}} ${{outputs.b}}", "compute": "azureml:c-1a", "inputs": {"a": {"type": "integer", "default": 1e2}}, "outputs": {"b": null}}`,
	`{"command": "x ${{ inputs.a }}", "compute": "local", "inputs": {"a": {"path": "p", "mode": "RO_MOUNT"}}, "services": {"s": {}}}`,
	`{"command": "x", "compute": "/subscriptions/s/computes/gpu", "resources": {"instance_count": 0, "shm_size": 0}, "limits": {"timeout": "PT0S"}}`,
	`{"command": "x", "compute": "cpu-cluster", "environment": {"build": {"path": 1}}, "environment_variables": {"SHOAL_X": 1}}`,
	`{"command": "x", "compute": "cpu-cluster", "queue_settings": {"priority": "HIGH", "job_tier": "Null"}, "retries": 100, "distribution": {"type": "MPI"}}`,
	`{"command": "x", "compute": "cpu-cluster", "inputs": {"a-b": 1, "c": {"type": "boolean", "value": "True"}, "d": {"type": "string", "default": 1.50}}}`,
	`{"command": "x", "compute": "cpu-cluster", "identity": {"type": "managed"}, "tags": {"a": [1]}}`,
	`{"command": "x ${{inputs.m}} ${{outputs.o}}", "compute": "c", "inputs": {"m": {"type": "mlflow_model", "path": "azureml:m@latest", "mode": "download"}, "t": {"type": "mltable", "path": "azureml://datastores/d/paths/t/", "mode": "eval_mount"}}, "outputs": {"o": {"type": "custom_model", "name": "m", "version": 2, "path": "azureml://datastores/d/paths/${{name}}/${{output_name}}"}}}`,
	`{"command": "x", "compute": "c", "inputs": {"u": {"type": "uri_file", "path": "https://h/%2e%2e/x"}, "s": {"path": "s3://b/k", "mode": "rw_mount"}}, "outputs": {"o": {"mode": "direct", "path": "./out"}}}`,
	`{"command": "x ${{inputs.f}}", "compute": "c", "resources": {"instance_count": 2}, "distribution": {"type": "TensorFlow", "worker_count": 3, "parameter_server_count": 1}, "inputs": {"f": false}}`,
	`{"command": "x", "compute": "c", "identity": {"type": "UserIdentity"}, "services": {"nb": {"job_service_type": "JupyterLab", "nodes": "ALL"}, "tb": {"type": "tensor_board", "log_dir": "outputs/tb"}, "app": {"type": "custom", "port": 8080, "properties": {"a": 1}}, "ssh": {"type": "ssh", "ssh_public_keys": "ssh-ed25519 AAAA"}}}`,
	`{"command": "x", "compute": "c", "identity": {"type": "managed", "client_id": "11111111-1111-1111-1111-111111111111", "msi_resource_id": "/x/y"}}`,
}

func FuzzDecodeJobSpec(f *testing.F) {
	for _, s := range jobFuzzSeeds {
		f.Add([]byte(s))
	}
	f.Add([]byte(azureCommandJob))
	for _, s := range azureJobExamples {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		spec, err := job.DecodeJobSpec(doc)
		if err != nil {
			coretest.FuzzCheckError(t, "DecodeJobSpec", doc, err)
			return
		}
		if err := job.NormalizeJobSpec(spec); err != nil {
			coretest.FuzzCheckError(t, "NormalizeJobSpec", doc, err)
			return
		}
		if spec.Type != "command" || spec.Compute == "" || spec.InstanceCount() < 1 {
			t.Fatalf("not normalised: %+v", spec)
		}
		// Every reference in the command expands.
		inputs := map[string]string{}
		for k, in := range spec.Inputs {
			if in.Value != nil {
				inputs[k] = job.FormatInputValue(in.Value)
			} else if !jobio.IsPathType(in.Type) || in.Path == "" {
				t.Fatalf("input %s neither literal nor path: %+v", k, in)
			} else {
				inputs[k] = "/mnt/inputs/" + k
			}
		}
		outputs := map[string]string{}
		for k := range spec.Outputs {
			outputs[k] = "/mnt/outputs/" + k
		}
		if _, err := job.ExpandCommand(spec.Command, inputs, outputs); err != nil {
			t.Fatalf("normalised command does not expand: %v", err)
		}
		// What the server returns can be submitted again unchanged.
		out, err := json.Marshal(spec)
		if err != nil {
			t.Fatalf("encode normalised spec: %v", err)
		}
		again, err := job.DecodeJobSpec(out)
		if err != nil {
			t.Fatalf("decode %s: %v", out, err)
		}
		if err := job.NormalizeJobSpec(again); err != nil {
			t.Fatalf("normalise %s again: %v", out, err)
		}
		if out2, _ := json.Marshal(again); !bytes.Equal(out, out2) {
			t.Fatalf("round trip changed the spec:\n%s\n%s", out, out2)
		}
	})
}
