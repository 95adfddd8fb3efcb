package api_test

import (
	"encoding/json"
	"net/http"
	"sort"
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/api"
)

// The OpenAPI document at /api/v1/openapi.json and the route table agree:
// every /api/v1 route is documented with a summary (a new route without
// documentation fails here), every documented route exists, and every
// schema reference resolves.
func TestOpenAPIMatchesRoutes(t *testing.T) {
	e := newTestEnv(t)
	resp, err := http.Get(e.ts.URL + "/api/v1/openapi.json")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET openapi.json: %v %v", resp, err)
	}
	var doc struct {
		OpenAPI    string                               `json:"openapi"`
		Paths      map[string]map[string]map[string]any `json:"paths"`
		Components struct {
			Schemas map[string]any `json:"schemas"`
		} `json:"components"`
	}
	raw := new(strings.Builder)
	if err := json.NewDecoder(resp.Body).Decode(&doc); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if doc.OpenAPI != "3.0.3" {
		t.Errorf("openapi %q", doc.OpenAPI)
	}
	inDoc := map[string]bool{}
	for path, ops := range doc.Paths {
		for method, op := range ops {
			inDoc[strings.ToUpper(method)+" "+path] = true
			if s, _ := op["summary"].(string); s == "" {
				t.Errorf("%s %s has no summary: document it in apiDocs (api/openapi.go)", strings.ToUpper(method), path)
			}
		}
	}
	inRoutes := map[string]bool{}
	for _, r := range e.srv.Routes() {
		method, path, _ := strings.Cut(r.Pattern, " ")
		if strings.HasPrefix(path, "/api/v1/") {
			inRoutes[method+" "+strings.ReplaceAll(path, "...}", "}")] = true
		}
	}
	for k := range inRoutes {
		if !inDoc[k] {
			t.Errorf("route %s is not in the OpenAPI document", k)
		}
	}
	for _, k := range api.DocumentedRoutes() {
		if !inRoutes[k] {
			t.Errorf("the OpenAPI document describes %s, which is no route", k)
		}
	}
	// References resolve.
	b, _ := json.Marshal(doc)
	raw.Write(b)
	var refs []string
	for _, part := range strings.Split(raw.String(), `"$ref":"#/components/schemas/`)[1:] {
		refs = append(refs, part[:strings.Index(part, `"`)])
	}
	sort.Strings(refs)
	for _, r := range refs {
		if _, ok := doc.Components.Schemas[r]; !ok {
			t.Errorf("reference to missing schema %s", r)
		}
	}
	if len(inRoutes) < 60 || len(doc.Components.Schemas) < 20 {
		t.Errorf("%d routes, %d schemas: the document looks empty", len(inRoutes), len(doc.Components.Schemas))
	}
}
