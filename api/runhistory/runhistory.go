// Package runhistory serves the part of Azure ML's run history service
// that Azure's Python SDK (azure-ai-ml) reads to follow and download a
// job: the discovery document a workspace's discoveryUrl points to, a
// run's details (status, log files, warnings, error, times, target), the
// run itself, its children, its run data, and the log files the details
// name. It reads jobs through the native job service (narrow interfaces
// below) and the log text through the one reader `shoal job logs` uses
// (the file store's OpenLog), so the SDK and the CLI show the same lines.
//
// azure-ai-ml fetches the discovery document and the log URLs with a
// plain HTTP pipeline that sends no credential, so the discovery
// document is public (it holds only the server's URL) and each log URL
// carries a short-lived signature over the workspace, the job and the
// file (SignLog): a URL that leaks exposes that one log until it
// expires, nothing else. The same logs are served under the run's path
// to a caller with a bearer token who may read the workspace's jobs.
package runhistory

import (
	"context"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/shoal-ml/shoal/arm"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/identity"
	"github.com/shoal-ml/shoal/domain/job"
)

// PathPrefix begins every run history path. azure-ai-ml calls them with
// the credential it calls Resource Manager with, so the server accepts
// Resource Manager's token audiences there, as on the ARM routes.
const PathPrefix = "/history/"

// Prefix is the run history path of a workspace, as azure-ai-ml's run
// history client builds it under the discovery document's "api" URL.
const Prefix = "/history/v1.0/subscriptions/{sub}/resourceGroups/{rg}/providers/Microsoft.MachineLearningServices/workspaces/{ws}"

// DiscoveryPath is the discovery document's path; the workspace's ARM
// resource names it as properties.discoveryUrl (arm.Handlers.Workspace,
// which cannot import this package: it imports arm's errors).
const DiscoveryPath = "/discovery"

// SignedLogPattern is the route of a log URL that carries its own
// signature (SignLog) instead of a credential: azure-ai-ml downloads log
// files without one.
const SignedLogPattern = "GET /history/v1.0/logs/{ws}/{job}/{file...}"

// DefaultLogURLLifetime is how long a log URL of a run's details stays
// valid: azure-ai-ml reads the details again before each download, so a
// URL is used within a poll (at most a minute) of being issued.
const DefaultLogURLLifetime = 15 * time.Minute

// Jobs is what run history reads of the native job service.
type Jobs interface {
	// FindJob returns a job of a workspace. Returns ENOTFOUND.
	FindJob(ctx context.Context, workspace, name string) (*job.Job, error)
	// ListAttempts returns a job's attempts, oldest first.
	ListAttempts(ctx context.Context, workspace, name string) ([]*job.Attempt, error)
}

// Logs opens a rank's log: the file store's reader, the one `shoal job
// logs` reads through.
type Logs interface {
	// OpenLog opens the log of one rank of an attempt. Returns ENOTFOUND.
	OpenLog(workspace, job string, attempt, rank int) (io.ReadSeekCloser, error)
}

// Signer derives a MAC under the server's secrets key for a purpose
// (*sealing.Key): every replica with the same key checks the same URL.
type Signer interface {
	MAC(purpose string, msg []byte) []byte
}

// Config is what the handlers read.
type Config struct {
	Jobs Jobs
	Logs Logs
	// Key signs and checks log URLs.
	Key Signer
	// PublicURL is the server's URL as users reach it: the base of the
	// discovery document and of log URLs.
	PublicURL func() string
	// Clock dates log URLs' expiry and checks it.
	Clock core.Clock
	// LogURLLifetime is how long a log URL stays valid (default
	// DefaultLogURLLifetime).
	LogURLLifetime time.Duration
}

// Handlers serves run history.
type Handlers struct{ cfg Config }

// New returns the handlers over cfg.
func New(cfg Config) *Handlers {
	if cfg.LogURLLifetime <= 0 {
		cfg.LogURLLifetime = DefaultLogURLLifetime
	}
	if cfg.Clock == nil {
		cfg.Clock = core.SystemClock{}
	}
	return &Handlers{cfg: cfg}
}

// Route is one route the server registers in its route table: Action is
// checked in the workspace of the path's {ws} before Handler runs; a
// Public route takes no credential.
type Route struct {
	Pattern string
	Action  string
	Public  bool
	Handler http.HandlerFunc
}

// Routes are run history's routes that go through the server's
// authentication and authorization: reading a run is reading the
// workspace's jobs. The signed log route (SignedLogPattern, SignedLog)
// is not among them: it authenticates by its signature.
func (h *Handlers) Routes() []Route {
	read := identity.ActJobsRead
	return []Route{
		{Pattern: "GET " + DiscoveryPath, Public: true, Handler: h.Discovery},
		{Pattern: "GET " + Prefix + "/runs/{id}", Action: read, Handler: h.Run},
		{Pattern: "GET " + Prefix + "/runs/{id}/details", Action: read, Handler: h.Details},
		{Pattern: "GET " + Prefix + "/runs/{id}/children", Action: read, Handler: h.Children},
		{Pattern: "POST " + Prefix + "/rundata", Action: read, Handler: h.RunData},
		{Pattern: "GET " + Prefix + "/runs/{id}/logs/{file...}", Action: read, Handler: h.Log},
		{Pattern: "GET " + Prefix + "/runs/{id}/serviceinstances/{node}", Action: read, Handler: h.ServiceInstances},
	}
}

// Discovery is GET /discovery: the base URLs of the workspace services
// azure-ai-ml looks up ("api" for run history's client, "history"), all
// this server. It holds nothing but the server's URL, so it is public,
// as azure-ai-ml fetches it without a credential.
func (h *Handlers) Discovery(w http.ResponseWriter, r *http.Request) {
	base := strings.TrimRight(h.cfg.PublicURL(), "/")
	writeJSON(w, http.StatusOK, map[string]string{"api": base, "history": base})
}

// findJob reads the path's job in the path's workspace, so that a run of
// another workspace is not found.
func (h *Handlers) findJob(r *http.Request, name string) (*job.Job, error) {
	if name == "" {
		return nil, core.FieldErrorf("runId", "is required")
	}
	return h.cfg.Jobs.FindJob(r.Context(), r.PathValue("ws"), name)
}

// writeError answers err in Azure's error envelope, as run history does.
func writeError(w http.ResponseWriter, err error) { arm.WriteError(w, err) }
