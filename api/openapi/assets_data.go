package openapi

import "github.com/shoal-ml/shoal/domain/asset"

// The native routes of data assets and models (issue 36), documented as
// environments' are; kept beside apiDocs, which grows with every kind.
func init() {
	for collection, kind := range map[string]struct {
		noun string
		doc  any
		list any
	}{
		"data":   {"data asset", asset.Data{}, list[asset.Data]{}},
		"models": {"model", asset.Model{}, list[asset.Model]{}},
	} {
		base := "/api/v1/workspaces/{ws}/" + collection
		apiDocs["POST "+base] = opDoc{summary: "Register a " + kind.noun + "'s next version", in: kind.doc, out: kind.doc, status: 201}
		apiDocs["GET "+base] = opDoc{summary: "List registered " + kind.noun + "s' versions, by name, newest first", out: kind.list, query: []string{"name", "archived"}}
		apiDocs["PUT "+base+"/{name}/versions/{version}"] = opDoc{summary: "Register a version of a " + kind.noun + " (idempotent)", in: kind.doc, out: kind.doc, status: 201}
		apiDocs["GET "+base+"/{name}/versions/{version}"] = opDoc{summary: "Show a version of a " + kind.noun, out: kind.doc}
		apiDocs["GET "+base+"/{name}/labels/{label}"] = opDoc{summary: "Show a " + kind.noun + "'s latest version (label latest)", out: kind.doc}
		apiDocs["POST "+base+"/{name}/archive"] = opDoc{summary: "Archive a " + kind.noun + "'s version, or every version", out: kind.list, query: []string{"version"}}
		apiDocs["POST "+base+"/{name}/restore"] = opDoc{summary: "Restore a " + kind.noun + "'s version, or every version", out: kind.list, query: []string{"version"}}
	}
}
