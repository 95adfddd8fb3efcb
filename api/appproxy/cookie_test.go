package appproxy

import (
	"net/http"
	"reflect"
	"testing"
)

// An instance's application, served on the studio's origin, cannot set
// (or overwrite) the studio's cookies: its Set-Cookie headers for them
// are dropped, and its own cookies pass.
func TestApplicationCannotSetTheStudiosCookies(t *testing.T) {
	h := http.Header{"Set-Cookie": {
		"shoal_session=attacker; Path=/",
		"__Host-shoal_session=attacker; Path=/; Secure",
		"shoal_csrf=known; Path=/",
		"__Host-shoal_csrf=known; Path=/; Secure",
		"shoal_workspace=x",
		"Shoal_Session=attacker",
		" shoal_oidc =x",
		"__Secure-shoal_session=x; Secure",
		"=shoal_session=attacker; Path=/computes",
		"=__Host-shoal_presession=x; Path=/; Secure",
		"shoal_session",
		"_xsrf=jupyter; Path=/api/v1/workspaces/default/computes/i/applications/jupyter/",
		"theme=dark",
	}}
	stripStudioCookies(h)
	want := []string{"_xsrf=jupyter; Path=/api/v1/workspaces/default/computes/i/applications/jupyter/", "theme=dark"}
	if got := h.Values("Set-Cookie"); !reflect.DeepEqual(got, want) {
		t.Fatalf("Set-Cookie after the proxy: %q, want %q", got, want)
	}
	h = http.Header{"Set-Cookie": {"shoal_session=x"}}
	stripStudioCookies(h)
	if _, ok := h["Set-Cookie"]; ok {
		t.Fatalf("an emptied Set-Cookie stays: %q", h)
	}
}
