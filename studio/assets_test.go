package studio_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/domain/asset"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/identity"
	"github.com/shoal-ml/shoal/service/dataassets"
	"github.com/shoal-ml/shoal/service/models"
	"github.com/shoal-ml/shoal/service/versioned"
)

// The data and models pages list versions and show one, escaping what a
// user wrote; a Reader reads them, a user without a role in the workspace
// is refused; archived versions are listed only when asked.
func TestDataAndModelPages(t *testing.T) {
	ts, token, svc := newServerWithServices(t)
	admin := as(t, svc, token)
	stores := versioned.Stores{Store: svc.Store(), Artifacts: svc.Files()}
	data, mods := dataassets.New(stores), models.New(stores)
	for _, d := range []*asset.Data{
		{Workspace: core.DefaultWorkspace, Name: "iris", Type: "uri_file", Path: "https://example.com/iris.csv", Description: `<script>alert(1)</script>`, Tags: map[string]string{"src": "uci"}},
		{Workspace: core.DefaultWorkspace, Name: "iris", Path: "s3://bucket/iris/"},
	} {
		if _, _, err := data.Create(admin, d); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := data.Archive(admin, core.DefaultWorkspace, "iris", "2", true); err != nil {
		t.Fatal(err)
	}
	if _, _, err := mods.Create(admin, &asset.Model{Workspace: core.DefaultWorkspace, Name: "clf", Type: "mlflow_model", Path: "s3://models/clf/",
		Flavors: map[string]map[string]string{"python_function": {"loader_module": "mlflow.sklearn"}}}); err != nil {
		t.Fatal(err)
	}
	rita := userWithRole(t, svc, admin, "rita", "Reader")

	status, body := page(t, ts, "/data", rita)
	if status != http.StatusOK || !strings.Contains(body, `href="/data/iris/versions/1"`) || strings.Contains(body, "s3://bucket/iris/") {
		t.Fatalf("data list as a Reader: %d\n%s", status, body)
	}
	if _, body := page(t, ts, "/data?archived=true", rita); !strings.Contains(body, "s3://bucket/iris/") {
		t.Errorf("the archived version is not listed when asked")
	}
	status, body = page(t, ts, "/data/iris/versions/1", rita)
	if status != http.StatusOK || !strings.Contains(body, "https://example.com/iris.csv") || !strings.Contains(body, "uci") ||
		strings.Contains(body, "<script>alert(1)") || !strings.Contains(body, "&lt;script&gt;") {
		t.Fatalf("data version page: %d\n%s", status, body)
	}
	if status, _ := page(t, ts, "/data/iris/versions/9", rita); status != http.StatusNotFound {
		t.Errorf("a missing version: %d", status)
	}
	status, body = page(t, ts, "/models/clf/versions/1", rita)
	if status != http.StatusOK || !strings.Contains(body, "mlflow_model") || !strings.Contains(body, "mlflow.sklearn") {
		t.Fatalf("model version page: %d\n%s", status, body)
	}
	if _, body := page(t, ts, "/models", token); !strings.Contains(body, `href="/models/clf/versions/1"`) {
		t.Errorf("models list lacks clf")
	}

	// A user with no role in the workspace reads none of it.
	if _, err := svc.CreateUser(admin, &identity.User{Name: "nobody"}); err != nil {
		t.Fatal(err)
	}
	_, nobody, err := svc.CreateToken(admin, "nobody", "studio", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/data", "/data/iris/versions/1", "/models", "/models/clf/versions/1"} {
		if status, body := page(t, ts, p, nobody); status != http.StatusForbidden || strings.Contains(body, "example.com") {
			t.Errorf("%s without a role: %d", p, status)
		}
	}
}
