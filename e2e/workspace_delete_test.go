package e2e_test

import (
	"strings"
	"testing"
	"time"
)

// A typo in -w on a write is refused with the command that creates the
// workspace (it used to create one silently), and `workspace delete`
// refuses while computes remain, then deletes and is audited.
func TestWorkspaceTypoAndDelete(t *testing.T) {
	t.Parallel()
	s := startServer(t, serverOpts{})
	stderr, _ := mustFail(t, s.env, "compute", "create", "--name", "cpu1", "-w", "defualt")
	for _, want := range []string{`workspace "defualt" not found`, `did you mean "default"?`, "shoal workspace create -n defualt"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("create in -w defualt: %q does not say %s", stderr, want)
		}
	}
	if out := mustRun(t, s.env, "workspace", "list", "-o", "json"); strings.Contains(out, "defualt") {
		t.Fatalf("the refused write created the workspace: %s", out)
	}

	mustRun(t, s.env, "workspace", "create", "-n", "team", "-o", "none")
	mustRun(t, s.env, "compute", "create", "--name", "cpu1", "-w", "team", "-o", "none")
	stderr, _ = mustFail(t, s.env, "workspace", "delete", "-n", "team", "--yes")
	if !strings.Contains(stderr, "1 compute (cpu1)") {
		t.Errorf("delete with a compute left: %q", stderr)
	}
	mustRun(t, s.env, "compute", "delete", "-n", "cpu1", "-w", "team", "--yes", "-o", "none")
	waitFor(t, 30*time.Second, "cpu1 to be deleted", func() (bool, string) {
		_, _, code := run(t, s.env, "compute", "show", "-n", "cpu1", "-w", "team")
		return code != 0, "still there"
	})
	_, stderr, code := run(t, s.env, "workspace", "delete", "-n", "team", "--yes")
	if code != 0 || !strings.Contains(stderr, `Deleted workspace "team"`) {
		t.Fatalf("workspace delete: exit %d, %q", code, stderr)
	}
	if out := mustRun(t, s.env, "workspace", "list", "-o", "json"); strings.Contains(out, `"team"`) {
		t.Fatalf("team still listed: %s", out)
	}
	audit := runJSON[[]auditRecord](t, s.env, "audit", "list", "-o", "json")
	found := false
	for _, a := range audit {
		if a.Action == "workspaces/delete" && a.Outcome == "succeeded" && a.Target == "workspaces/team" {
			found = true
		}
	}
	if !found {
		t.Errorf("no audit record of the delete: %+v", audit)
	}
}
