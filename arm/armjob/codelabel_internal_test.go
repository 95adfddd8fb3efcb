package armjob

import "testing"

// A job answers its code version as codeId; code uploaded without one
// (Shoal's artifact ID, which azure-ai-ml's jobs.get would take for a
// local folder and fail on) is not answered.
func TestCodeShown(t *testing.T) {
	for _, c := range []struct{ code, asset, want string }{
		{"sha256:abc", "src:3", "azureml:src:3"},
		{"sha256:abc", "", ""},
		{"", "", ""},
		{"azureml:src:1", "", "azureml:src:1"},
	} {
		if got := codeShown(c.code, c.asset); got != c.want {
			t.Errorf("codeShown(%q, %q) = %q, want %q", c.code, c.asset, got, c.want)
		}
	}
}
