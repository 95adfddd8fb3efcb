package api

import (
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"

	"github.com/shoal-ml/shoal"
)

// handleApplicationProxy is the authenticated reverse proxy to an
// instance's applications: /api/v1/workspaces/{ws}/computes/{name}/
// applications/{app}/... reaches the application on the instance, for the
// instance's user only. HTTP and WebSocket upgrades (Jupyter's kernels
// and terminals) pass through. The caller's Shoal credential never
// reaches the application: the Authorization header and cookies are
// dropped, and the notebook gets the server's own token instead.
func (s *Server) handleApplicationProxy(w http.ResponseWriter, r *http.Request) {
	ws, name, app := r.PathValue("ws"), r.PathValue("name"), r.PathValue("app")
	t, err := s.svc.ResolveInstanceApp(r.Context(), ws, name, app)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	target := &url.URL{Scheme: "http", Host: t.Addr}
	prefix := t.BasePath
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(target)
			if t.StripPrefix {
				// Custom applications expect to be served at their root.
				p := "/" + strings.TrimPrefix(pr.In.URL.Path, prefix)
				pr.Out.URL.Path, pr.Out.URL.RawPath = p, ""
			} else {
				pr.Out.URL.Path, pr.Out.URL.RawPath = pr.In.URL.Path, pr.In.URL.RawPath
			}
			pr.Out.Host = t.Addr
			pr.Out.Header.Del("Authorization")
			pr.Out.Header.Del("Cookie")
			if t.Token != "" {
				pr.Out.Header.Set("Authorization", "token "+t.Token)
			}
			pr.SetXForwarded()
		},
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			s.writeError(w, r, shoal.Errorf(shoal.EUNAVAILABLE, "application %s of compute instance %s does not answer yet (%v); if it just started, try again in a moment", app, name, err))
		},
	}
	rp.ServeHTTP(w, r)
}
