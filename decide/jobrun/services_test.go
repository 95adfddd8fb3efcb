package jobrun_test

import (
	"reflect"
	"testing"

	"github.com/shoal-ml/shoal/decide/jobrun"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/job/interactive"
	"github.com/shoal-ml/shoal/domain/node"
)

// A Running report carrying the node's services keeps them on the rank
// when they changed (a running rank's too), and changes nothing when
// they are the same; a Running report without services leaves the last
// ones.
func TestStepKeepsReportedServices(t *testing.T) {
	web := []interactive.ServiceInstance{{Name: "web", Type: interactive.ServiceCustom, Port: 8080, Status: interactive.ServiceStatusRunning, Addr: "127.0.0.1:8080"}}
	j, a := fixture(job.JobRunning, job.AttemptRunning, "n0")
	out, err := jobrun.Step(j, a, reportWith(0, node.RankReport{State: node.RankRunning, Services: web}), t0)
	if err != nil {
		t.Fatal(err)
	}
	if !out.Changed || !reflect.DeepEqual(out.Attempt.Ranks[0].Services, web) {
		t.Fatalf("services reported on a running rank: changed %v, kept %+v", out.Changed, out.Attempt.Ranks[0].Services)
	}
	again, err := jobrun.Step(&out.Job, out.Attempt, reportWith(0, node.RankReport{State: node.RankRunning, Services: web}), t0)
	if err != nil {
		t.Fatal(err)
	}
	if again.Changed {
		t.Errorf("the same services again changed the job")
	}
	plain, err := jobrun.Step(&out.Job, out.Attempt, report(0, node.RankRunning, nil), t0)
	if err != nil {
		t.Fatal(err)
	}
	if plain.Changed || !reflect.DeepEqual(plain.Attempt.Ranks[0].Services, web) {
		t.Errorf("a Running report without services: changed %v, services %+v", plain.Changed, plain.Attempt.Ranks[0].Services)
	}
	// A preparing rank's first report with services starts it too.
	j, a = fixture(job.JobPreparing, job.AttemptPreparing, "n0")
	out, err = jobrun.Step(j, a, reportWith(0, node.RankReport{State: node.RankRunning, Services: web}), t0)
	if err != nil {
		t.Fatal(err)
	}
	if out.Job.Status != job.JobRunning || len(out.Attempt.Ranks[0].Services) != 1 {
		t.Errorf("first report with services: job %s, services %+v", out.Job.Status, out.Attempt.Ranks[0].Services)
	}
}
