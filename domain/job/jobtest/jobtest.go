// Package jobtest holds fixtures the job kinds' tests share.
package jobtest

import (
	"encoding/json"
	"strings"

	"github.com/shoal-ml/shoal/domain/job"
)

// TrainComponent is a command component as a pipeline carries it inline
// (the CLI inlines component: ./train.yml).
func TrainComponent() map[string]any {
	return map[string]any{
		"$schema": "https://azuremlschemas.azureedge.net/latest/commandComponent.schema.json",
		"name":    "train", "version": 1, "type": "command", "display_name": "Train",
		"inputs": map[string]any{
			"training_data": map[string]any{"type": "uri_folder"},
			"max_epochs":    map[string]any{"type": "integer", "default": 10, "min": 1, "max": 100},
			"lr":            map[string]any{"type": "number", "optional": true},
			"kind":          map[string]any{"type": "string", "default": "fast", "enum": []any{"fast", "slow"}},
		},
		"outputs":     map[string]any{"model_output": map[string]any{"type": "uri_folder"}},
		"code":        "sha256:" + strings.Repeat("c", 64),
		"environment": "azureml:sklearn@latest",
		"command":     "python train.py --data ${{inputs.training_data}} --epochs ${{inputs.max_epochs}} $[[--lr ${{inputs.lr}}]] --kind ${{inputs.kind}} --out ${{outputs.model_output}}",
	}
}

// Set changes the document at a dotted path (a nil value deletes).
func Set(doc map[string]any, path string, v any) map[string]any {
	parts := strings.Split(path, ".")
	m := doc
	for _, p := range parts[:len(parts)-1] {
		m = m[p].(map[string]any)
	}
	if v == nil {
		delete(m, parts[len(parts)-1])
	} else {
		m[parts[len(parts)-1]] = v
	}
	return doc
}

// ValidCommandJob is a complete, valid command job to break one rule at a time.
func ValidCommandJob() *job.JobSpec {
	return &job.JobSpec{
		Name:        "train_1",
		DisplayName: "train",
		Command:     "python main.py --data ${{inputs.data}} --lr ${{ inputs.lr }} --out ${{outputs.model}}",
		Code:        "sha256:" + strings.Repeat("ab", 32),
		Environment: "azureml:AzureML-sklearn-1.0-ubuntu20.04-py38-cpu@latest",
		Compute:     "azureml:cpu-cluster",
		Inputs: map[string]*job.JobInput{
			"data": {Type: "uri_folder", Path: "./data"},
			"lr":   {Value: json.Number("0.01")},
		},
		Outputs: map[string]*job.JobOutput{"model": {Type: "uri_folder"}},
	}
}
