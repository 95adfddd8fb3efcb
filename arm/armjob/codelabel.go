package armjob

import "strings"

// labelCode records, in a command job's or a sweep trial's document d,
// the code version its codeId named (code_asset: "name:version"), beside
// the artifact trialLike packed: Azure's SDK reads a job back with the
// codeId it sent, never Shoal's artifact ID. Nothing when o names no
// code version.
func labelCode(o obj, d doc) {
	if _, ok := d["code"]; !ok {
		return
	}
	id, err := o.str("codeId", "code_id", "code")
	if err != nil {
		return
	}
	if name, version, ok := CodeVersionOf(id); ok {
		d["code_asset"] = name + ":" + version
	}
}

// CodeVersionOf is the name and version a codeId names: an ARM id
// (…/codes/<name>/versions/<version>, with or without azureml:) or
// azureml:<name>:<version>.
func CodeVersionOf(id string) (name, version string, ok bool) {
	rest := strings.TrimPrefix(id, "azureml:")
	if i := strings.LastIndex(strings.ToLower(rest), "/codes/"); i >= 0 {
		segs := strings.Split(rest[i+len("/codes/"):], "/")
		if len(segs) == 3 && segs[1] == "versions" && segs[0] != "" && segs[2] != "" {
			return segs[0], segs[2], true
		}
		return "", "", false
	}
	if n, v, ok := strings.Cut(rest, ":"); ok && n != "" && v != "" && !strings.ContainsAny(rest, "/") {
		return n, v, true
	}
	return "", "", false
}

// codeShown is the code a job answers as codeId: its code version when
// it was packed from one (as azureml:<name>:<version>, which the answer
// turns into the version's ARM id), else nothing. Code uploaded without a
// version (a batch endpoint's invocation runs its deployment's code
// folder) is Shoal's artifact ID, which names nothing Azure's SDK can
// resolve: azure-ai-ml's jobs.get takes any codeId that is not a code
// version's ARM id for a local folder and fails reading it back.
func codeShown(code, codeAsset string) string {
	if codeAsset != "" {
		return "azureml:" + codeAsset
	}
	if strings.HasPrefix(code, "sha256:") {
		return ""
	}
	return code
}
