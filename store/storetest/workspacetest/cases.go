// Package workspacetest is the store conformance suite's part for a
// workspace and what hangs off it: workspaces, their settings, budgets,
// quotas and limits, server settings, events, waiting reasons, instances'
// live state, job schedules, webhooks and their deliveries (storetest.Run
// runs it with the rest).
package workspacetest

import "github.com/shoal-ml/shoal/store/storetest/stcheck"

// Cases are this part's tests, for storetest.Run.
func Cases() []stcheck.Case {
	return []stcheck.Case{
		{Name: "Workspaces", Fn: testWorkspaces},
		{Name: "Events", Fn: testEvents},
		{Name: "Settings", Fn: testSettings},
		{Name: "InstanceLive", Fn: testInstanceLive},
		{Name: "WaitReasons", Fn: testWaitReasons},
		{Name: "Budgets", Fn: testBudgets},
		{Name: "WorkspaceQuotas", Fn: testWorkspaceQuotas},
		{Name: "WorkspaceLimits", Fn: testWorkspaceLimits},
		{Name: "Webhooks", Fn: testWebhooks},
		{Name: "Deliveries", Fn: testDeliveries},
		{Name: "NotifyCursors", Fn: testNotifyCursors},
		{Name: "TrimDeliveries", Fn: testTrimDeliveries},
		{Name: "JobSchedules", Fn: testJobSchedules},
	}
}
