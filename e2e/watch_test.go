package e2e_test

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// The server's notifications.queue_wait_threshold reaches its watch loop:
// a job held behind another on a one-node cluster past the threshold
// gets one queued_too_long event naming its wait reason, which `shoal job
// events` shows.
func TestQueuedTooLongEventFromTheServersThreshold(t *testing.T) {
	t.Parallel()
	s := startServer(t, serverOpts{Config: fastJobsConfig + "notifications:\n  queue_wait_threshold: 2s\n"})
	createCluster(t, s, "narrow", "--max-instances", "1", "--idle-time-before-scale-down", "60")
	long := writeJobFile(t, "type: command\ncommand: sleep 120\ncompute: azureml:narrow\n")
	first := submitJob(t, s, long)
	waitJob(t, s, first, 60*time.Second, "Running")
	second := submitJob(t, s, long)
	var told []map[string]any
	waitFor(t, 60*time.Second, "a queued_too_long event on "+second, func() (bool, string) {
		told = told[:0]
		events := runJSON[[]map[string]any](t, s.env, "job", "events", "-n", second, "-o", "json")
		for _, e := range events {
			if e["kind"] == "queued_too_long" {
				told = append(told, e)
			}
		}
		return len(told) > 0, fmt.Sprint(events)
	})
	reason := jsonStr(told[0]["reason"])
	for _, want := range []string{"job " + second + " has been queued on narrow for", "over the 2s threshold", "at_max_instances"} {
		if !strings.Contains(reason, want) {
			t.Errorf("queued_too_long reason %q lacks %q", reason, want)
		}
	}
	if len(told) != 1 {
		t.Errorf("%d queued_too_long events, want one: %v", len(told), told)
	}
	// The first job started at once: it is not told.
	for _, e := range runJSON[[]map[string]any](t, s.env, "job", "events", "-n", first, "-o", "json") {
		if e["kind"] == "queued_too_long" {
			t.Errorf("the job that started at once was told queued_too_long: %v", e)
		}
	}
}
