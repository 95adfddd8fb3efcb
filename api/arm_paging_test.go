package api_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/arm"
)

// TestARMComputeListPages: the computes list comes in pages of
// arm.PageSize with an absolute nextLink; following the links yields
// every compute once, in name order, and a compute created between pages
// neither repeats one nor is skipped when it sorts after the position.
func TestARMComputeListPages(t *testing.T) {
	e := newTestEnv(t)
	const ws = "/subscriptions/s/resourceGroups/rg/providers/Microsoft.MachineLearningServices/workspaces/default"
	n := arm.PageSize*2 + 3
	for i := range n {
		doc := `{"size":"Standard_DS3_v2","max_instances":1}`
		if resp, body := do(t, e.ts, e.admin, "PUT", fmt.Sprintf("/api/v1/workspaces/default/computes/c%03d", i), doc, nil); resp.StatusCode != 201 {
			t.Fatalf("create c%03d: %d %v", i, resp.StatusCode, body)
		}
	}
	var names []string
	next := e.ts.URL + ws + "/computes?api-version=2024-04-01"
	pages := 0
	// The nextLink is on the server's configured URL (the test
	// environment's, http://shoal.test), never the request's Host.
	const public = "http://shoal.test"
	for next != "" {
		resp, body := do(t, e.ts, e.admin, "GET", strings.TrimPrefix(strings.TrimPrefix(next, e.ts.URL), public), "", nil)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d %v", next, resp.StatusCode, body)
		}
		pages++
		for _, v := range body["value"].([]any) {
			names = append(names, v.(map[string]any)["name"].(string))
		}
		next, _ = body["nextLink"].(string)
		if next != "" && !strings.HasPrefix(next, public+ws+"/computes?") {
			t.Fatalf("nextLink %q is not absolute", next)
		}
		if pages == 1 {
			// Created after the first page, sorting after it: listed once.
			do(t, e.ts, e.admin, "PUT", "/api/v1/workspaces/default/computes/zz-late", `{"size":"Standard_DS3_v2","max_instances":1}`, nil)
		}
	}
	if pages != 3 || len(names) != n+1 || names[0] != "c000" || names[len(names)-1] != "zz-late" {
		t.Fatalf("%d pages, %d names (%v…%v), want 3 pages of %d computes", pages, len(names), names[0], names[len(names)-1], n+1)
	}
	for i := 1; i < len(names); i++ {
		if names[i] <= names[i-1] {
			t.Fatalf("names out of order or repeated at %d: %s after %s", i, names[i], names[i-1])
		}
	}
	if resp, body := do(t, e.ts, e.admin, "GET", ws+"/computes?api-version=2024-04-01&$skip=not*base64", "", nil); resp.StatusCode != 400 {
		t.Errorf("a bad $skip: %d %v", resp.StatusCode, body["error"])
	}
}
