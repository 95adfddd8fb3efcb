package armcompute

import "testing"

// FuzzFromResource: any body is an ARM compute resource or a field error,
// never a crash; what decodes carries a name.
func FuzzFromResource(f *testing.F) {
	for _, s := range []string{
		`{"properties":{"computeType":"AmlCompute","properties":{"vmSize":"Standard_DS3_v2","scaleSettings":{"maxNodeCount":2,"minNodeCount":0,"nodeIdleTimeBeforeScaleDown":"PT2M"}}}}`,
		`{"properties":{"computeType":"ComputeInstance","properties":{"vmSize":"Standard_DS3_v2","idleTimeBeforeShutdown":"PT30M","setupScripts":{"scripts":{"creationScript":{"scriptArguments":"echo","timeout":"5m"}}},"schedules":{"computeStartStop":[{"action":"Stop","triggerType":"Cron","cron":{"expression":"0 18 * * *","timeZone":"UTC"}}]}}}}`,
		`{"identity":{"type":"SystemAssigned,UserAssigned","userAssignedIdentities":{"/x/userAssignedIdentities/a":{}}},"properties":{"computeType":"AmlCompute"}}`,
		`{"properties":{"computeType":"AmlCompute","properties":{"scaleSettings":{"maxNodeCount":1,"nodeIdleTimeBeforeScaleDown":"PT2251799813685249H"}}}}`,
		`{}`, `null`, `[1]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		spec, err := FromResource("fuzz-c", data)
		if err == nil && (spec == nil || spec.Name == "") {
			t.Fatalf("decoded without a name: %+v", spec)
		}
		if err == nil && spec.IdleTimeBeforeScaleDown != nil && *spec.IdleTimeBeforeScaleDown < 0 {
			t.Fatalf("idle time wrapped to %d s", *spec.IdleTimeBeforeScaleDown)
		}
	})
}
