package app

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The server config's metrics_public reaches /metrics: with it, anyone
// scrapes; without it, an anonymous scrape is refused (401) and the
// admin's token is needed.
func TestMetricsPublicConfig(t *testing.T) {
	for _, public := range []bool{false, true} {
		dir := t.TempDir()
		cfgPath := filepath.Join(dir, "shoal.yaml")
		doc := "metrics_public: false\n"
		if public {
			doc = "metrics_public: true\n"
		}
		if err := os.WriteFile(cfgPath, []byte(doc), 0o600); err != nil {
			t.Fatal(err)
		}
		m, err := Start(t.Context(), Options{Listen: "127.0.0.1:0", DataDir: filepath.Join(dir, "data"), ConfigPath: cfgPath, ClientConfigPath: "-"})
		if err != nil {
			t.Fatal(err)
		}
		scrape := func(token string) (int, string) {
			req, _ := http.NewRequest("GET", m.URL()+"/metrics", nil)
			if token != "" {
				req.Header.Set("Authorization", "Bearer "+token)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			return resp.StatusCode, string(b)
		}
		status, body := scrape("")
		switch {
		case public && (status != http.StatusOK || !strings.Contains(body, "go_goroutines")):
			t.Errorf("metrics_public: true: anonymous /metrics: %d %.200s, want 200 with the metrics", status, body)
		case !public && status != http.StatusUnauthorized:
			t.Errorf("metrics_public: false: anonymous /metrics: %d %.200s, want 401", status, body)
		}
		if !public {
			token, err := os.ReadFile(filepath.Join(dir, "data", "admin.token"))
			if err != nil {
				t.Fatal(err)
			}
			if status, body := scrape(strings.TrimSpace(string(token))); status != http.StatusOK || !strings.Contains(body, "go_goroutines") {
				t.Errorf("metrics_public: false: the admin's /metrics: %d %.200s, want 200", status, body)
			}
		}
		if err := m.Close(); err != nil {
			t.Error(err)
		}
	}
}
