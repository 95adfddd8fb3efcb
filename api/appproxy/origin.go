package appproxy

import (
	"net/http"
	"strings"
	"sync/atomic"
)

// Instance applications (Jupyter, custom ones) run code their user wrote,
// and their pages run its JavaScript. Served on the studio's and API's
// origin, that script could read the studio's pages (and their CSRF
// token) and call the API as the viewer. The server therefore serves
// them on an origin of their own (a second listener, apps_listen): the
// browser's same-origin policy keeps an application's script from
// reading anything of the API's origin, while the session cookie, which
// is host-scoped and not port-scoped, still signs the user in there.

// Origin is the applications' own origin (scheme://host:port), where the
// API's listener sends application requests; the zero value has none.
type Origin struct {
	url atomic.Pointer[string]
}

// Set names the origin; "" serves applications on the API's origin too
// (an embedding without a second listener).
func (o *Origin) Set(u string) {
	u = strings.TrimRight(u, "/")
	o.url.Store(&u)
}

// Redirect redirects an application request that reached the API's
// origin to the applications' origin (old links keep working; 307 keeps
// the method and body), or serves it with h when there is none.
func (o *Origin) Redirect(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u := o.url.Load()
		if u == nil || *u == "" {
			h.ServeHTTP(w, r)
			return
		}
		http.Redirect(w, r, *u+r.URL.RequestURI(), http.StatusTemporaryRedirect)
	})
}
