package testk8s

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// AgentImage is the agent image tests of the kubernetes provider use:
// the static shoal binary at /shoal and nothing else, what
// images/agent/Containerfile builds (FROM scratch).
const AgentImage = "shoal.test/agent:1"

var (
	agentOnce sync.Once
	agentTar  string
	agentErr  error
)

// ImportAgentImage builds the shoal binary of the module the test runs
// in, statically (CGO_ENABLED=0: the image has no libc), once per test
// process, writes it as AgentImage and imports it into the cluster. It
// returns the binary's path.
func (c *Cluster) ImportAgentImage(t testing.TB) string {
	t.Helper()
	agentOnce.Do(func() { agentTar, agentErr = buildAgentImage() })
	if agentErr != nil {
		t.Fatalf("agent image: %v", agentErr)
	}
	c.ImportImage(t, agentTar)
	return filepath.Join(filepath.Dir(agentTar), "shoal")
}

// buildAgentImage builds the binary and the image archive in a
// directory of its own (left for the OS's temp cleaning: the process's
// tests share it).
func buildAgentImage() (string, error) {
	dir, err := os.MkdirTemp("", "shoal-agent-image-")
	if err != nil {
		return "", err
	}
	root, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}").Output()
	if err != nil {
		return "", fmt.Errorf("go list -m: %w", err)
	}
	bin := filepath.Join(dir, "shoal")
	build := exec.Command("go", "build", "-o", bin, "./cmd/shoal-server")
	build.Dir = strings.TrimSpace(string(root))
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/shoal-server (CGO_ENABLED=0): %v: %s", err, out)
	}
	data, err := os.ReadFile(bin)
	if err != nil {
		return "", err
	}
	tar := filepath.Join(dir, "agent.tar")
	files := []ImageFile{{Path: "/shoal", Mode: 0o755, Data: data}}
	if err := WriteImage(tar, AgentImage, ImageConfig{Entrypoint: []string{"/shoal"}}, files); err != nil {
		return "", err
	}
	return tar, nil
}
