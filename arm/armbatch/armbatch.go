// Package armbatch translates Azure's batch endpoint and deployment
// resources (2022-05-01's BatchEndpointData and BatchDeploymentData) to
// and from the YAML-keyed documents package batch decodes, so that ARM's
// requests pass the same rules as the CLI's. Package arm serves them.
package armbatch

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/shoal-ml/shoal/arm/armcore"
	"github.com/shoal-ml/shoal/arm/armjob"
	"github.com/shoal-ml/shoal/domain/batch"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job"
)

// Resource types, as Azure names them.
const (
	EndpointType   = "Microsoft.MachineLearningServices/workspaces/batchEndpoints"
	DeploymentType = "Microsoft.MachineLearningServices/workspaces/batchEndpoints/deployments"
)

// EndpointResource is Azure's BatchEndpointData.
type EndpointResource struct {
	ID         string              `json:"id,omitempty"`
	Name       string              `json:"name,omitempty"`
	Type       string              `json:"type,omitempty"`
	Location   string              `json:"location,omitempty"`
	Kind       string              `json:"kind,omitempty"`
	Tags       map[string]string   `json:"tags"`
	SystemData *armcore.SystemData `json:"systemData,omitempty"`
	Properties *EndpointProperties `json:"properties"`
}

// EndpointProperties are Azure's BatchEndpointDetails.
type EndpointProperties struct {
	AuthMode    string            `json:"authMode,omitempty"`
	Description string            `json:"description,omitempty"`
	Properties  map[string]string `json:"properties"`
	ScoringURI  string            `json:"scoringUri,omitempty"`
	SwaggerURI  string            `json:"swaggerUri,omitempty"`
	Defaults    *struct {
		DeploymentName string `json:"deploymentName,omitempty"`
	} `json:"defaults,omitempty"`
	ProvisioningState string `json:"provisioningState,omitempty"`
}

// DeploymentResource is Azure's BatchDeploymentData.
type DeploymentResource struct {
	ID         string                `json:"id,omitempty"`
	Name       string                `json:"name,omitempty"`
	Type       string                `json:"type,omitempty"`
	Location   string                `json:"location,omitempty"`
	Tags       map[string]string     `json:"tags"`
	SystemData *armcore.SystemData   `json:"systemData,omitempty"`
	Properties *DeploymentProperties `json:"properties"`
}

// DeploymentProperties are Azure's BatchDeploymentDetails.
type DeploymentProperties struct {
	CodeConfiguration *struct {
		CodeID        string `json:"codeId,omitempty"`
		ScoringScript string `json:"scoringScript"`
	} `json:"codeConfiguration,omitempty"`
	Compute                   string            `json:"compute,omitempty"`
	Description               string            `json:"description,omitempty"`
	EnvironmentID             string            `json:"environmentId,omitempty"`
	EnvironmentVariables      map[string]string `json:"environmentVariables,omitempty"`
	ErrorThreshold            *int              `json:"errorThreshold,omitempty"`
	LoggingLevel              string            `json:"loggingLevel,omitempty"`
	MaxConcurrencyPerInstance int               `json:"maxConcurrencyPerInstance,omitempty"`
	MiniBatchSize             int64             `json:"miniBatchSize,omitempty"`
	Model                     *struct {
		ReferenceType string `json:"referenceType"`
		AssetID       string `json:"assetId,omitempty"`
	} `json:"model,omitempty"`
	OutputAction   string            `json:"outputAction,omitempty"`
	OutputFileName string            `json:"outputFileName,omitempty"`
	Properties     map[string]string `json:"properties"`
	Resources      *struct {
		InstanceCount int    `json:"instanceCount,omitempty"`
		InstanceType  string `json:"instanceType,omitempty"`
	} `json:"resources,omitempty"`
	RetrySettings *struct {
		MaxRetries *int   `json:"maxRetries,omitempty"`
		Timeout    string `json:"timeout,omitempty"`
	} `json:"retrySettings,omitempty"`
	ProvisioningState string `json:"provisioningState,omitempty"`
}

// ScoringPath is an endpoint's scoring URI's path: POST starts a
// job (what ml_client.batch_endpoints.invoke sends), GET lists its jobs.
func ScoringPath(ws, name string) string {
	return "/api/v1/workspaces/" + ws + "/batch-endpoints/" + name + "/jobs"
}

// ToBatchEndpointResource is an endpoint as Azure answers it; base is
// the server's URL the scoring URI starts with.
func ToBatchEndpointResource(scope armcore.Scope, base string, e *batch.Endpoint) *EndpointResource {
	p := &EndpointProperties{AuthMode: "AADToken", Description: e.Description, Properties: map[string]string{},
		ScoringURI: strings.TrimSuffix(base, "/") + ScoringPath(e.Workspace, e.Name), ProvisioningState: "Succeeded"}
	if d := e.DefaultDeployment(); d != "" {
		p.Defaults = &struct {
			DeploymentName string `json:"deploymentName,omitempty"`
		}{d}
	}
	tags := e.Tags
	if tags == nil {
		tags = map[string]string{}
	}
	return &EndpointResource{ID: scope.WorkspaceID(e.Workspace) + "/batchEndpoints/" + e.Name, Name: e.Name, Type: EndpointType,
		Location: "local", Kind: "batch", Tags: tags, SystemData: &armcore.SystemData{CreatedAt: e.CreatedOn, CreatedBy: e.CreatedBy}, Properties: p}
}

// FromBatchEndpointResource is a PUT's body as the endpoint document
// batch.DecodeEndpoint takes.
func FromBatchEndpointResource(name string, body []byte) (*batch.Endpoint, error) {
	var res EndpointResource
	if err := json.Unmarshal(body, &res); err != nil || res.Properties == nil {
		return nil, core.FieldErrorf("properties", "is required: a BatchEndpointData's body is {\"location\": ..., \"properties\": {\"authMode\": \"AADToken\", ...}}")
	}
	doc := map[string]any{"name": name, "description": res.Properties.Description, "tags": res.Tags}
	if m := strings.ToLower(res.Properties.AuthMode); m != "" && m != "aadtoken" {
		doc["auth_mode"] = res.Properties.AuthMode
	}
	if d := res.Properties.Defaults; d != nil && d.DeploymentName != "" {
		doc["defaults"] = map[string]any{"deployment_name": d.DeploymentName}
	}
	js, err := json.Marshal(doc)
	if err != nil {
		return nil, err
	}
	e, err := batch.DecodeEndpoint(js)
	return e, Field(err)
}

// Field renames a YAML key in an error to Azure's property.
func Field(err error) error {
	ce, ok := err.(*core.Error)
	if !ok || ce.Field == "" {
		return err
	}
	names := map[string]string{"auth_mode": "properties.authMode", "defaults.deployment_name": "properties.defaults.deploymentName",
		"model": "properties.model.assetId", "compute": "properties.compute", "code_configuration.scoring_script": "properties.codeConfiguration.scoringScript",
		"code_configuration.code": "properties.codeConfiguration.codeId", "settings.mini_batch_size": "properties.miniBatchSize",
		"settings.output_action": "properties.outputAction", "settings.output_file_name": "properties.outputFileName",
		"settings.error_threshold": "properties.errorThreshold", "settings.logging_level": "properties.loggingLevel",
		"settings.max_concurrency_per_instance": "properties.maxConcurrencyPerInstance", "resources.instance_count": "properties.resources.instanceCount",
		"settings.retry_settings.max_retries": "properties.retrySettings.maxRetries", "settings.retry_settings.timeout": "properties.retrySettings.timeout"}
	if n, ok := names[ce.Field]; ok {
		return &core.Error{Code: ce.Code, Field: n, Message: n + strings.TrimPrefix(ce.Message, ce.Field)}
	}
	return err
}

// ToBatchDeploymentResource is a deployment as Azure answers it.
func ToBatchDeploymentResource(scope armcore.Scope, d *batch.Deployment) *DeploymentResource {
	wsID := scope.WorkspaceID(d.Workspace)
	s := d.Settings
	p := &DeploymentProperties{Compute: wsID + "/computes/" + d.Compute, Description: d.Description, EnvironmentVariables: d.EnvironmentVariables,
		ErrorThreshold: s.ErrorThreshold, LoggingLevel: strings.ToLower(s.LoggingLevel), MaxConcurrencyPerInstance: s.MaxConcurrencyPerInstance,
		OutputFileName: s.OutputFileName, Properties: map[string]string{}, ProvisioningState: "Succeeded", OutputAction: "AppendRow"}
	if s.OutputAction == batch.OutputSummaryOnly {
		p.OutputAction = "SummaryOnly"
	}
	if mb, err := job.ParseMiniBatchSize(s.MiniBatchSize, false); err == nil {
		p.MiniBatchSize = int64(mb.Files)
	}
	p.CodeConfiguration = &struct {
		CodeID        string `json:"codeId,omitempty"`
		ScoringScript string `json:"scoringScript"`
	}{ScoringScript: d.CodeConfiguration.ScoringScript}
	p.Model = &struct {
		ReferenceType string `json:"referenceType"`
		AssetID       string `json:"assetId,omitempty"`
	}{"Id", armjob.AssetID(wsID, "models", d.Model)}
	if env, ok := d.Environment.(string); ok {
		p.EnvironmentID = armjob.AssetID(wsID, "environments", env)
	}
	if d.Resources != nil {
		p.Resources = &struct {
			InstanceCount int    `json:"instanceCount,omitempty"`
			InstanceType  string `json:"instanceType,omitempty"`
		}{d.Resources.InstanceCount, d.Resources.InstanceType}
	}
	if r := s.Retry; r != nil {
		p.RetrySettings = &struct {
			MaxRetries *int   `json:"maxRetries,omitempty"`
			Timeout    string `json:"timeout,omitempty"`
		}{MaxRetries: r.MaxRetries}
		if r.Timeout > 0 {
			p.RetrySettings.Timeout = fmt.Sprintf("PT%dS", r.Timeout)
		}
	}
	tags := d.Tags
	if tags == nil {
		tags = map[string]string{}
	}
	return &DeploymentResource{ID: wsID + "/batchEndpoints/" + d.EndpointName + "/deployments/" + d.Name, Name: d.Name, Type: DeploymentType,
		Location: "local", Tags: tags, SystemData: &armcore.SystemData{CreatedAt: d.CreatedOn, CreatedBy: d.CreatedBy}, Properties: p}
}

// FromBatchDeploymentResource is a PUT's body as the deployment document
// batch.DecodeDeployment takes; code is the artifact its codeId names
// (the caller resolves it).
func FromBatchDeploymentResource(ws, endpoint, name string, body []byte, code func(codeID string) (string, error)) (*batch.Deployment, error) {
	var res DeploymentResource
	if err := json.Unmarshal(body, &res); err != nil || res.Properties == nil {
		return nil, core.FieldErrorf("properties", "is required: a BatchDeploymentData's body is {\"location\": ..., \"properties\": {\"model\": ..., \"codeConfiguration\": ..., \"compute\": ...}}")
	}
	p := res.Properties
	doc := map[string]any{"name": name, "endpoint_name": endpoint, "description": p.Description, "tags": res.Tags, "type": batch.TypeModel}
	var err error
	if p.Compute != "" {
		if doc["compute"], err = armjob.ComputeRef("properties.compute", ws, p.Compute); err != nil {
			return nil, err
		}
	}
	if p.Model != nil && p.Model.AssetID != "" {
		if doc["model"], err = armjob.AssetRef("properties.model.assetId", ws, "models", p.Model.AssetID); err != nil {
			return nil, err
		}
	}
	if p.EnvironmentID != "" {
		if doc["environment"], err = armjob.AssetRef("properties.environmentId", ws, "environments", p.EnvironmentID); err != nil {
			return nil, err
		}
	}
	if cc := p.CodeConfiguration; cc != nil {
		c := map[string]any{"scoring_script": cc.ScoringScript}
		if cc.CodeID != "" {
			if c["code"], err = code(cc.CodeID); err != nil {
				return nil, err
			}
		}
		doc["code_configuration"] = c
	}
	if r := p.Resources; r != nil {
		doc["resources"] = map[string]any{"instance_count": r.InstanceCount, "instance_type": r.InstanceType}
	}
	settings := map[string]any{"environment_variables": p.EnvironmentVariables, "logging_level": p.LoggingLevel, "output_file_name": p.OutputFileName}
	if p.MaxConcurrencyPerInstance != 0 {
		settings["max_concurrency_per_instance"] = p.MaxConcurrencyPerInstance
	}
	if p.MiniBatchSize != 0 {
		settings["mini_batch_size"] = p.MiniBatchSize
	}
	if p.ErrorThreshold != nil {
		settings["error_threshold"] = *p.ErrorThreshold
	}
	switch strings.ToLower(p.OutputAction) {
	case "", "appendrow":
	case "summaryonly":
		settings["output_action"] = batch.OutputSummaryOnly
	default:
		return nil, core.FieldErrorf("properties.outputAction", "%q must be AppendRow or SummaryOnly", core.Short(p.OutputAction))
	}
	if r := p.RetrySettings; r != nil {
		rs := map[string]any{"max_retries": r.MaxRetries}
		if r.Timeout != "" {
			d, err := armcore.ParseDuration(r.Timeout)
			if err != nil {
				return nil, core.FieldErrorf("properties.retrySettings.timeout", "%v", err)
			}
			rs["timeout"] = int(d.Seconds())
		}
		settings["retry_settings"] = rs
	}
	doc["settings"] = settings
	js, err := json.Marshal(doc)
	if err != nil {
		return nil, err
	}
	d, err := batch.DecodeDeployment(js)
	return d, Field(err)
}
