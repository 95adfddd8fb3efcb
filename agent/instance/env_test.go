package instance

import (
	"slices"
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/agent/runas"
	"github.com/shoal-ml/shoal/domain/node"
)

// An instance's processes get the path, locale and the like of the agent's
// environment, never the rest: it is the server's, which can hold a
// database password or a cloud credential.
func TestInstanceEnvironmentIsAnAllowlist(t *testing.T) {
	t.Setenv("PGPASSWORD", "the store's")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "the operator's")
	t.Setenv("LANG", "C.UTF-8")
	a := newTestAgent(t, Node{Accounts: runas.Unisolated(), NodeID: "n"}, "")
	rt := &Runtime{n: a.Node, dir: a.WorkDir, home: a.WorkDir + "/home", task: &node.InstanceTask{Workspace: "ws", Name: "ci"}}
	env := rt.baseEnv()
	for _, kv := range env {
		if strings.HasPrefix(kv, "PGPASSWORD=") || strings.HasPrefix(kv, "AWS_SECRET_ACCESS_KEY=") {
			t.Errorf("the instance's environment carries %s", kv)
		}
	}
	if !slices.Contains(env, "LANG=C.UTF-8") || !slices.ContainsFunc(env, func(kv string) bool { return strings.HasPrefix(kv, "PATH=") }) {
		t.Errorf("the instance's environment lacks the path or the locale: %q", env)
	}
}
