// Package jobio is a job's inputs and outputs as Azure ML's YAML writes
// them: their types and modes, how a document's inputs and outputs are
// decoded and checked, and what kind of place a path names. Command
// jobs, components, pipeline jobs and sweep trials all read their inputs
// and outputs here, so that each accepts and refuses the same things
// with the same words. It knows nothing of datastores or assets beyond
// the shape of their references: resolving them is the server's.
package jobio

// Input is a job's input: a literal value, or data (a file, a folder, a
// table or a model) at a path.
type Input struct {
	// Value holds a literal input (number, string, boolean); Type is empty.
	Value any `json:"value,omitempty"`
	// Type is one of PathTypes for a data input.
	Type string `json:"type,omitempty"`
	// Path is a local path as written (the CLI's to upload), an uploaded
	// artifact ID, an asset reference, a datastore URI or a URL (PathKind).
	Path string `json:"path,omitempty"`
	// Mode is how the data reaches the job (InputModes); empty is ro_mount.
	Mode string `json:"mode,omitempty"`
	// Asset is the data asset or model version ("name:version") the
	// server resolved an AssetRef path to at submission (@latest
	// included): what `job show` tells and what every attempt reads.
	// Set by the server only; a document's "asset" key is refused.
	Asset string `json:"asset,omitempty"`
}

// Output is a job's output: what the job writes under it is kept where
// Path says, and registered as an asset when Name is given.
type Output struct {
	// Type is one of OutputTypes; empty in a document is uri_folder.
	Type string `json:"type,omitempty"`
	// Mode is rw_mount (the default) or upload.
	Mode string `json:"mode,omitempty"`
	// Path is a datastore URI with optional ${{name}} and
	// ${{output_name}}; empty is DefaultOutputPath.
	Path string `json:"path,omitempty"`
	// Name and Version register the output as a data asset (uri_* and
	// mltable) or a model (the model types) when the job completes.
	Name    string `json:"name,omitempty"`
	Version string `json:"version,omitempty"`
}

// Data and model types (inputs and outputs) and literal types (inputs).
const (
	TypeURIFile     = "uri_file"
	TypeURIFolder   = "uri_folder"
	TypeMLTable     = "mltable"
	TypeCustomModel = "custom_model"
	TypeMLflowModel = "mlflow_model"
	TypeTritonModel = "triton_model"

	TypeString  = "string"
	TypeInteger = "integer"
	TypeNumber  = "number"
	TypeBoolean = "boolean"
)

// Modes, Azure's names. Inputs: ro_mount (the default), download,
// direct, and eval_mount / eval_download for mltable. Outputs: rw_mount
// (the default) and upload.
const (
	ModeROMount      = "ro_mount"
	ModeRWMount      = "rw_mount"
	ModeDownload     = "download"
	ModeDirect       = "direct"
	ModeEvalMount    = "eval_mount"
	ModeEvalDownload = "eval_download"
	ModeUpload       = "upload"
)

var (
	// PathTypes are the types of an input or output that is data at a
	// path, in the order messages list them.
	PathTypes = []string{TypeURIFolder, TypeURIFile, TypeMLTable, TypeCustomModel, TypeMLflowModel, TypeTritonModel}
	// LiteralTypes are the types of a literal input.
	LiteralTypes = []string{TypeString, TypeInteger, TypeNumber, TypeBoolean}
	// InputModes are the modes of a data input.
	InputModes = []string{ModeROMount, ModeDownload, ModeDirect, ModeEvalMount, ModeEvalDownload}
	// OutputModes are the modes of an output.
	OutputModes = []string{ModeRWMount, ModeUpload}
)

// IsPathType reports whether t (canonical spelling) is a data or model type.
func IsPathType(t string) bool { return contains(PathTypes, t) }

// IsModelType reports whether t is one of the model types: an output of
// such a type registers a model, not a data asset.
func IsModelType(t string) bool {
	return t == TypeCustomModel || t == TypeMLflowModel || t == TypeTritonModel
}

// IsLiteralType reports whether t is a literal input's type.
func IsLiteralType(t string) bool { return contains(LiteralTypes, t) }

// InputMode is the mode an input is delivered in: its own, or ro_mount.
func (in *Input) InputMode() string {
	if in.Mode == "" {
		return ModeROMount
	}
	return in.Mode
}

// OutputMode is the mode an output is written in: its own, or rw_mount.
func (o *Output) OutputMode() string {
	if o.Mode == "" {
		return ModeRWMount
	}
	return o.Mode
}

// PathOrDefault is the output's path as written (placeholders not yet
// expanded), or DefaultOutputPath.
func (o *Output) PathOrDefault() string {
	if o.Path == "" {
		return DefaultOutputPath
	}
	return o.Path
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
