// Package studio is Shoal's web UI: server-rendered pages (html/template,
// embedded assets, no build step) over the same services as the API. It
// reads through the services with the signed-in principal and changes
// nothing itself: its forms and buttons call the native JSON API from
// small progressive JavaScript, with the session cookie and the CSRF
// header, so every rule, role, validation message and audit record is the
// API's own. Without JavaScript every page still reads.
package studio

import (
	"embed"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"time"

	"github.com/shoal-ml/shoal/api/websession"
	"github.com/shoal-ml/shoal/domain/identity"
	"github.com/shoal-ml/shoal/service"
	"github.com/shoal-ml/shoal/service/tracking"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// Config configures the studio.
type Config struct {
	Svc *service.Services
	// Principal resolves a request's credential (the session cookie).
	Principal func(*http.Request) (*identity.Principal, error)
	// Secure marks cookies Secure (the server serves HTTPS).
	Secure bool
	// OIDC, when set, offers sign-in with an OpenID Connect provider.
	OIDC *OIDC
	// Tracking, when set, shows what a job logged through MLflow on its
	// page.
	Tracking *tracking.Service
	// Now is the clock (the server's); default time.Now.
	Now    func() time.Time
	Logger *slog.Logger
}

// Studio serves the pages.
type Studio struct {
	cfg   Config
	pages map[string]*template.Template
}

// New parses the templates.
func New(cfg Config) (*Studio, error) {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	s := &Studio{cfg: cfg, pages: map[string]*template.Template{}}
	layout, err := template.New("layout.html").Funcs(funcs).ParseFS(templateFS, "templates/layout.html")
	if err != nil {
		return nil, err
	}
	names, err := fs.Glob(templateFS, "templates/*.html")
	if err != nil {
		return nil, err
	}
	for _, n := range names {
		if n == "templates/layout.html" {
			continue
		}
		t, err := template.Must(layout.Clone()).ParseFS(templateFS, n)
		if err != nil {
			return nil, err
		}
		s.pages[n[len("templates/"):len(n)-len(".html")]] = t
	}
	return s, nil
}

// Routes returns the studio's routes, pattern → handler, for the server to
// mount next to the API.
func (s *Studio) Routes() map[string]http.Handler {
	static, _ := fs.Sub(staticFS, "static")
	r := map[string]http.Handler{
		"GET /{$}":                    http.RedirectHandler("/computes", http.StatusFound),
		"GET /static/{file}":          http.StripPrefix("/static/", cacheFor(http.FileServerFS(static), time.Hour)),
		"GET /signin":                 http.HandlerFunc(s.signInPage),
		"POST /signin":                websession.PreSessionForm{Handler: http.HandlerFunc(s.signIn)},
		"POST /signout":               http.HandlerFunc(s.signOut),
		"GET /workspace":              s.page(s.chooseWorkspace),
		"GET /computes":               s.page(s.computesPage),
		"GET /computes/new":           s.page(s.newComputePage),
		"GET /computes/{name}":        s.page(s.computePage),
		"GET /computes/{name}/edit":   s.page(s.editComputePage),
		"GET /jobs":                   s.page(s.jobsPage),
		"GET /jobs/{name}":            s.page(s.jobPage),
		"GET /quota":                  s.page(s.quotaPage),
		"GET /batch-endpoints":        s.page(s.batchEndpointsPage),
		"GET /batch-endpoints/{name}": s.page(s.batchEndpointPage),
		"GET /schedules":              s.page(s.schedulesPage),
		"GET /schedules/{name}":       s.page(s.schedulePage),
		"GET /datastores":             s.page(s.datastoresPage),
		"GET /datastores/{name}":      s.page(s.datastorePage),
		"GET /webhooks":               s.page(s.webhooksPage),
		"GET /audit":                  s.page(s.auditPage),
		"GET /users":                  s.page(s.usersPage),
		"GET /live/computes/{name}":   s.page(s.liveCompute),
		"GET /live/jobs/{name}":       s.page(s.liveJob),
	}
	data, model := s.assetPages()
	r["GET /data"] = s.page(data.listPage(s))
	r["GET /data/{name}/versions/{version}"] = s.page(data.versionPage(s))
	r["GET /models"] = s.page(model.listPage(s))
	r["GET /models/{name}/versions/{version}"] = s.page(model.versionPage(s))
	if s.cfg.OIDC != nil {
		r["POST /signin/oidc"] = websession.PreSessionForm{Handler: http.HandlerFunc(s.oidcStart)}
		r["GET /signin/oidc/callback"] = http.HandlerFunc(s.oidcCallback)
	}
	return r
}

// cacheFor sets how long browsers keep the static assets.
func cacheFor(h http.Handler, d time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "public, max-age="+itoa(int(d/time.Second)))
		h.ServeHTTP(w, r)
	})
}
