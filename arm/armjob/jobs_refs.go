package armjob

import (
	"strings"

	"github.com/shoal-ml/shoal/domain/core"
)

// armResourcePrefix is what every ARM id of a workspace's resource starts
// with, up to the workspace's name.
const armResourcePrefix = "/providers/Microsoft.MachineLearningServices/workspaces/"

// armRef is what an ARM id of a workspace's resource names: the
// workspace, the collection (computes, environments, components, data,
// models, codes), the name and, for a version, the version.
type armRef struct {
	workspace, collection, name, version string
}

// parseARMID reads an ARM id (with or without azureml:), as azure-ai-ml
// turns names into ids before it sends a job:
// /subscriptions/{s}/resourceGroups/{rg}/providers/Microsoft.MachineLearningServices/workspaces/{ws}/{collection}/{name}[/versions/{v}].
// ok is false for anything else (a plain name, azureml:name:version).
func parseARMID(s string) (ref armRef, ok bool) {
	s = strings.TrimPrefix(strings.TrimSpace(s), "azureml:")
	if !strings.HasPrefix(strings.ToLower(s), "/subscriptions/") {
		return armRef{}, false
	}
	i := strings.Index(strings.ToLower(s), strings.ToLower(armResourcePrefix))
	if i < 0 {
		return armRef{}, false
	}
	parts := strings.Split(strings.Trim(s[i+len(armResourcePrefix):], "/"), "/")
	switch {
	case len(parts) == 3:
		return armRef{workspace: parts[0], collection: parts[1], name: parts[2]}, parts[2] != ""
	case len(parts) == 5 && strings.EqualFold(parts[3], "versions"):
		return armRef{workspace: parts[0], collection: parts[1], name: parts[2], version: parts[4]}, parts[2] != "" && parts[4] != ""
	}
	return armRef{}, false
}

// ownRef checks that an ARM id in field names a resource of collection in
// workspace ws: a job runs on its own workspace's computes and assets.
func ownRef(field, ws, collection string, ref armRef) error {
	if !strings.EqualFold(ref.workspace, ws) {
		return core.FieldErrorf(field, "names %s %q of workspace %q: a job in workspace %q uses its own workspace's %s", singular(collection), ref.name, ref.workspace, ws, collection)
	}
	if !strings.EqualFold(ref.collection, collection) {
		return core.FieldErrorf(field, "names a resource of %s, not of %s", ref.collection, collection)
	}
	return nil
}

func singular(collection string) string {
	switch collection {
	case "data":
		return "data asset"
	}
	return strings.TrimSuffix(collection, "s")
}

// computeRef turns a computeId (an ARM id, azureml:<name> or a name) into
// the compute a job document names.
func computeRef(field, ws, id string) (string, error) {
	if ref, ok := parseARMID(id); ok {
		if err := ownRef(field, ws, "computes", ref); err != nil {
			return "", err
		}
		if ref.version != "" {
			return "", core.FieldErrorf(field, "%q is not the id of a compute", core.Short(id))
		}
		return ref.name, nil
	}
	if strings.HasPrefix(strings.ToLower(strings.TrimSpace(id)), "/subscriptions/") {
		return "", core.FieldErrorf(field, "%q is not the ARM id of a compute (…/workspaces/<ws>/computes/<name>)", core.Short(id))
	}
	return strings.TrimPrefix(strings.TrimSpace(id), "azureml:"), nil
}

// assetRef turns an asset id (an ARM id of a version or a container,
// azureml:<name>:<version>, azureml:<name>@<label>) into the reference a
// job document takes (azureml:<name>:<version> or azureml:<name>@latest).
// Anything else (a registry's azureml://registries/… id) is passed as it
// is for the job's rules to judge.
func assetRef(field, ws, collection, id string) (string, error) {
	if ref, ok := parseARMID(id); ok {
		if err := ownRef(field, ws, collection, ref); err != nil {
			return "", err
		}
		if ref.version == "" {
			return "azureml:" + ref.name + "@latest", nil
		}
		return "azureml:" + ref.name + ":" + ref.version, nil
	}
	if strings.HasPrefix(strings.ToLower(strings.TrimSpace(id)), "/subscriptions/") {
		return "", core.FieldErrorf(field, "%q is not the ARM id of one of the workspace's %s", core.Short(id), collection)
	}
	return strings.TrimSpace(id), nil
}
