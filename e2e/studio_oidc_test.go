package e2e_test

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/shoal-ml/shoal/internal/testoidc"
)

// Signing in to the studio with an OpenID Connect provider (an
// in-process one, testoidc): the account linked to a Shoal user gets a
// session as that user; an account linked to no user is refused with the
// command that links it; signing out revokes the session's token.
func TestStudioOIDC(t *testing.T) {
	t.Parallel()
	idp := testoidc.Start(t, "shoal-studio", "s3cret")
	s := startServer(t, serverOpts{Config: fastJobsConfig + "oidc:\n  issuer: " + idp.URL + "\n  client_id: shoal-studio\n  client_secret: s3cret\n  display_name: Test IdP\n"})
	mustRun(t, s.env, "user", "create", "--name", "olivia", "--oidc-issuer", idp.URL, "--oidc-subject", "sub-olivia", "-o", "none")
	mustRun(t, s.env, "role", "assign", "--user", "olivia", "--role", "Reader", "-o", "none")
	ctx := browser(t)

	idp.SignInAs("sub-stranger", "stranger@example.com")
	browse(t, ctx, "sign in as a stranger", chromedp.Navigate(s.url+"/computes"), chromedp.WaitVisible("#signin-oidc"), chromedp.Click("#signin-oidc"))
	waitJS(t, ctx, 15*time.Second, "the refusal", `document.getElementById("signin-error") && document.getElementById("signin-error").textContent.includes("no Shoal user is linked")`)

	idp.SignInAs("sub-olivia", "olivia@example.com")
	browse(t, ctx, "sign in as olivia", chromedp.Navigate(s.url+"/jobs"), chromedp.WaitVisible("#signin-oidc"), chromedp.Click("#signin-oidc"))
	waitJS(t, ctx, 15*time.Second, "olivia signed in, back where she was going", `location.pathname === "/jobs" && document.getElementById("who").textContent === "olivia"`)
	toks := runJSON[[]map[string]any](t, s.env, "token", "list", "--user", "olivia", "-o", "json")
	if len(toks) != 1 || toks[0]["name"] != "oidc sign-in" || toks[0]["revoked"] != false {
		t.Fatalf("olivia's tokens after signing in: %v", toks)
	}

	browse(t, ctx, "sign out", chromedp.Click(`form.who button`))
	waitJS(t, ctx, 10*time.Second, "the sign-in page", `location.pathname === "/signin"`)
	toks = runJSON[[]map[string]any](t, s.env, "token", "list", "--user", "olivia", "-o", "json")
	if len(toks) != 1 || toks[0]["revoked"] != true {
		t.Errorf("olivia's session token after signing out: %v", toks)
	}
	browse(t, ctx, "a page after signing out", chromedp.Navigate(s.url+"/computes"), chromedp.WaitVisible("#token"))
	audit := mustRun(t, s.env, "audit", "list", "-o", "json")
	if !strings.Contains(audit, "studio sign-in with OIDC") || !strings.Contains(audit, "no Shoal user is linked") {
		t.Errorf("the audit log lacks the OIDC sign-ins")
	}
}
