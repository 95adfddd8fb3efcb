package studio

import (
	"crypto/rand"
	"encoding/base64"
	"net/http"
	"net/url"
	"time"

	"golang.org/x/oauth2"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/identity"
	"github.com/shoal-ml/shoal/server/oidcauth"
)

// OIDC is sign-in with an OpenID Connect provider.
type OIDC struct {
	Provider *oidcauth.Provider
	// DisplayName names the provider on the sign-in page.
	DisplayName string
}

// oidcCookie carries a sign-in's state, nonce and PKCE verifier from the
// redirect to the callback.
const oidcCookie = "shoal_oidc"

func random() string {
	b := make([]byte, 24)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// oidcStart sends the browser to the provider. It is the sign-in page's
// form post, with the sign-in token (login CSRF): another site cannot
// start a sign-in in the viewer's browser.
func (s *Studio) oidcStart(w http.ResponseWriter, r *http.Request) {
	if !s.signInChecked(w, r) {
		return
	}
	state, nonce, verifier := random(), random(), oauth2.GenerateVerifier()
	v := url.Values{"state": {state}, "nonce": {nonce}, "verifier": {verifier}, "next": {safeNext(r.PostFormValue("next"))}}
	s.setCookie(w, oidcCookie, base64.RawURLEncoding.EncodeToString([]byte(v.Encode())), time.Time{}, 600)
	http.Redirect(w, r, s.cfg.OIDC.Provider.AuthCodeURL(state, nonce, verifier), http.StatusFound)
}

// oidcCallback finishes the sign-in: the state must match the cookie's,
// the code is exchanged for an ID token, which must verify and carry the
// nonce; the linked user gets a session token (LoginOIDC's rules).
func (s *Studio) oidcCallback(w http.ResponseWriter, r *http.Request) {
	fail := func(status int, msg string) {
		ri := &identity.RequestInfo{Action: "login", Target: "studio", Source: r.RemoteAddr}
		_ = s.cfg.Svc.RecordAudit(r.Context(), nil, ri, identity.AuditDenied, "OIDC sign-in: "+msg)
		s.signInForm(w, r, status, msg)
	}
	c, err := r.Cookie(s.cookie(oidcCookie))
	s.clearCookie(w, oidcCookie)
	if err != nil {
		fail(http.StatusBadRequest, "The sign-in expired or was started elsewhere; try again.")
		return
	}
	raw, _ := base64.RawURLEncoding.DecodeString(c.Value)
	v, _ := url.ParseQuery(string(raw))
	if e := r.URL.Query().Get("error"); e != "" {
		fail(http.StatusUnauthorized, "The provider refused the sign-in: "+e+" "+r.URL.Query().Get("error_description"))
		return
	}
	if st := r.URL.Query().Get("state"); st == "" || st != v.Get("state") {
		fail(http.StatusBadRequest, "The sign-in's state does not match; try again.")
		return
	}
	idToken, err := s.cfg.OIDC.Provider.Exchange(r.Context(), r.URL.Query().Get("code"), v.Get("verifier"))
	if err != nil {
		fail(http.StatusUnauthorized, err.Error())
		return
	}
	verifier := nonceVerifier{p: s.cfg.OIDC.Provider, nonce: v.Get("nonce")}
	u, token, err := s.cfg.Svc.LoginOIDC(r.Context(), verifier, idToken)
	if err != nil {
		fail(http.StatusUnauthorized, core.ErrorMessage(err))
		return
	}
	p := &identity.Principal{ID: u.PrincipalID(), Name: u.Name, Kind: identity.PrincipalUser, Admin: u.Admin}
	ri := &identity.RequestInfo{Action: "login", Target: "studio", Source: r.RemoteAddr}
	_ = s.cfg.Svc.RecordAudit(r.Context(), p, ri, identity.AuditSucceeded, "studio sign-in with OIDC")
	s.startSession(w, token, s.cfg.Now().Add(sessionLifetime-time.Minute))
	http.Redirect(w, r, safeNext(v.Get("next")), http.StatusFound)
}
