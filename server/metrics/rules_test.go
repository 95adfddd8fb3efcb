package metrics_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/internal/testenv"
)

// The shipped rules load in Prometheus (promtool check rules) and each
// fires on the series it is written for, and only then (promtool test
// rules over docs/operations/alerts.tests.yml: series in, alerts out).
func TestAlertRules(t *testing.T) {
	_, promtool := testenv.Prometheus(t)
	dir := filepath.Join("..", "..", "docs", "operations")
	for _, args := range [][]string{{"check", "rules", "alerts.yml"}, {"test", "rules", "alerts.tests.yml"}} {
		cmd := exec.Command(promtool, args...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "SUCCESS") {
			t.Errorf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}

// Every rule of alerts.yml has a case in alerts.tests.yml and a section
// in alerts.md (TestAlertMetrics checks that the metrics they read are
// exported).
func TestAlertRulesAreTestedAndDocumented(t *testing.T) {
	rules, tests, doc := readDoc(t, "alerts.yml"), readDoc(t, "alerts.tests.yml"), readDoc(t, "alerts.md")
	n := 0
	for _, line := range strings.Split(rules, "\n") {
		name, ok := strings.CutPrefix(strings.TrimSpace(line), "- alert: ")
		if !ok {
			continue
		}
		n++
		if !strings.Contains(tests, "alertname: "+name+"\n") {
			t.Errorf("rule %s has no case in alerts.tests.yml", name)
		}
		if !strings.Contains(doc, "## "+name) {
			t.Errorf("rule %s has no section in alerts.md", name)
		}
	}
	if n < 8 {
		t.Fatalf("alerts.yml has %d rules, want at least 8", n)
	}
}

func readDoc(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "operations", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
