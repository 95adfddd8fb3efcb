// Package api is Shoal's HTTP layer: the server's handlers for the native
// REST API under /api/v1. The Go client the CLI and the agent use lives in
// client/, with the request bodies and the error code/status table both
// sides share: the server answers an error at client.StatusFor(code), the
// client maps the status back to the shoal.Error code.
package api

import (
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/shoal-ml/shoal/api/accessapi"
	"github.com/shoal-ml/shoal/api/admission"
	"github.com/shoal-ml/shoal/api/agentapi"
	"github.com/shoal-ml/shoal/api/appproxy"
	"github.com/shoal-ml/shoal/api/httpx"
	"github.com/shoal-ml/shoal/api/mlflow"
	"github.com/shoal-ml/shoal/api/oauth"
	"github.com/shoal-ml/shoal/api/parallelapi"
	"github.com/shoal-ml/shoal/domain/identity"
	"github.com/shoal-ml/shoal/internal/httpstatus"
	"github.com/shoal-ml/shoal/service"
	"github.com/shoal-ml/shoal/service/batchendpoints"
	"github.com/shoal-ml/shoal/service/blobs"
	"github.com/shoal-ml/shoal/service/codes"
	"github.com/shoal-ml/shoal/service/components"
	"github.com/shoal-ml/shoal/service/dataassets"
	"github.com/shoal-ml/shoal/service/datastores"
	"github.com/shoal-ml/shoal/service/environments"
	"github.com/shoal-ml/shoal/service/models"
	"github.com/shoal-ml/shoal/service/parallel"
	"github.com/shoal-ml/shoal/service/registries"
	"github.com/shoal-ml/shoal/service/tracking"
	"github.com/shoal-ml/shoal/service/webhooks"
)

// MaxRequestBytes bounds request bodies; compute documents are small
// (httpx.MaxRequestBytes).
const MaxRequestBytes = httpx.MaxRequestBytes

// Server serves the HTTP API.
type Server struct {
	svc        *service.Services
	envs       *environments.Service
	comps      *components.Service
	data       *dataassets.Service
	models     *models.Service
	registries *registries.Service
	// datastores keeps datastores, their credentials sealed.
	datastores *datastores.Service
	// batch keeps batch endpoints and deployments and invokes them.
	batch    *batchendpoints.Service
	tracking *tracking.Service
	log      *slog.Logger
	// errs writes the handlers' errors (the one error→status mapping).
	errs           httpx.Errors
	mux            *http.ServeMux
	anonymousAudit auditLimiter
	ready          Readiness
	observer       atomic.Pointer[RequestObserver]
	// adm admits requests under the Limits (SetLimits).
	adm *admission.Controller
	// secure: the server serves HTTPS, and its cookies carry the
	// __Host- prefix (SetSecure).
	secure atomic.Bool
	// appsMux serves the application proxy alone, on the applications'
	// own origin (AppsHandler); appsOrigin is that origin, where the
	// API's listener redirects application requests (SetAppsURL).
	appsMux    *http.ServeMux
	appsOrigin appproxy.Origin
	// apps is the application proxy.
	apps *appproxy.Proxy
	// oauth serves the OAuth 2.0 authority (oauthRoutes).
	oauth *oauth.Handlers
	// mlflow serves MLflow's tracking calls (mounted by routes).
	mlflow *mlflow.API
	// parallel serves parallel jobs' ledgers to their drivers (mounted
	// by routes; the attempt's ledger token is its only credential).
	parallel *parallelapi.API
	// access serves users, tokens, roles, identities and the audit log.
	access *accessapi.Handlers
	// agent serves the agent protocol (/agent/v1).
	agent *agentapi.Handlers
	// blobs serves workspaceblobstore's Blob endpoint (blob.go); nil
	// without a secrets key.
	blobs *blobs.Service
	// blobFront is the Blob endpoint's front door (blob.go).
	blobFront http.Handler
	// codes registers code versions (Azure's codes).
	codes *codes.Service
	// webhooks keeps webhooks, their secrets sealed (webhooks.go).
	webhooks *webhooks.Service
}

// SetSecure says that the server serves HTTPS: browser sessions then use
// the __Host- prefixed cookie names (websession.CookieName). Call before
// serving.
func (s *Server) SetSecure(secure bool) { s.secure.Store(secure) }

// NewServer returns a server over svc.
func NewServer(svc *service.Services, log *slog.Logger) *Server {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Server{svc: svc, log: log, errs: httpx.Errors{Log: log}, adm: admission.New(DefaultLimits()), mux: http.NewServeMux(), appsMux: http.NewServeMux()}
	s.agent = agentapi.New(svc, log)
	s.access = accessapi.New(svc, s.errs)
	s.apps = &appproxy.Proxy{Svc: svc, Errors: s.errs, Stream: func(w http.ResponseWriter, p *identity.Principal, what string, serve func()) {
		s.adm.AppStream(w, p, what, serve)
	}}
	// Registered environments are a service of their own over the same
	// store and file store.
	s.envs = environments.New(environments.Config{Store: svc.Store(), Artifacts: svc.Files()})
	s.comps = components.New(components.Config{Store: svc.Store(), Artifacts: svc.Files()})
	s.data = dataassets.New(dataassets.Config{Store: svc.Store(), Artifacts: svc.Files()})
	s.models = models.New(models.Config{Store: svc.Store(), Artifacts: svc.Files()})
	s.registries = registries.New(registries.Config{Store: svc.Store(), SecretsKey: svc.SecretsKey()})
	s.datastores = datastores.New(datastores.Config{Store: svc.Store(), SecretsKey: svc.SecretsKey()})
	s.batch = batchendpoints.New(batchendpoints.Config{Store: svc.Store(), Jobs: svc, Artifacts: svc.Files()})
	s.blobs = newBlobs(svc)
	if s.blobs != nil {
		s.blobFront = s.newBlobFront()
	}
	s.codes = codes.New(svc.Store())
	s.webhooks = newWebhooks(s, false, false)
	// What jobs log through MLflow: its tokens are derived from the
	// secrets key, as the services derive them for the task.
	s.tracking = tracking.New(tracking.Config{Store: svc.Store(), Authorizer: svc, Key: svc.SecretsKey()})
	s.oauth = oauth.New(svc, s.errs)
	s.mlflow = mlflow.New(svc, s.tracking, mlflow.Admission{AsAnonymous: s.asAnonymous, Authenticated: s.authenticated}, log)
	s.parallel = parallelapi.New(parallel.New(parallel.Config{Store: svc.Store(), Files: svc.Files(), Key: svc.SecretsKey()}), s.authenticated, log)
	s.routes()
	return s
}

// Route is one entry of the route table.
type Route struct {
	// Pattern is the net/http pattern, "METHOD /path/{var}".
	Pattern string
	// Public routes need no credential; every other route does.
	Public bool
	// Agent routes take a node credential (or, for join, a join token)
	// instead of a user's API token.
	Agent bool
	// Action is what the caller must be allowed to do, in the workspace
	// of the path's {ws} when it has one; see also the Action* pseudo-actions.
	Action string
	// Audit names the action in the audit log when Action is a
	// pseudo-action; default Action.
	Audit   string
	handler http.HandlerFunc
	// name is the handler's name (HandlerName) when the function cannot
	// tell it: a generic handler set's method values are closures.
	name string
}

// Pseudo-actions for routes that are not one workspace action (defined
// with Allow, in httpx).
const (
	// ActionAuthenticated: any authenticated principal (catalogs, lists
	// whose service filters by the caller).
	ActionAuthenticated = httpx.ActionAuthenticated
	// ActionSelfOrAdmin: the path's {user} is the caller, or an admin.
	ActionSelfOrAdmin = httpx.ActionSelfOrAdmin
	// ActionLogin: any authenticated principal; recorded as a login.
	ActionLogin = httpx.ActionLogin
)

// Routes returns the route table, so that tests can walk every route.
func (s *Server) Routes() []Route { return s.routeTable() }

func (s *Server) routeTable() []Route {
	return append(append(append(append(append(s.baseRoutes(), s.assetRoutes()...), s.instanceRoutes()...), append(s.armRoutes(), s.historyRoutes()...)...), append(append(append(s.spRoutes(), s.quotaRoutes()...), s.costRoutes()...), append(s.budgetRoutes(), s.oauthRoutes()...)...)...), append(s.batchRoutes(), s.scheduleRoutes()...)...)
}

func (s *Server) baseRoutes() []Route {
	return []Route{
		{Pattern: "GET /healthz", Public: true, handler: s.handleHealth},
		{Pattern: "GET /readyz", Public: true, handler: s.handleReady},
		{Pattern: "GET /.well-known/openid-configuration", Public: true, handler: s.access.Discovery},
		{Pattern: "GET /.well-known/jwks.json", Public: true, handler: s.access.JWKS},
		{Pattern: "GET /api/v1/openapi.json", Public: true, handler: s.handleOpenAPI},

		{Pattern: "GET /api/v1/whoami", Action: ActionLogin, handler: s.access.Whoami},
		{Pattern: "GET /api/v1/workspaces", Action: ActionAuthenticated, handler: s.handleListWorkspaces},
		{Pattern: "POST /api/v1/workspaces", Action: identity.ActWorkspacesWrite, handler: s.handleCreateWorkspace},
		{Pattern: "GET /api/v1/workspaces/{ws}", Action: identity.ActWorkspacesRead, handler: s.handleGetWorkspace},
		{Pattern: "DELETE /api/v1/workspaces/{ws}", Action: identity.ActWorkspacesWrite, Audit: "workspaces/delete", handler: s.handleDeleteWorkspace},
		{Pattern: "GET /api/v1/workspaces/{ws}/limits", Action: identity.ActWorkspacesRead, handler: s.handleGetWorkspaceLimits},
		{Pattern: "PATCH /api/v1/workspaces/{ws}/limits", Action: identity.ActWorkspacesWrite, handler: s.handlePatchWorkspaceLimits},
		{Pattern: "GET /api/v1/workspaces/{ws}/computes", Action: identity.ActComputesRead, handler: s.handleListComputes},
		{Pattern: "GET /api/v1/workspaces/{ws}/computes/{name}", Action: identity.ActComputesRead, handler: s.handleGetCompute},
		{Pattern: "PUT /api/v1/workspaces/{ws}/computes/{name}", Action: identity.ActComputesWrite, handler: s.handlePutCompute},
		{Pattern: "PATCH /api/v1/workspaces/{ws}/computes/{name}", Action: identity.ActComputesWrite, handler: s.handlePatchCompute},
		{Pattern: "DELETE /api/v1/workspaces/{ws}/computes/{name}", Action: identity.ActComputesDelete, handler: s.handleDeleteCompute},
		{Pattern: "GET /api/v1/workspaces/{ws}/computes/{name}/events", Action: identity.ActComputesRead, handler: s.handleComputeEvents},
		{Pattern: "GET /api/v1/workspaces/{ws}/computes/{name}/nodes", Action: identity.ActComputesRead, handler: s.handleListNodes},
		{Pattern: "POST /api/v1/workspaces/{ws}/computes/{name}/nodes/{node}/preempt", Action: identity.ActComputesPreemptNode, handler: s.handlePreemptNode},
		{Pattern: "POST /api/v1/workspaces/{ws}/computes/{name}/nodes", Action: identity.ActComputesJoinNode, handler: s.handleAddNode},
		{Pattern: "DELETE /api/v1/workspaces/{ws}/computes/{name}/nodes/{node}", Action: identity.ActComputesWrite, handler: s.handleRemoveNode},
		{Pattern: "GET /api/v1/locations", Action: ActionAuthenticated, handler: s.handleListLocations},
		{Pattern: "GET /api/v1/locations/{loc}", Action: ActionAuthenticated, handler: s.handleGetLocation},
		{Pattern: "GET /api/v1/locations/{loc}/sizes", Action: ActionAuthenticated, handler: s.handleListSizes},
		{Pattern: "GET /api/v1/locations/{loc}/usages", Action: ActionAuthenticated, handler: s.handleListUsages},
		{Pattern: "POST /api/v1/workspaces/{ws}/artifacts", Action: identity.ActArtifactsWrite, handler: s.handleUploadArtifact},
		{Pattern: "POST /api/v1/workspaces/{ws}/jobs", Action: identity.ActJobsWrite, handler: s.handleSubmitJob},
		{Pattern: "GET /api/v1/workspaces/{ws}/jobs", Action: identity.ActJobsRead, handler: s.handleListJobs},
		{Pattern: "PUT /api/v1/workspaces/{ws}/jobs/{name}", Action: identity.ActJobsWrite, handler: s.handleSubmitJob},
		{Pattern: "GET /api/v1/workspaces/{ws}/jobs/{name}", Action: identity.ActJobsRead, handler: s.handleGetJob},
		{Pattern: "PATCH /api/v1/workspaces/{ws}/jobs/{name}", Action: identity.ActJobsWrite, handler: s.handlePatchJob},
		{Pattern: "POST /api/v1/workspaces/{ws}/jobs/{name}/cancel", Action: identity.ActJobsCancel, handler: s.handleCancelJob},
		{Pattern: "GET /api/v1/workspaces/{ws}/jobs/{name}/attempts", Action: identity.ActJobsRead, handler: s.handleJobAttempts},
		{Pattern: "GET /api/v1/workspaces/{ws}/jobs/{name}/events", Action: identity.ActJobsRead, handler: s.handleJobEvents},
		{Pattern: "GET /api/v1/workspaces/{ws}/jobs/{name}/logs", Action: identity.ActJobsRead, handler: s.handleJobLogs},
		{Pattern: "GET /api/v1/workspaces/{ws}/jobs/{name}/outputs", Action: identity.ActJobsRead, handler: s.handleJobOutputs},
		{Pattern: "GET /api/v1/workspaces/{ws}/jobs/{name}/metrics", Action: identity.ActJobsRead, handler: s.handleJobMetrics},
		{Pattern: "GET /api/v1/workspaces/{ws}/registries", Action: identity.ActRegistriesRead, handler: s.handleListRegistries},
		{Pattern: "POST /api/v1/workspaces/{ws}/registries", Action: identity.ActRegistriesWrite, handler: s.handleAddRegistry},
		{Pattern: "DELETE /api/v1/workspaces/{ws}/registries/{server}", Action: identity.ActRegistriesWrite, handler: s.handleRemoveRegistry},
		{Pattern: "GET /api/v1/workspaces/{ws}/webhooks", Action: identity.ActWebhooksRead, handler: s.handleListWebhooks},
		{Pattern: "POST /api/v1/workspaces/{ws}/webhooks", Action: identity.ActWebhooksWrite, handler: s.handleCreateWebhook},
		{Pattern: "GET /api/v1/workspaces/{ws}/webhooks/{name}", Action: identity.ActWebhooksRead, handler: s.handleGetWebhook},
		{Pattern: "DELETE /api/v1/workspaces/{ws}/webhooks/{name}", Action: identity.ActWebhooksWrite, handler: s.handleDeleteWebhook},
		{Pattern: "GET /api/v1/workspaces/{ws}/webhooks/{name}/deliveries", Action: identity.ActWebhooksRead, handler: s.handleWebhookDeliveries},
		{Pattern: "POST /api/v1/workspaces/{ws}/webhooks/{name}/test", Action: identity.ActWebhooksWrite, handler: s.handleTestWebhook},
		{Pattern: "POST /api/v1/workspaces/{ws}/webhooks/{name}/rotate-secret", Action: identity.ActWebhooksWrite, handler: s.handleRotateWebhookSecret},
		{Pattern: "GET /api/v1/workspaces/{ws}/datastores", Action: identity.ActDatastoresRead, handler: s.handleListDatastores},
		{Pattern: "GET /api/v1/workspaces/{ws}/datastores/{name}", Action: identity.ActDatastoresRead, handler: s.handleGetDatastore},
		{Pattern: "PUT /api/v1/workspaces/{ws}/datastores/{name}", Action: identity.ActDatastoresWrite, handler: s.handlePutDatastore},
		{Pattern: "DELETE /api/v1/workspaces/{ws}/datastores/{name}", Action: identity.ActDatastoresWrite, handler: s.handleDeleteDatastore},
		{Pattern: "GET /api/v1/workspaces/{ws}/roleassignments", Action: identity.ActRolesRead, handler: s.access.ListAssignments},
		{Pattern: "POST /api/v1/workspaces/{ws}/roleassignments", Action: identity.ActRolesWrite, handler: s.access.AssignRole},
		{Pattern: "DELETE /api/v1/workspaces/{ws}/roleassignments", Action: identity.ActRolesWrite, handler: s.access.UnassignRole},

		{Pattern: "GET /api/v1/users", Action: identity.ActUsersRead, handler: s.access.ListUsers},
		{Pattern: "POST /api/v1/users", Action: identity.ActUsersWrite, handler: s.access.CreateUser},
		{Pattern: "GET /api/v1/users/{user}", Action: ActionSelfOrAdmin, Audit: identity.ActUsersRead, handler: s.access.GetUser},
		{Pattern: "POST /api/v1/users/{user}/disable", Action: identity.ActUsersWrite, handler: s.access.DisableUser},
		{Pattern: "POST /api/v1/users/{user}/enable", Action: identity.ActUsersWrite, handler: s.access.EnableUser},
		{Pattern: "GET /api/v1/users/{user}/tokens", Action: ActionSelfOrAdmin, Audit: "tokens/read", handler: s.access.ListTokens},
		{Pattern: "POST /api/v1/users/{user}/tokens", Action: ActionSelfOrAdmin, Audit: identity.ActTokensWrite, handler: s.access.CreateToken},
		{Pattern: "POST /api/v1/tokens/{id}/revoke", Action: ActionAuthenticated, Audit: "tokens/revoke/action", handler: s.access.RevokeToken},
		{Pattern: "GET /api/v1/roles", Action: ActionAuthenticated, handler: s.access.ListRoles},
		{Pattern: "POST /api/v1/roles", Action: identity.ActUsersWrite, Audit: "roleDefinitions/write", handler: s.access.CreateRole},
		{Pattern: "GET /api/v1/identities", Action: ActionAuthenticated, handler: s.access.ListIdentities},
		{Pattern: "POST /api/v1/identities", Action: identity.ActIdentitiesWrite, handler: s.access.CreateIdentity},
		{Pattern: "GET /api/v1/audit", Action: identity.ActUsersRead, handler: s.access.ListAudit},

		{Pattern: "POST /agent/v1/join", Agent: true, handler: s.agent.Join},
		{Pattern: "POST /agent/v1/instance/setup-log", Agent: true, handler: s.agent.SetupLog},
		{Pattern: "POST /agent/v1/instance/app-log", Agent: true, handler: s.agent.AppLog},
		{Pattern: "POST /agent/v1/instance/token", Agent: true, handler: s.agent.InstanceToken},
		{Pattern: "POST /agent/v1/sync", Agent: true, handler: s.agent.Sync},
		{Pattern: "POST /agent/v1/attempts/{attempt}/ranks/{rank}/status", Agent: true, handler: s.agent.Report},
		{Pattern: "POST /agent/v1/attempts/{attempt}/ranks/{rank}/logs", Agent: true, handler: s.agent.Logs},
		{Pattern: "PUT /agent/v1/attempts/{attempt}/ranks/{rank}/outputs", Agent: true, handler: s.agent.Outputs},
		{Pattern: "GET /agent/v1/attempts/{attempt}/ranks/{rank}/restore", Agent: true, handler: s.agent.Restore},
		{Pattern: "POST /agent/v1/attempts/{attempt}/ranks/{rank}/token", Agent: true, handler: s.agent.Token},
		{Pattern: "POST /agent/v1/attempts/{attempt}/ranks/{rank}/gpu", Agent: true, handler: s.agent.GPUSample},
		{Pattern: "GET /agent/v1/artifacts/{id}", Agent: true, handler: s.agent.Artifact},
		{Pattern: "GET /agent/v1/attempts/{attempt}/ranks/{rank}/inputs/{input}", Agent: true, handler: s.agent.Input},
	}
}

func (s *Server) routes() {
	for _, r := range s.routeTable() {
		h := http.Handler(r.handler)
		switch {
		case strings.Contains(r.Pattern, "/applications/"):
			// the application proxy: one of the caller's app streams
		case uploadRoutes[r.Pattern]:
			h = s.transfer(h) // the handler bounds the body's size
		case downloadRoutes[r.Pattern]:
			h = s.transfer(limitBody(h, MaxRequestBytes))
		default:
			h = limitBody(h, MaxRequestBytes)
		}
		switch {
		case r.Pattern == "GET /healthz" || r.Pattern == "GET /readyz":
			// no slot: probes are answered while the anonymous slots are
			// full (they read no body and answer at once)
		case r.Public:
			h = s.anonymousOnly(h)
		case r.Agent && r.Pattern == "POST /agent/v1/join":
			// the join token is checked by the handler: it is single-use
			h = s.anonymousOnly(h)
		case r.Agent:
			h = s.authenticateNode(h)
		default:
			h = s.authenticate(s.authorize(r, h))
		}
		h = s.csrfProtect(h)
		if strings.Contains(r.Pattern, "/applications/") {
			s.appsMux.Handle(r.Pattern, s.timed(r.Pattern, h))
			s.mux.Handle(r.Pattern, s.timed(r.Pattern, s.appsOrigin.Redirect(h)))
			continue
		}
		s.mux.Handle(r.Pattern, s.timed(r.Pattern, h))
	}
	// MLflow's calls authenticate on their own (package mlflow).
	for _, m := range s.mlflow.Routes() {
		if m.Public {
			s.mux.Handle(m.Pattern, s.anonymousOnly(m.Handler))
			continue
		}
		s.mux.Handle(m.Pattern, s.timed(m.Pattern, limitBody(m.Handler, MaxRequestBytes)))
	}
	// Parallel jobs' ledgers authenticate on their own (package
	// parallelapi) and bound their own bodies (files are large).
	for _, m := range s.parallel.Routes() {
		s.mux.Handle(m.Pattern, s.timed(m.Pattern, m.Handler))
	}
	s.mountSignedLogs()
	s.mux.Handle("/", s.anonymousOnly(http.HandlerFunc(notFound)))
	s.appsMux.Handle("/", s.anonymousOnly(http.HandlerFunc(notFound)))
}

func notFound(w http.ResponseWriter, r *http.Request) {
	// The path is the request's own: escaped, it is no markup.
	httpx.WriteErrorJSON(w, http.StatusNotFound, errorBody{Error: errorDetail{Code: "NotFound", Message: "no such route: " + r.Method + " " + r.URL.Path}})
}

// ServeHTTP implements http.Handler. Every answer, of every face the
// mux serves (the API, ARM, MLflow, the studio mounted on it), says
// nosniff.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	httpx.NoSniff(s.admit(s.blobHandler(r, s.mux))).ServeHTTP(w, r)
}

func (s *Server) handleHealth(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

// RequestObserver is told each request's route pattern, status and
// latency (the metrics).
type RequestObserver func(route string, code int, d time.Duration)

// SetRequestObserver installs the request observer.
func (s *Server) SetRequestObserver(o RequestObserver) { s.observer.Store(&o) }

// timed measures a route's requests for the observer.
func (s *Server) timed(route string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		o := s.observer.Load()
		if o == nil {
			next.ServeHTTP(w, r)
			return
		}
		start := time.Now()
		rec := httpstatus.Wrap(w)
		next.ServeHTTP(rec, r)
		(*o)(route, rec.Status, time.Since(start))
	})
}

// SetMetrics serves the metrics at GET /metrics: to any authenticated
// caller, or to anyone when public.
func (s *Server) SetMetrics(h http.Handler, public bool) {
	if public {
		s.mux.Handle("GET /metrics", s.anonymousOnly(h))
		return
	}
	route := Route{Pattern: "GET /metrics", Action: ActionAuthenticated, Audit: "metrics/read"}
	s.mux.Handle("GET /metrics", s.authenticate(s.authorize(route, h)))
}
