// Package openapi builds the OpenAPI 3 document of Shoal's native API
// (/api/v1/openapi.json) from the server's route table and the
// descriptions here (apiDocs), with JSON Schemas that follow the Go types
// by reflection: a document that follows the code instead of a copy of
// it. It is apart from api so that the route table's consumers (the
// document, its test) do not grow the server's package.
package openapi

import (
	"net/http"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"github.com/shoal-ml/shoal/api/httpx"
	"github.com/shoal-ml/shoal/client"
	"github.com/shoal-ml/shoal/domain/asset"
	"github.com/shoal-ml/shoal/domain/catalog"
	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/identity"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/mlflowrun"
	"github.com/shoal-ml/shoal/domain/money"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/domain/notify"
)

// opDoc documents one route of the native API in the OpenAPI document.
// Every /api/v1 route must have one (TestOpenAPIMatchesRoutes).
type opDoc struct {
	summary string
	// in and out are values of the request and response body types (nil:
	// none, or not JSON); status is the success status (default 200).
	in, out any
	status  int
	// query lists the query parameters.
	query []string
}

type list[T any] struct {
	Value []T `json:"value"`
}

// apiDocs are the native API's routes, by pattern.
var apiDocs = map[string]opDoc{
	"GET /api/v1/whoami":                                                     {summary: "The caller: principal, roles by workspace", out: identity.Whoami{}},
	"GET /api/v1/workspaces":                                                 {summary: "List workspaces", out: list[core.Workspace]{}},
	"POST /api/v1/workspaces":                                                {summary: "Create a workspace", in: core.Workspace{}, out: core.Workspace{}, status: 201},
	"GET /api/v1/workspaces/{ws}":                                            {summary: "Show a workspace", out: core.Workspace{}},
	"DELETE /api/v1/workspaces/{ws}":                                         {summary: "Delete a workspace without computes or unfinished jobs (204; 409 names what remains)", status: 204},
	"GET /api/v1/workspaces/{ws}/limits":                                     {summary: "A workspace's log cap and storage quota, with its storage use", out: money.WorkspaceLimitsView{}},
	"PATCH /api/v1/workspaces/{ws}/limits":                                   {summary: "Set a workspace's log cap and storage quota (administrators)", in: client.WorkspaceLimitsUpdate{}, out: money.WorkspaceLimitsView{}},
	"GET /api/v1/workspaces/{ws}/computes":                                   {summary: "List computes (clusters and instances; serverless pools with include_serverless=true)", out: list[compute.Compute]{}, query: []string{"type", "include_serverless"}},
	"GET /api/v1/workspaces/{ws}/computes/{name}":                            {summary: "Show a compute with its status", out: compute.Compute{}},
	"PUT /api/v1/workspaces/{ws}/computes/{name}":                            {summary: "Create (201) or apply (200) a compute; If-Match, If-None-Match: *", in: compute.ComputeSpec{}, out: compute.Compute{}},
	"PATCH /api/v1/workspaces/{ws}/computes/{name}":                          {summary: "Change mutable fields", in: compute.ComputeUpdate{}, out: compute.Compute{}},
	"DELETE /api/v1/workspaces/{ws}/computes/{name}":                         {summary: "Delete a compute (202, then gone)", status: 202},
	"GET /api/v1/workspaces/{ws}/computes/{name}/events":                     {summary: "A compute's event log", out: list[core.Event]{}},
	"GET /api/v1/workspaces/{ws}/computes/{name}/nodes":                      {summary: "A compute's nodes", out: list[node.Node]{}},
	"POST /api/v1/workspaces/{ws}/computes/{name}/nodes":                     {summary: "Add a machine to join by hand: its join command", status: 201},
	"DELETE /api/v1/workspaces/{ws}/computes/{name}/nodes/{node}":            {summary: "Remove a node joined by hand", status: 202},
	"POST /api/v1/workspaces/{ws}/computes/{name}/nodes/{node}/preempt":      {summary: "Preempt a node (administrators)", status: 202},
	"POST /api/v1/workspaces/{ws}/computes/{name}/start":                     {summary: "Start an instance (202; poll the compute)", status: 202},
	"POST /api/v1/workspaces/{ws}/computes/{name}/stop":                      {summary: "Stop an instance", status: 202},
	"POST /api/v1/workspaces/{ws}/computes/{name}/restart":                   {summary: "Restart an instance", status: 202},
	"POST /api/v1/workspaces/{ws}/computes/{name}/enableSso":                 {summary: "Enable single sign-on (the instance's user)", out: compute.Compute{}},
	"POST /api/v1/workspaces/{ws}/computes/{name}/postponeShutdown":          {summary: "Dismiss an upcoming idle shutdown", out: compute.Compute{}, query: []string{"minutes"}},
	"POST /api/v1/workspaces/{ws}/computes/{name}/updateIdleShutdownSetting": {summary: "Azure's idle-shutdown body", in: map[string]string{}, out: compute.Compute{}},
	"POST /api/v1/workspaces/{ws}/computes/{name}/updateSchedules": {summary: "Replace an instance's schedules", in: struct {
		Schedules *compute.ComputeSchedules `json:"schedules"`
	}{}, out: compute.Compute{}},
	"GET /api/v1/workspaces/{ws}/computes/{name}/logs":                          {summary: "An instance's setup log, or a custom application's (text)", query: []string{"kind", "app"}},
	"GET /api/v1/workspaces/{ws}/computes/{name}/applications/{app}/{path}":     {summary: "Proxy to an instance's application (its user only)"},
	"HEAD /api/v1/workspaces/{ws}/computes/{name}/applications/{app}/{path}":    {summary: "Proxy to an instance's application"},
	"OPTIONS /api/v1/workspaces/{ws}/computes/{name}/applications/{app}/{path}": {summary: "Proxy to an instance's application"},
	"POST /api/v1/workspaces/{ws}/computes/{name}/applications/{app}/{path}":    {summary: "Proxy to an instance's application"},
	"PUT /api/v1/workspaces/{ws}/computes/{name}/applications/{app}/{path}":     {summary: "Proxy to an instance's application"},
	"PATCH /api/v1/workspaces/{ws}/computes/{name}/applications/{app}/{path}":   {summary: "Proxy to an instance's application"},
	"DELETE /api/v1/workspaces/{ws}/computes/{name}/applications/{app}/{path}":  {summary: "Proxy to an instance's application"},
	"GET /api/v1/locations":                                              {summary: "Locations with their hosts and quota use (the nodes of the caller's workspaces)", out: list[catalog.LocationDetail]{}},
	"GET /api/v1/locations/{loc}":                                        {summary: "A location (the nodes of the caller's workspaces)", out: catalog.LocationDetail{}},
	"GET /api/v1/locations/{loc}/sizes":                                  {summary: "Sizes offered at a location", out: list[catalog.Size]{}},
	"GET /api/v1/locations/{loc}/usages":                                 {summary: "Quota lines of a location", out: list[catalog.Usage]{}},
	"POST /api/v1/workspaces/{ws}/artifacts":                             {summary: "Upload a tar.gz (code, inputs); content-addressed", status: 201},
	"POST /api/v1/workspaces/{ws}/jobs":                                  {summary: "Submit a job", in: job.JobSpec{}, out: job.Job{}, status: 201},
	"PUT /api/v1/workspaces/{ws}/jobs/{name}":                            {summary: "Submit a job by name (idempotent)", in: job.JobSpec{}, out: job.Job{}, status: 201},
	"GET /api/v1/workspaces/{ws}/jobs":                                   {summary: "List jobs, newest first", out: list[job.Job]{}, query: []string{"status", "compute", "limit"}},
	"GET /api/v1/workspaces/{ws}/jobs/{name}":                            {summary: "Show a job with its reason and cost", out: job.Job{}},
	"PATCH /api/v1/workspaces/{ws}/jobs/{name}":                          {summary: "Change a job's display name, description or tags", in: client.JobUpdate{}, out: job.Job{}},
	"POST /api/v1/workspaces/{ws}/jobs/{name}/cancel":                    {summary: "Cancel a job", out: job.Job{}},
	"GET /api/v1/workspaces/{ws}/jobs/{name}/attempts":                   {summary: "A job's attempts", out: list[job.Attempt]{}},
	"GET /api/v1/workspaces/{ws}/jobs/{name}/events":                     {summary: "A job's event log", out: list[core.Event]{}},
	"GET /api/v1/workspaces/{ws}/jobs/{name}/logs":                       {summary: "A rank's output (text; follow=true streams)", query: []string{"rank", "attempt", "offset", "follow"}},
	"GET /api/v1/workspaces/{ws}/jobs/{name}/outputs":                    {summary: "A rank's outputs, or one output of them (a pipeline's from its step), as tar.gz", query: []string{"rank", "output"}},
	"POST /api/v1/workspaces/{ws}/components":                            {summary: "Register a command component's next version", in: job.Component{}, out: job.Component{}, status: 201},
	"GET /api/v1/workspaces/{ws}/components":                             {summary: "List registered components' versions, by name, newest first", out: list[job.Component]{}, query: []string{"name", "archived"}},
	"PUT /api/v1/workspaces/{ws}/components/{name}/versions/{version}":   {summary: "Register a version of a command component (idempotent)", in: job.Component{}, out: job.Component{}, status: 201},
	"GET /api/v1/workspaces/{ws}/components/{name}/versions/{version}":   {summary: "Show a version of a component", out: job.Component{}},
	"GET /api/v1/workspaces/{ws}/components/{name}/labels/{label}":       {summary: "Show a component's latest version (label latest)", out: job.Component{}},
	"POST /api/v1/workspaces/{ws}/components/{name}/archive":             {summary: "Archive a component's version, or every version", out: list[job.Component]{}, query: []string{"version"}},
	"POST /api/v1/workspaces/{ws}/components/{name}/restore":             {summary: "Restore a component's version, or every version", out: list[job.Component]{}, query: []string{"version"}},
	"GET /api/v1/workspaces/{ws}/jobs/{name}/metrics":                    {summary: "What a job logged through MLflow: each metric's last value, extremes and count, its parameters and tags (history=true: every point)", out: mlflowrun.JobMetrics{}, query: []string{"history"}},
	"POST /api/v1/workspaces/{ws}/environments":                          {summary: "Register an environment's next version", in: asset.Environment{}, out: asset.Environment{}, status: 201},
	"GET /api/v1/workspaces/{ws}/environments":                           {summary: "List registered environments' versions, by name, newest first", out: list[asset.Environment]{}, query: []string{"name", "archived"}},
	"PUT /api/v1/workspaces/{ws}/environments/{name}/versions/{version}": {summary: "Register a version of an environment (idempotent)", in: asset.Environment{}, out: asset.Environment{}, status: 201},
	"GET /api/v1/workspaces/{ws}/environments/{name}/versions/{version}": {summary: "Show a version of an environment", out: asset.Environment{}},
	"GET /api/v1/workspaces/{ws}/environments/{name}/labels/{label}":     {summary: "Show an environment's latest version (label latest)", out: asset.Environment{}},
	"POST /api/v1/workspaces/{ws}/environments/{name}/archive":           {summary: "Archive a version, or every version", out: list[asset.Environment]{}, query: []string{"version"}},
	"GET /api/v1/workspaces/{ws}/registries":                             {summary: "List the workspace's registry logins (never their passwords)", out: list[asset.Registry]{}},
	"POST /api/v1/workspaces/{ws}/registries":                            {summary: "Add or replace a registry login; the password is stored sealed and never answered", in: asset.RegistryAdd{}, out: asset.Registry{}, status: 201},
	"DELETE /api/v1/workspaces/{ws}/registries/{server}":                 {summary: "Remove a registry login", status: 204},
	"GET /api/v1/workspaces/{ws}/webhooks":                               {summary: "List the workspace's webhooks (Owners; never their secrets)", out: list[notify.Webhook]{}},
	"POST /api/v1/workspaces/{ws}/webhooks":                              {summary: "Create a webhook (Owners); the answer carries its signing secret, shown this once", in: notify.WebhookCreate{}, out: notify.WebhookCreated{}, status: 201},
	"GET /api/v1/workspaces/{ws}/webhooks/{name}":                        {summary: "Show a webhook (never its secret)", out: notify.Webhook{}},
	"DELETE /api/v1/workspaces/{ws}/webhooks/{name}":                     {summary: "Delete a webhook and its deliveries", status: 204},
	"GET /api/v1/workspaces/{ws}/webhooks/{name}/deliveries":             {summary: "A webhook's deliveries, newest first", out: list[notify.Delivery]{}, query: []string{"limit"}},
	"POST /api/v1/workspaces/{ws}/webhooks/{name}/test":                  {summary: "Queue a signed ping delivery to the webhook", out: notify.Delivery{}, status: 202},
	"POST /api/v1/workspaces/{ws}/webhooks/{name}/rotate-secret":         {summary: "Give the webhook a new signing secret, answered this once", out: notify.WebhookCreated{}},
	"GET /api/v1/workspaces/{ws}/datastores":                             {summary: "List the workspace's datastores, the built-ins included (never their credentials)", out: list[asset.Datastore]{}},
	"GET /api/v1/workspaces/{ws}/datastores/{name}":                      {summary: "Show a datastore (never its credentials)", out: asset.Datastore{}},
	"PUT /api/v1/workspaces/{ws}/datastores/{name}":                      {summary: "Create (201) or replace (200) a datastore from Azure's datastore YAML keys; credentials are stored sealed and never answered", in: datastoreDoc{}, out: asset.Datastore{}, status: 201},
	"DELETE /api/v1/workspaces/{ws}/datastores/{name}":                   {summary: "Delete a datastore (the built-ins cannot be)", status: 204},
	"POST /api/v1/workspaces/{ws}/environments/{name}/restore":           {summary: "Restore a version, or every version", out: list[asset.Environment]{}, query: []string{"version"}},
	"GET /api/v1/workspaces/{ws}/roleassignments":                        {summary: "Role assignments of the workspace", out: list[identity.RoleAssignment]{}},
	"POST /api/v1/workspaces/{ws}/roleassignments":                       {summary: "Grant a role", in: client.AssignmentRequest{}, out: identity.RoleAssignment{}, status: 201},
	"DELETE /api/v1/workspaces/{ws}/roleassignments":                     {summary: "Remove a role", status: 204, query: []string{"principal", "role"}},
	"GET /api/v1/users":                                                  {summary: "Users (administrators)", out: list[identity.User]{}},
	"POST /api/v1/users":                                                 {summary: "Create a user", in: identity.User{}, out: identity.User{}, status: 201},
	"GET /api/v1/users/{user}":                                           {summary: "A user (themselves or administrators)", out: identity.User{}},
	"POST /api/v1/users/{user}/disable":                                  {summary: "Disable a user", out: identity.User{}},
	"POST /api/v1/users/{user}/enable":                                   {summary: "Enable a user", out: identity.User{}},
	"GET /api/v1/users/{user}/tokens":                                    {summary: "A user's tokens", out: list[identity.APIToken]{}},
	"POST /api/v1/users/{user}/tokens":                                   {summary: "Create a token (shown once)", in: client.TokenCreateRequest{}, out: client.TokenCreateResponse{}, status: 201},
	"POST /api/v1/tokens/{id}/revoke":                                    {summary: "Revoke a token", out: identity.APIToken{}},
	"GET /api/v1/roles":                                                  {summary: "Built-in and custom roles", out: list[identity.RoleDefinition]{}},
	"POST /api/v1/roles":                                                 {summary: "Define a custom role", in: identity.RoleDefinition{}, out: identity.RoleDefinition{}, status: 201},
	"GET /api/v1/identities":                                             {summary: "Managed identities of the workspaces where the caller may read computes (all, for an administrator)", out: list[identity.Identity]{}},
	"POST /api/v1/identities":                                            {summary: "Create a user-assigned identity", in: client.IdentityCreateRequest{}, out: identity.Identity{}, status: 201},
	"GET /api/v1/audit":                                                  {summary: "The audit log (administrators)", out: list[identity.AuditRecord]{}, query: []string{"since", "principal", "target"}},
	"GET /api/v1/serviceprincipals":                                      {summary: "Service principals (administrators)", out: list[identity.ServicePrincipal]{}},
	"POST /api/v1/serviceprincipals":                                     {summary: "Create a service principal (secret shown once)", in: client.SPCreateRequest{}, out: client.SPCredentials{}, status: 201},
	"GET /api/v1/serviceprincipals/{sp}":                                 {summary: "A service principal", out: identity.ServicePrincipal{}},
	"POST /api/v1/serviceprincipals/{sp}/secret":                         {summary: "A new secret (the old one stops)", out: client.SPCredentials{}},
	"DELETE /api/v1/serviceprincipals/{sp}":                              {summary: "Delete a service principal", status: 204},
	"GET /api/v1/workspaces/{ws}/quotas":                                 {summary: "The workspace's vCPU limit and use per VM family", out: list[money.WorkspaceQuota]{}, query: []string{"location"}},
	"PUT /api/v1/workspaces/{ws}/quotas/{family}":                        {summary: "Set the workspace's limit of a VM family", in: client.QuotaSetRequest{}, out: money.QuotaUpdateResult{}, query: []string{"location"}},
	"GET /api/v1/workspaces/{ws}/cost":                                   {summary: "Node-seconds and cost, grouped", out: list[money.CostLine]{}, query: []string{"since", "group_by"}},
	"GET /api/v1/workspaces/{ws}/budgets":                                {summary: "Budgets with their spend this period", out: list[money.BudgetStatus]{}},
	"POST /api/v1/workspaces/{ws}/budgets":                               {summary: "Create or replace a budget", in: money.Budget{}, out: money.Budget{}, status: 201},
	"DELETE /api/v1/workspaces/{ws}/budgets":                             {summary: "Delete a budget", status: 204, query: []string{"name"}},
	"GET /api/v1/workspaces/{ws}/budgets/events":                         {summary: "The budgets' warnings at 50, 80 and 100 %", out: list[core.Event]{}},
	"GET /api/v1/openapi.json":                                           {summary: "This document"},
}

// openapiPath turns a route pattern's path into OpenAPI's: a trailing
// wildcard {path...} is the parameter {path}.
func openapiPath(p string) string { return strings.ReplaceAll(p, "...}", "}") }

// Route is what the document needs of one route of the route table.
type Route struct {
	// Pattern is the net/http pattern, "METHOD /path/{var}".
	Pattern string
	// Public routes need no credential.
	Public bool
}

// Document builds the OpenAPI 3 document of the native API (/api/v1) from
// the routes and apiDocs; sessionCookie names the studio's session cookie
// (the document's cookie security scheme).
func Document(routes []Route, sessionCookie string) map[string]any {
	sc := &schemas{defs: map[string]any{}}
	paths := map[string]map[string]any{}
	for _, r := range routes {
		method, path, _ := strings.Cut(r.Pattern, " ")
		if !strings.HasPrefix(path, "/api/v1/") {
			continue
		}
		path = openapiPath(path)
		d := apiDocs[method+" "+path]
		op := map[string]any{"summary": d.summary, "operationId": operationID(method, path)}
		var params []map[string]any
		for _, seg := range strings.Split(path, "/") {
			if strings.HasPrefix(seg, "{") {
				params = append(params, map[string]any{"name": strings.Trim(seg, "{}"), "in": "path", "required": true, "schema": map[string]any{"type": "string"}})
			}
		}
		for _, q := range d.query {
			params = append(params, map[string]any{"name": q, "in": "query", "schema": map[string]any{"type": "string"}})
		}
		if len(params) > 0 {
			op["parameters"] = params
		}
		if d.in != nil {
			op["requestBody"] = map[string]any{"required": true, "content": map[string]any{"application/json": map[string]any{"schema": sc.of(reflect.TypeOf(d.in))}}}
		}
		status := d.status
		if status == 0 {
			status = http.StatusOK
		}
		resp := map[string]any{"description": http.StatusText(status)}
		if d.out != nil {
			resp["content"] = map[string]any{"application/json": map[string]any{"schema": sc.of(reflect.TypeOf(d.out))}}
		}
		op["responses"] = map[string]any{
			strconv.Itoa(status): resp,
			"default":            map[string]any{"description": "An error in Azure's envelope", "content": map[string]any{"application/json": map[string]any{"schema": sc.of(reflect.TypeOf(httpx.ErrorBody{}))}}},
		}
		if !r.Public {
			op["security"] = []map[string][]string{{"bearer": {}}, {"session": {}}}
		}
		if paths[path] == nil {
			paths[path] = map[string]any{}
		}
		paths[path][strings.ToLower(method)] = op
	}
	return map[string]any{
		"openapi": "3.0.3",
		"info":    map[string]any{"title": "Shoal API", "version": "v1", "description": "Shoal's native API: the routes the CLI and the studio call. Azure's Resource Manager routes are documented by Azure's own specification."},
		"paths":   paths,
		"components": map[string]any{
			"schemas": sc.defs,
			"securitySchemes": map[string]any{
				"bearer":  map[string]any{"type": "http", "scheme": "bearer", "description": "An API token, a workload token, or a service principal's token"},
				"session": map[string]any{"type": "apiKey", "in": "cookie", "name": sessionCookie, "description": "The studio's session; changes also need the X-CSRF-Token header"},
			},
		},
	}
}

func operationID(method, path string) string {
	var b strings.Builder
	b.WriteString(strings.ToLower(method))
	for _, seg := range strings.Split(path, "/")[3:] {
		seg = strings.Trim(seg, "{}")
		if seg == "" {
			continue
		}
		b.WriteString(strings.ToUpper(seg[:1]) + seg[1:])
	}
	return b.String()
}

// DocumentedRoutes lists apiDocs' patterns, sorted (for the test).
func DocumentedRoutes() []string {
	out := make([]string, 0, len(apiDocs))
	for k := range apiDocs {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// datastoreDoc is what PUT datastores/{name} takes: the datastore's
// YAML keys and its credentials mapping, which no answer carries.
type datastoreDoc struct {
	asset.Datastore
	Credentials asset.Credentials `json:"credentials,omitempty"`
}
