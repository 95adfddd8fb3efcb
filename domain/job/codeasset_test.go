package job

import (
	"testing"

	"github.com/shoal-ml/shoal/domain/core"
)

// code_asset is a label of the code version code was packed from: it
// needs code, and is a name and a version, never a path.
func TestCheckCodeAsset(t *testing.T) {
	if err := checkCodeAsset("sha256:ab", "train:1"); err != nil {
		t.Errorf("a code version: %v", err)
	}
	for code, asset := range map[string]string{
		"":          "train:1",
		"sha256:ab": "train",
		"sha256:a":  "train:",
		"sha256:b":  ":1",
		"sha256:c":  "../x:1",
		"sha256:d":  "a:b:c",
	} {
		if err := checkCodeAsset(code, asset); core.ErrorField(err) != "code_asset" {
			t.Errorf("code %q, code_asset %q: %v, want refused naming code_asset", code, asset, err)
		}
	}
}
