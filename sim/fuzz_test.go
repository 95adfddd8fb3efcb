package sim

import (
	"bytes"
	"testing"
	"time"
)

// FuzzTraces: any bytes as either trace format are refused or read, and
// what is read replays.
func FuzzTraces(f *testing.F) {
	f.Add([]byte("submit_time,duration,instance_count\n0,60,1\n5,1,2\n"))
	f.Add([]byte("name,num_gpu,creation_time,deletion_time,scheduled_time\np,1,0,10,5\np2,1,3,,\n"))
	f.Add([]byte("0,1e308\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, read := range []func() ([]Job, error){
			func() ([]Job, error) { return ReadSimple(bytes.NewReader(data)) },
			func() ([]Job, error) { return ReadAlibaba(bytes.NewReader(data), Filter{GPUs: -1}) },
		} {
			jobs, err := read()
			if err != nil || len(jobs) == 0 || len(jobs) > 50 {
				continue
			}
			for i := range jobs {
				jobs[i].Nodes = min(jobs[i].Nodes, 8)
				jobs[i].Duration = min(jobs[i].Duration, 1000*time.Hour)
				jobs[i].Submit = min(jobs[i].Submit, 1000*time.Hour)
			}
			sortJobs(jobs)
			if _, err := Run(jobs, Config{MaxInstances: 8, IdleTimeBeforeScaleDown: time.Minute, ProvisionDelay: time.Minute}); err != nil {
				t.Fatalf("replay of a trace that read: %v", err)
			}
		}
	})
}
