package job

import (
	"strings"

	"github.com/shoal-ml/shoal/domain/core"
)

// checkCodeAsset checks a job's code_asset: the "name:version" of the
// registered code version its code was packed from. It is only a label
// (what Azure's SDK reads back as codeId; the code that runs is code),
// so it comes with code, and it is a name and a version, no path.
func checkCodeAsset(code, codeAsset string) error {
	if codeAsset == "" {
		return nil
	}
	if code == "" {
		return core.FieldErrorf("code_asset", "names the code version code was packed from, and this job has no code")
	}
	name, version, ok := strings.Cut(codeAsset, ":")
	if !ok || name == "" || version == "" || len(codeAsset) > 300 || strings.ContainsAny(codeAsset, "/\\\x00") || strings.Contains(version, ":") {
		return core.FieldErrorf("code_asset", "must be a code version, name:version (e.g. train-code:1), got %q", core.Short(codeAsset))
	}
	return nil
}
