package api_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/domain/identity"
)

// code_asset (the code version Azure's routes packed a codeId from) is
// the server's to say: a job, sweep trial or component sent with one on
// Shoal's own routes is refused naming it, so that no job reads back as
// code it did not run.
func TestCodeAssetIsTheServersToSay(t *testing.T) {
	e := newTestEnv(t)
	carl := addUser(t, e, "carl", identity.RoleContributor)
	for path, body := range map[string]string{
		"/api/v1/workspaces/default/jobs": `{"command":"echo","compute":"cpu","code":"sha256:` + strings.Repeat("ab", 32) + `","code_asset":"trusted:1"}`,
		"/api/v1/workspaces/default/jobs/sweepy": `{"type":"sweep","compute":"cpu","sampling_algorithm":"random","objective":{"goal":"maximize","primary_metric":"acc"},"search_space":{"lr":{"type":"choice","values":[1]}},"limits":{"max_total_trials":1},` +
			`"trial":{"command":"echo ${{search_space.lr}}","code":"sha256:` + strings.Repeat("ab", 32) + `","code_asset":"trusted:1"}}`,
		"/api/v1/workspaces/default/components/c/versions/1": `{"name":"c","version":"1","type":"command","command":"echo","code":"sha256:` + strings.Repeat("ab", 32) + `","code_asset":"trusted:1"}`,
	} {
		method := "POST"
		if strings.Contains(path, "/components/") || strings.HasSuffix(path, "/sweepy") {
			method = "PUT"
		}
		r := send(t, e, carl, method, path, body, nil)
		if r.status != http.StatusBadRequest || !strings.Contains(string(r.body), "code_asset") {
			t.Errorf("%s %s: %s, want 400 naming code_asset", method, path, r)
		}
	}
}
