package e2e_test

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

const seed002 = "002 Microsoft Learn: Create an Azure Machine Learning compute instance"

// instanceSeed is one compute instance example of seed 002, held as a
// testdata file (testdata/instances): a YAML document, the Python
// ComputeInstance(...) arguments written as YAML, or the az flags (.args,
// one argument per line, run with shoal instead of az ml).
type instanceSeed struct {
	Name, Form, File string
	// Check looks at what show returns.
	Check func(t *testing.T, v instanceView)
}

var instanceSeeds = []instanceSeed{
	{Name: "basic-yaml", Form: "YAML create-instance.yml", File: "basic-example-i.yml",
		Check: func(t *testing.T, v instanceView) { wantEq(t, "type", v.Type, "computeinstance") }},
	{Name: "basic-python", Form: `ComputeInstance(name=ci_basic_name, size="STANDARD_DS3_v2")`, File: "basic-ci-python.yml",
		Check: func(t *testing.T, v instanceView) { wantEq(t, "name", v.Name, "basic-ci202611221200") }},
	{Name: "idle-yaml", Form: "idle_time_before_shutdown_minutes: 30", File: "idle-shutdown.yml",
		Check: func(t *testing.T, v instanceView) { wantIdle(t, v, 30) }},
	{Name: "idle-python", Form: `ComputeInstance(..., idle_time_before_shutdown_minutes="30")`, File: "idle-shutdown-python.yml",
		Check: func(t *testing.T, v instanceView) { wantIdle(t, v, 30) }},
	{Name: "idle-legacy", Form: `idle_time_before_shutdown: "PT30M"`, File: "idle-shutdown-legacy.yml",
		Check: func(t *testing.T, v instanceView) { wantIdle(t, v, 30) }},
	{Name: "schedule-yaml", Form: "schedules: cron 0 18 * * * Pacific Standard Time", File: "schedule-example-i.yml",
		Check: func(t *testing.T, v instanceView) {
			if v.Schedules == nil || len(v.Schedules.ComputeStartStop) != 1 || v.Schedules.ComputeStartStop[0]["action"] != "stop" {
				t.Errorf("schedules %+v", v.Schedules)
			}
		}},
	{Name: "schedule-python", Form: "RecurrenceTrigger(frequency=week, Friday 15:30, India Standard Time), action=start", File: "schedule-python.yml",
		Check: func(t *testing.T, v instanceView) {
			if v.Schedules == nil || len(v.Schedules.ComputeStartStop) != 1 || v.Schedules.ComputeStartStop[0]["action"] != "start" {
				t.Errorf("schedules %+v", v.Schedules)
			}
		}},
	{Name: "identity-user-assigned-yaml", Form: "identity: user_assigned (compute.yaml)", File: "identity-user-assigned.yml"},
	{Name: "identity-system-assigned-flags", Form: "az ml compute create --name myinstance --identity-type SystemAssigned --type ComputeInstance ...", File: "identity-system-assigned.args"},
	{Name: "create-on-behalf-of", Form: "create on behalf of (assigned user), setup script", File: "create-on-behalf-of.yml",
		Check: func(t *testing.T, v instanceView) {
			wantEq(t, "assigned_user", v.AssignedUser, "alice")
			if v.EnableSSO == nil || *v.EnableSSO {
				t.Errorf("SSO %v; want disabled until alice enables it", v.EnableSSO)
			}
		}},
	{Name: "setup-scripts", Form: "setup_scripts (creation and startup)", File: "setup-scripts.yml"},
	{Name: "custom-application-command", Form: "custom application (command on this provider)", File: "custom-app-command.yml"},
}

func wantEq(t *testing.T, field, got, want string) {
	t.Helper()
	if got != want {
		t.Errorf("%s = %q, want %q", field, got, want)
	}
}

func wantIdle(t *testing.T, v instanceView, m int) {
	t.Helper()
	if v.IdleMinutes == nil || *v.IdleMinutes != m {
		t.Errorf("idle_time_before_shutdown_minutes = %v, want %d", v.IdleMinutes, m)
	}
}

// TestInstanceSeedExamples creates every compute instance example of seed
// 002, unchanged but for the command name, and checks what show returns.
func TestInstanceSeedExamples(t *testing.T) {
	t.Parallel()
	s := startServer(t, serverOpts{Config: fastJobsConfig})
	mustRun(t, s.env, "user", "create", "--name", "alice", "-o", "none")
	// An instance is created only for a member of its workspace.
	mustRun(t, s.env, "role", "assign", "--user", "alice", "--role", "Reader", "-o", "none")
	mustRun(t, s.env, "identity", "create", "--name", "identity_resource_id", "-o", "none")
	createWorkspaces(t, s.env, "my-workspace")
	for _, ex := range instanceSeeds {
		t.Run(ex.Name, func(t *testing.T) {
			path := instanceFile(t, ex.File)
			var args []string
			name := ""
			env := s.env
			if strings.HasSuffix(ex.File, ".args") {
				b, _ := os.ReadFile(path)
				args = strings.Fields(string(b))
				for i, a := range args {
					if a == "--name" {
						name = args[i+1]
					}
				}
			} else {
				args = []string{"compute", "create", "-f", path}
				b, _ := os.ReadFile(path)
				for _, line := range strings.Split(string(b), "\n") {
					if v, ok := strings.CutPrefix(line, "name: "); ok {
						name = strings.TrimSpace(v)
					}
				}
			}
			mustRun(t, env, append(args, "-o", "none")...)
			showArgs := []string{"compute", "show", "-n", name, "-o", "json"}
			if i := indexOf(args, "--workspace-name"); i >= 0 {
				showArgs = append(showArgs, "--workspace-name", args[i+1])
			}
			v := runJSON[instanceView](t, env, showArgs...)
			if v.State != "Running" || v.Type != "computeinstance" {
				t.Fatalf("%s (%s): %s", ex.Form, ex.File, v)
			}
			if ex.Check != nil {
				ex.Check(t, v)
			}
			// Instance names are unique across the location: the next
			// example may reuse this one's name.
			delArgs := append([]string{"compute", "delete", "-n", name, "--yes"}, showArgs[len(showArgs)-2:]...)
			if showArgs[len(showArgs)-2] != "--workspace-name" {
				delArgs = []string{"compute", "delete", "-n", name, "--yes"}
			}
			mustRun(t, env, delArgs...)
			waitFor(t, 20*time.Second, name+" to be deleted", func() (bool, string) {
				_, _, code := run(t, env, showArgs...)
				return code != 0, "still there"
			})
		})
	}

	// The seed's RStudio application is a Docker image: it runs in a
	// container beside the instance. ghcr.io is out of reach here, so the
	// instance runs and the application says why it does not (the pull,
	// or a host without a runtime), naming the image: never skipped.
	mustRun(t, s.env, "compute", "create", "-f", instanceFile(t, "custom-app-rstudio.yml"), "-o", "none")
	type appView struct {
		Applications []struct {
			DisplayName string `json:"display_name"`
			Running     bool   `json:"running"`
			Error       string `json:"error"`
		} `json:"applications"`
	}
	waitFor(t, 2*time.Minute, "the RStudio application to report why it does not run", func() (bool, string) {
		v := runJSON[appView](t, s.env, "compute", "show", "-n", "rstudio-example-i", "-o", "json")
		for _, a := range v.Applications {
			if a.DisplayName == "rstudio" && !a.Running && strings.Contains(a.Error, "ghcr.io/azure/rocker-rstudio-ml-verse:latest") {
				return true, ""
			}
		}
		return false, fmt.Sprintf("%+v", v)
	})
	mustRun(t, s.env, "compute", "delete", "-n", "rstudio-example-i", "--yes")
}

func indexOf(l []string, s string) int {
	for i, x := range l {
		if x == s {
			return i
		}
	}
	return -1
}
