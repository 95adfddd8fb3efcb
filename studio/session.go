package studio

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/shoal-ml/shoal/api/websession"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/identity"
)

// workspaceCookie remembers the workspace the viewer chose.
const workspaceCookie = "shoal_workspace"

// sessionLifetime bounds a session cookie (an OIDC sign-in's token lives
// as long; an API token's own expiry applies too).
const sessionLifetime = 12 * time.Hour

// req is one page request: who asks, in which workspace, and the values
// every page shows.
type req struct {
	w         http.ResponseWriter
	r         *http.Request
	ctx       context.Context
	p         *identity.Principal
	workspace string
	csrf      string
}

// view is what the layout reads; Data is the page's own.
type view struct {
	Title      string
	Section    string
	User       string
	Admin      bool
	CSRF       string
	Workspace  string
	Workspaces []string
	Data       any
}

// page wraps a page handler: the viewer must be signed in (else to the
// sign-in page, coming back here after), and the principal goes in the
// context so that the services authorize as for the API.
func (s *Studio) page(h func(*req) error) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, err := s.cfg.Principal(r)
		if err != nil {
			if _, cerr := r.Cookie(s.cookie(websession.SessionCookie)); cerr == nil {
				s.clearCookie(w, websession.SessionCookie)
			}
			http.Redirect(w, r, "/signin?next="+url.QueryEscape(r.URL.RequestURI()), http.StatusFound)
			return
		}
		q := &req{w: w, r: r, ctx: identity.WithPrincipal(r.Context(), p), p: p, workspace: core.DefaultWorkspace}
		if c, err := r.Cookie(workspaceCookie); err == nil && c.Value != "" {
			q.workspace = c.Value
		}
		if ws := r.URL.Query().Get("workspace"); ws != "" {
			q.workspace = ws
		}
		if c, err := r.Cookie(s.cookie(websession.SessionCookie)); err == nil {
			q.csrf = websession.CSRFToken(c.Value)
		}
		if err := h(q); err != nil {
			s.renderError(q, err)
		}
	})
}

// render writes a page in the layout.
func (s *Studio) render(q *req, name, title, section string, data any) error {
	t := s.pages[name]
	v := view{Title: title, Section: section, User: q.p.Name, Admin: q.p.Admin, CSRF: q.csrf, Workspace: q.workspace, Data: data}
	if wss, err := s.cfg.Svc.ListWorkspaces(q.ctx); err == nil {
		for _, ws := range wss {
			v.Workspaces = append(v.Workspaces, ws.Name)
		}
	}
	q.w.Header().Set("Content-Type", "text/html; charset=utf-8")
	q.w.Header().Set("Cache-Control", "no-store")
	q.w.Header().Set("X-Frame-Options", "DENY")
	q.w.Header().Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; frame-ancestors 'none'")
	return t.ExecuteTemplate(q.w, "layout.html", v)
}

// renderError shows an error page with the API's status for the error.
func (s *Studio) renderError(q *req, err error) {
	status := http.StatusInternalServerError
	switch core.ErrorCode(err) {
	case core.ENOTFOUND:
		status = http.StatusNotFound
	case core.EFORBIDDEN:
		status = http.StatusForbidden
	case core.EINVALID:
		status = http.StatusBadRequest
	case core.EUNAUTHORIZED:
		status = http.StatusUnauthorized
	}
	if status == http.StatusInternalServerError {
		s.cfg.Logger.Error("studio page failed", "path", q.r.URL.Path, "err", err)
	}
	q.w.WriteHeader(status)
	_ = s.render(q, "error", http.StatusText(status), "", map[string]any{"Status": status, "Message": core.ErrorMessage(err)})
}

// cookie is the name of one of Shoal's cookies on this server: under
// HTTPS with the __Host- prefix (Secure, Path=/, no Domain).
func (s *Studio) cookie(base string) string { return websession.CookieName(base, s.cfg.Secure) }

// setCookie sets one of the studio's cookies, HttpOnly (no page script
// reads them: the CSRF token comes in the page), host-only and on /
// (as the __Host- prefix demands), Secure under HTTPS; maxAge 0 keeps it
// for the browser's session, negative deletes it.
func (s *Studio) setCookie(w http.ResponseWriter, base, value string, expires time.Time, maxAge int) {
	http.SetCookie(w, &http.Cookie{Name: s.cookie(base), Value: value, Path: "/", HttpOnly: true, Secure: s.cfg.Secure,
		SameSite: http.SameSiteLaxMode, Expires: expires, MaxAge: maxAge})
}

func (s *Studio) clearCookie(w http.ResponseWriter, base string) {
	s.setCookie(w, base, "", time.Time{}, -1)
}

// startSession sets the session cookie (an API token); pages derive the
// session's CSRF token from it (websession.CSRFToken).
func (s *Studio) startSession(w http.ResponseWriter, token string, expires time.Time) {
	s.setCookie(w, websession.SessionCookie, token, expires, 0)
}

// preSession returns the sign-in forms' token (login CSRF): the HMAC of
// the pre-session cookie's secret, which is made and set when missing.
// An attacker's page can post a sign-in form, but not with a token
// matching the victim's cookie, so he cannot sign the victim into his
// own account.
func (s *Studio) preSession(w http.ResponseWriter, r *http.Request) string {
	if c, err := r.Cookie(s.cookie(websession.PreSessionCookie)); err == nil && c.Value != "" {
		return websession.SignInToken(c.Value)
	}
	v := random()
	s.setCookie(w, websession.PreSessionCookie, v, time.Time{}, 0)
	return websession.SignInToken(v)
}

// signInChecked reports whether a sign-in form's post carries the token
// of the browser's pre-session cookie; if not, it answers 403 with the
// sign-in form (and a fresh pre-session cookie when there was none).
func (s *Studio) signInChecked(w http.ResponseWriter, r *http.Request) bool {
	c, err := r.Cookie(s.cookie(websession.PreSessionCookie))
	if err == nil && websession.ValidToken(websession.SignInToken(c.Value), r.PostFormValue(websession.CSRFField)) {
		return true
	}
	ri := &identity.RequestInfo{Action: "login", Target: "studio", Source: r.RemoteAddr}
	_ = s.cfg.Svc.RecordAudit(r.Context(), nil, ri, identity.AuditDenied, "studio sign-in without the sign-in form's CSRF token")
	s.signInForm(w, r, http.StatusForbidden, "This sign-in did not come from this site's sign-in form (its CSRF token is missing, or the form is from an earlier visit); sign in again from this page.")
	return false
}

// safeNext keeps a post-sign-in redirect on this site: next must be a
// path that begins with exactly one "/", with no backslash (browsers read
// "/\host" as "//host"), no control character (they drop a tab or a
// newline, so "/\t/host" becomes "//host") and no scheme or host, both as
// given and once percent-decoded. Anything else goes to "/".
func safeNext(next string) string {
	if !onSite(next) {
		return "/"
	}
	return next
}

func onSite(next string) bool {
	dec, err := url.PathUnescape(next)
	if err != nil || !utf8.ValidString(dec) {
		return false
	}
	for _, p := range []string{next, dec} {
		if !strings.HasPrefix(p, "/") || strings.HasPrefix(p, "//") || strings.ContainsRune(p, '\\') {
			return false
		}
		for _, r := range p {
			if unicode.IsControl(r) || r == '\u2028' || r == '\u2029' {
				return false
			}
		}
	}
	u, err := url.Parse(next)
	return err == nil && u.Scheme == "" && u.Host == "" && u.User == nil
}

// signInPage offers sign-in with an API token (and with the OIDC
// provider, when one is configured).
func (s *Studio) signInPage(w http.ResponseWriter, r *http.Request) {
	s.signInForm(w, r, http.StatusOK, "")
}

func (s *Studio) signInForm(w http.ResponseWriter, r *http.Request, status int, message string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Frame-Options", "DENY")
	csrf := s.preSession(w, r)
	w.WriteHeader(status)
	data := map[string]any{"Next": safeNext(r.FormValue("next")), "Error": message, "OIDC": s.cfg.OIDC != nil, "CSRF": csrf}
	if s.cfg.OIDC != nil {
		data["OIDCName"] = s.cfg.OIDC.DisplayName
	}
	_ = s.pages["signin"].ExecuteTemplate(w, "signin", data)
}

// signIn checks the API token and makes it the session.
func (s *Studio) signIn(w http.ResponseWriter, r *http.Request) {
	if !s.signInChecked(w, r) {
		return
	}
	token := strings.TrimSpace(r.PostFormValue("token"))
	p, err := s.cfg.Svc.Authenticate(r.Context(), token)
	if err != nil {
		s.signInForm(w, r, http.StatusUnauthorized, "That token is not valid: "+core.ErrorMessage(err))
		return
	}
	ri := &identity.RequestInfo{Action: "login", Target: "studio", Source: r.RemoteAddr}
	_ = s.cfg.Svc.RecordAudit(r.Context(), p, ri, identity.AuditSucceeded, "studio sign-in with an API token")
	s.startSession(w, token, s.cfg.Now().Add(sessionLifetime))
	http.Redirect(w, r, safeNext(r.PostFormValue("next")), http.StatusSeeOther)
}

// signOut ends the session (the API's CSRF check has passed: the form
// carries the token). A session made by an OIDC sign-in revokes its token.
func (s *Studio) signOut(w http.ResponseWriter, r *http.Request) {
	if c, err := r.Cookie(s.cookie(websession.SessionCookie)); err == nil {
		if p, err := s.cfg.Svc.Authenticate(r.Context(), c.Value); err == nil {
			s.cfg.Svc.EndOIDCSession(identity.WithPrincipal(r.Context(), p), c.Value)
		}
	}
	s.clearCookie(w, websession.SessionCookie)
	http.Redirect(w, r, "/signin", http.StatusSeeOther)
}

// chooseWorkspace remembers the viewer's workspace.
func (s *Studio) chooseWorkspace(q *req) error {
	ws := q.r.URL.Query().Get("name")
	if _, err := s.cfg.Svc.FindWorkspace(q.ctx, ws); err != nil {
		return err
	}
	http.SetCookie(q.w, &http.Cookie{Name: workspaceCookie, Value: ws, Path: "/", Secure: s.cfg.Secure, SameSite: http.SameSiteLaxMode})
	http.Redirect(q.w, q.r, "/computes?workspace="+url.QueryEscape(ws), http.StatusFound)
	return nil
}
