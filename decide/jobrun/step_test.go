package jobrun_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/decide/jobrun"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/node"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func ip(i int) *int { return &i }

// fixture is a job on its first attempt over the given nodes, every rank
// and the attempt in status st, the job in jobStatus.
func fixture(jobStatus, st string, nodes ...string) (*job.Job, *job.Attempt) {
	j := &job.Job{Workspace: "w", Status: jobStatus, CurrentAttemptID: "a1"}
	j.Name = "j"
	a := &job.Attempt{ID: "a1", JobName: "j", Workspace: "w", Number: 1, Status: st}
	for i, n := range nodes {
		a.Ranks = append(a.Ranks, &job.RankStatus{Rank: i, NodeID: n, Status: st})
	}
	return j, a
}

func report(rank int, state string, exit *int) jobrun.Event {
	return jobrun.Event{Kind: jobrun.RankReport, Rank: rank, Report: &node.RankReport{State: state, ExitCode: exit}}
}

func reportWith(rank int, rep node.RankReport) jobrun.Event {
	return jobrun.Event{Kind: jobrun.RankReport, Rank: rank, Report: &rep}
}

// imageFailed is a node's report that the rank's image could not be had.
func imageFailed(state string) node.RankReport {
	return node.RankReport{State: state, ExitCode: ip(-1), Failure: node.RankImageFailed,
		Reason: "pull localhost:5000/team/train:3: manifest unknown"}
}

// pulling is a preparing report of a pull that has done done of 216 MB.
func pulling(done int) node.RankReport {
	return node.RankReport{State: node.RankPreparing, Reason: fmt.Sprintf("pulling localhost:5000/team/train:3 — %d of 216 MB", done)}
}

func codes(o jobrun.Output) []jobrun.Code {
	var c []jobrun.Code
	for _, e := range o.Events {
		c = append(c, e.Code)
	}
	return c
}

func TestStep(t *testing.T) {
	type want struct {
		job, attempt  string
		rank0         string
		free, preempt bool
		ended         bool
		requeued      bool
		retrySpent    bool
		wake          []string
		codes         []jobrun.Code
		unchanged     bool
	}
	cases := []struct {
		name  string
		setup func() (*job.Job, *job.Attempt)
		ev    jobrun.Event
		want  want
	}{
		{
			name: "first rank running starts the job",
			setup: func() (*job.Job, *job.Attempt) {
				return fixture(job.JobPreparing, job.AttemptPreparing, "n0", "n1")
			},
			ev:   report(0, node.RankRunning, nil),
			want: want{job: job.JobRunning, attempt: job.AttemptRunning, rank0: job.AttemptRunning, codes: []jobrun.Code{jobrun.CodeRunning}},
		},
		{
			name:  "running again changes nothing",
			setup: func() (*job.Job, *job.Attempt) { return fixture(job.JobRunning, job.AttemptRunning, "n0") },
			ev:    report(0, node.RankRunning, nil),
			want:  want{job: job.JobRunning, attempt: job.AttemptRunning, rank0: job.AttemptRunning, unchanged: true},
		},
		{
			name:  "last rank finalizing finalizes the job",
			setup: func() (*job.Job, *job.Attempt) { return fixture(job.JobRunning, job.AttemptRunning, "n0") },
			ev:    report(0, node.RankFinalizing, nil),
			want:  want{job: job.JobFinalizing, attempt: job.AttemptRunning, rank0: job.AttemptRunning},
		},
		{
			name:  "completed single rank completes the job",
			setup: func() (*job.Job, *job.Attempt) { return fixture(job.JobRunning, job.AttemptRunning, "n0") },
			ev:    report(0, node.RankCompleted, ip(0)),
			want:  want{job: job.JobCompleted, attempt: job.AttemptCompleted, rank0: job.AttemptCompleted, free: true, ended: true, codes: []jobrun.Code{jobrun.CodeCompleted}},
		},
		{
			name: "one of two ranks completed: the attempt goes on",
			setup: func() (*job.Job, *job.Attempt) {
				return fixture(job.JobRunning, job.AttemptRunning, "n0", "n1")
			},
			ev:   report(0, node.RankCompleted, ip(0)),
			want: want{job: job.JobRunning, attempt: job.AttemptRunning, rank0: job.AttemptCompleted, free: true},
		},
		{
			name: "a failed rank fails the gang and stops its siblings",
			setup: func() (*job.Job, *job.Attempt) {
				return fixture(job.JobRunning, job.AttemptRunning, "n0", "n1")
			},
			ev:   report(0, node.RankFailed, ip(3)),
			want: want{job: job.JobRunning, attempt: job.AttemptFailed, rank0: job.AttemptFailed, free: true, wake: []string{"n1"}},
		},
		{
			name:  "failed without retries fails the job",
			setup: func() (*job.Job, *job.Attempt) { return fixture(job.JobRunning, job.AttemptRunning, "n0") },
			ev:    report(0, node.RankFailed, ip(3)),
			want:  want{job: job.JobFailed, attempt: job.AttemptFailed, rank0: job.AttemptFailed, free: true, ended: true, retrySpent: true, codes: []jobrun.Code{jobrun.CodeFailed}},
		},
		{
			name: "failed with a retry left requeues and spends it",
			setup: func() (*job.Job, *job.Attempt) {
				j, a := fixture(job.JobRunning, job.AttemptRunning, "n0")
				j.Retries = ip(1)
				return j, a
			},
			ev:   report(0, node.RankFailed, ip(3)),
			want: want{job: job.JobQueued, attempt: job.AttemptFailed, rank0: job.AttemptFailed, free: true, ended: true, requeued: true, retrySpent: true, codes: []jobrun.Code{jobrun.CodeRequeued}},
		},
		{
			name:  "timed out fails the job as timed out",
			setup: func() (*job.Job, *job.Attempt) { return fixture(job.JobRunning, job.AttemptRunning, "n0") },
			ev:    report(0, node.RankTimedOut, nil),
			want:  want{job: job.JobFailed, attempt: job.AttemptTimedOut, rank0: job.AttemptTimedOut, free: true, ended: true, retrySpent: true, codes: []jobrun.Code{jobrun.CodeFailed}},
		},
		{
			name:  "preempted requeues without spending a retry and marks the node",
			setup: func() (*job.Job, *job.Attempt) { return fixture(job.JobRunning, job.AttemptRunning, "n0") },
			ev:    report(0, node.RankPreempted, nil),
			want:  want{job: job.JobQueued, attempt: job.AttemptPreempted, rank0: job.AttemptPreempted, free: true, preempt: true, ended: true, requeued: true, codes: []jobrun.Code{jobrun.CodeRequeued}},
		},
		{
			name:  "lost reported by the server requeues",
			setup: func() (*job.Job, *job.Attempt) { return fixture(job.JobRunning, job.AttemptRunning, "n0") },
			ev:    report(0, node.RankLost, nil),
			want:  want{job: job.JobQueued, attempt: job.AttemptLost, rank0: job.AttemptLost, free: true, ended: true, requeued: true, codes: []jobrun.Code{jobrun.CodeRequeued}},
		},
		{
			name: "past MaxInfraRequeues an infra end fails the job",
			setup: func() (*job.Job, *job.Attempt) {
				j, a := fixture(job.JobRunning, job.AttemptRunning, "n0")
				j.InfraRequeues = jobrun.MaxInfraRequeues
				return j, a
			},
			ev:   report(0, node.RankLost, nil),
			want: want{job: job.JobFailed, attempt: job.AttemptLost, rank0: job.AttemptLost, free: true, ended: true, codes: []jobrun.Code{jobrun.CodeFailed}},
		},
		{
			name: "canceled rank under a cancel request cancels the job",
			setup: func() (*job.Job, *job.Attempt) {
				return fixture(job.JobCancelRequested, job.AttemptRunning, "n0")
			},
			ev:   report(0, node.RankCanceled, nil),
			want: want{job: job.JobCanceled, attempt: job.AttemptCanceled, rank0: job.AttemptCanceled, free: true, ended: true, codes: []jobrun.Code{jobrun.CodeCanceled}},
		},
		{
			name:  "canceled rank without a request fails the attempt",
			setup: func() (*job.Job, *job.Attempt) { return fixture(job.JobRunning, job.AttemptRunning, "n0") },
			ev:    report(0, node.RankCanceled, nil),
			want:  want{job: job.JobFailed, attempt: job.AttemptFailed, rank0: job.AttemptCanceled, free: true, ended: true, codes: []jobrun.Code{jobrun.CodeFailed}},
		},
		{
			name: "node lost ends its rank and wakes the others",
			setup: func() (*job.Job, *job.Attempt) {
				return fixture(job.JobRunning, job.AttemptRunning, "n0", "n1")
			},
			ev:   jobrun.Event{Kind: jobrun.NodeLost, Rank: 0, Reason: "missed its lease"},
			want: want{job: job.JobRunning, attempt: job.AttemptLost, rank0: job.AttemptLost, wake: []string{"n1"}},
		},
		{
			name:  "node lost on the last rank requeues",
			setup: func() (*job.Job, *job.Attempt) { return fixture(job.JobRunning, job.AttemptRunning, "n0") },
			ev:    jobrun.Event{Kind: jobrun.NodeLost, Rank: 0, Reason: "missed its lease"},
			want:  want{job: job.JobQueued, attempt: job.AttemptLost, rank0: job.AttemptLost, ended: true, requeued: true, codes: []jobrun.Code{jobrun.CodeRequeued}},
		},
		{
			name: "node lost for an attempt no longer current changes nothing",
			setup: func() (*job.Job, *job.Attempt) {
				j, a := fixture(job.JobRunning, job.AttemptRunning, "n0")
				j.CurrentAttemptID = "a2"
				return j, a
			},
			ev:   jobrun.Event{Kind: jobrun.NodeLost, Rank: 0},
			want: want{job: job.JobRunning, attempt: job.AttemptRunning, rank0: job.AttemptRunning, unchanged: true},
		},
		{
			name: "cancel of a queued job cancels it at once",
			setup: func() (*job.Job, *job.Attempt) {
				return &job.Job{Status: job.JobQueued}, nil
			},
			ev:   jobrun.Event{Kind: jobrun.Cancel},
			want: want{job: job.JobCanceled, codes: []jobrun.Code{jobrun.CodeCanceled}},
		},
		{
			name: "cancel of a running job asks its ranks to stop",
			setup: func() (*job.Job, *job.Attempt) {
				return fixture(job.JobRunning, job.AttemptRunning, "n0", "n1")
			},
			ev:   jobrun.Event{Kind: jobrun.Cancel},
			want: want{job: job.JobCancelRequested, attempt: job.AttemptRunning, rank0: job.AttemptRunning, wake: []string{"n0", "n1"}, codes: []jobrun.Code{jobrun.CodeCancel}},
		},
		{
			name: "start makes the attempt current and the job prepare",
			setup: func() (*job.Job, *job.Attempt) {
				j, a := fixture(job.JobQueued, job.AttemptPreparing, "n0")
				j.CurrentAttemptID = ""
				return j, a
			},
			ev:   jobrun.Event{Kind: jobrun.Start},
			want: want{job: job.JobPreparing, attempt: job.AttemptPreparing, rank0: job.AttemptPreparing, codes: []jobrun.Code{jobrun.CodeScheduled}},
		},
		{
			name:  "compute deleted fails a queued job",
			setup: func() (*job.Job, *job.Attempt) { return &job.Job{Status: job.JobQueued}, nil },
			ev:    jobrun.Event{Kind: jobrun.ComputeDeleted},
			want:  want{job: job.JobFailed, codes: []jobrun.Code{jobrun.CodeFailed}},
		},
		{
			name:  "compute deleted leaves a running job alone",
			setup: func() (*job.Job, *job.Attempt) { return fixture(job.JobRunning, job.AttemptRunning, "n0") },
			ev:    jobrun.Event{Kind: jobrun.ComputeDeleted},
			want:  want{job: job.JobRunning, attempt: job.AttemptRunning, rank0: job.AttemptRunning, unchanged: true},
		},
		{
			name:  "a preparing report changes no state and records a new phase",
			setup: func() (*job.Job, *job.Attempt) { return fixture(job.JobPreparing, job.AttemptPreparing, "n0") },
			ev:    reportWith(0, pulling(120)),
			want:  want{job: job.JobPreparing, attempt: job.AttemptPreparing, rank0: job.AttemptPreparing, codes: []jobrun.Code{jobrun.CodePreparing}},
		},
		{
			name: "progress in the same phase records no event",
			setup: func() (*job.Job, *job.Attempt) {
				j, a := fixture(job.JobPreparing, job.AttemptPreparing, "n0")
				a.Ranks[0].Reason = pulling(120).Reason
				return j, a
			},
			ev:   reportWith(0, pulling(180)),
			want: want{job: job.JobPreparing, attempt: job.AttemptPreparing, rank0: job.AttemptPreparing},
		},
		{
			name: "the same progress again changes nothing",
			setup: func() (*job.Job, *job.Attempt) {
				j, a := fixture(job.JobPreparing, job.AttemptPreparing, "n0")
				a.Ranks[0].Reason = pulling(120).Reason
				return j, a
			},
			ev:   reportWith(0, pulling(120)),
			want: want{job: job.JobPreparing, attempt: job.AttemptPreparing, rank0: job.AttemptPreparing, unchanged: true},
		},
		{
			name:  "a preparing report after the rank started is late and changes nothing",
			setup: func() (*job.Job, *job.Attempt) { return fixture(job.JobRunning, job.AttemptRunning, "n0") },
			ev:    reportWith(0, pulling(216)),
			want:  want{job: job.JobRunning, attempt: job.AttemptRunning, rank0: job.AttemptRunning, unchanged: true},
		},
		{
			name: "an image failure fails the job at once: no retry spent, not requeued",
			setup: func() (*job.Job, *job.Attempt) {
				j, a := fixture(job.JobPreparing, job.AttemptPreparing, "n0")
				j.Retries = ip(3)
				return j, a
			},
			ev:   reportWith(0, imageFailed(node.RankFailed)),
			want: want{job: job.JobFailed, attempt: job.AttemptFailed, rank0: job.AttemptFailed, free: true, ended: true, codes: []jobrun.Code{jobrun.CodeFailed}},
		},
		{
			name:  "an image failure reported as lost is no node loss",
			setup: func() (*job.Job, *job.Attempt) { return fixture(job.JobPreparing, job.AttemptPreparing, "n0") },
			ev:    reportWith(0, imageFailed(node.RankLost)),
			want:  want{job: job.JobFailed, attempt: job.AttemptFailed, rank0: job.AttemptFailed, free: true, ended: true, codes: []jobrun.Code{jobrun.CodeFailed}},
		},
		{
			name: "an input failure fails the job at once: no retry spent, not requeued",
			setup: func() (*job.Job, *job.Attempt) {
				j, a := fixture(job.JobPreparing, job.AttemptPreparing, "n0")
				j.Retries = ip(3)
				return j, a
			},
			ev: reportWith(0, node.RankReport{State: node.RankFailed, ExitCode: ip(-1), Failure: node.RankInputFailed,
				Reason: "input training_data: NoSuchBucket"}),
			want: want{job: job.JobFailed, attempt: job.AttemptFailed, rank0: job.AttemptFailed, free: true, ended: true, codes: []jobrun.Code{jobrun.CodeFailed}},
		},
		{
			name:  "an output failure reported as lost is no node loss",
			setup: func() (*job.Job, *job.Attempt) { return fixture(job.JobRunning, job.AttemptRunning, "n0") },
			ev: reportWith(0, node.RankReport{State: node.RankLost, ExitCode: ip(-1), Failure: node.RankOutputFailed,
				Reason: "output model: AuthorizationFailure"}),
			want: want{job: job.JobFailed, attempt: job.AttemptFailed, rank0: job.AttemptFailed, free: true, ended: true, codes: []jobrun.Code{jobrun.CodeFailed}},
		},
		{
			name: "an image failure of one rank stops the gang",
			setup: func() (*job.Job, *job.Attempt) {
				return fixture(job.JobPreparing, job.AttemptPreparing, "n0", "n1")
			},
			ev:   reportWith(0, imageFailed(node.RankFailed)),
			want: want{job: job.JobPreparing, attempt: job.AttemptFailed, rank0: job.AttemptFailed, free: true, wake: []string{"n1"}},
		},
		{
			name:  "cancel of an ended job changes nothing",
			setup: func() (*job.Job, *job.Attempt) { return &job.Job{Status: job.JobCompleted}, nil },
			ev:    jobrun.Event{Kind: jobrun.Cancel},
			want:  want{job: job.JobCompleted, unchanged: true},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			j, a := tc.setup()
			jobBefore := j.Status
			var attemptBefore string
			if a != nil {
				attemptBefore = a.Status
			}
			out, err := jobrun.Step(j, a, tc.ev, t0)
			if err != nil {
				t.Fatal(err)
			}
			w := tc.want
			if out.Job.Status != w.job {
				t.Errorf("job %s, want %s (%s)", out.Job.Status, w.job, out.Job.StatusReason)
			}
			if out.Attempt != nil {
				if out.Attempt.Status != w.attempt {
					t.Errorf("attempt %s, want %s (%s)", out.Attempt.Status, w.attempt, out.Attempt.Reason)
				}
				if got := out.Attempt.Ranks[0].Status; got != w.rank0 {
					t.Errorf("rank 0 %s, want %s", got, w.rank0)
				}
			}
			if out.FreeNode != w.free || out.MarkPreempted != w.preempt || out.Ended != w.ended || out.Requeued != w.requeued || out.RetrySpent != w.retrySpent {
				t.Errorf("free %v preempt %v ended %v requeued %v retrySpent %v, want %v %v %v %v %v",
					out.FreeNode, out.MarkPreempted, out.Ended, out.Requeued, out.RetrySpent, w.free, w.preempt, w.ended, w.requeued, w.retrySpent)
			}
			if !slices.Equal(out.Wake, w.wake) {
				t.Errorf("wake %v, want %v", out.Wake, w.wake)
			}
			if !slices.Equal(codes(out), w.codes) {
				t.Errorf("events %v, want %v", codes(out), w.codes)
			}
			if out.Changed == w.unchanged {
				t.Errorf("changed %v, want %v", out.Changed, !w.unchanged)
			}
			if tc.ev.Kind == jobrun.Start && (out.Job.CurrentAttemptID != a.ID || out.Job.AttemptCount != a.Number) {
				t.Errorf("started job on attempt %q (%d), want %q (%d)", out.Job.CurrentAttemptID, out.Job.AttemptCount, a.ID, a.Number)
			}
			if out.Requeued && out.Job.CurrentAttemptID != "" {
				t.Errorf("requeued job keeps attempt %q", out.Job.CurrentAttemptID)
			}
			// Step is pure: its inputs are left as they were.
			if j.Status != jobBefore || (a != nil && (a.Status != attemptBefore || a.Ranks[0].Status != attemptBefore)) {
				t.Errorf("Step modified its inputs")
			}
		})
	}
}

// TestStepKeepsReportedTimes: a result the node kept while the server was
// away ends the rank and the attempt when the node says it did.
func TestStepKeepsReportedTimes(t *testing.T) {
	j, a := fixture(job.JobPreparing, job.AttemptPreparing, "n0")
	start, end := t0.Add(-time.Hour), t0.Add(-time.Minute)
	out, err := jobrun.Step(j, a, jobrun.Event{Kind: jobrun.RankReport, Report: &node.RankReport{State: node.RankCompleted, ExitCode: ip(0), StartTime: &start, EndTime: &end}}, t0)
	if err != nil {
		t.Fatal(err)
	}
	if !out.Attempt.StartTime.Equal(start) || !out.Job.StartTime.Equal(start) {
		t.Errorf("start %v / %v, want %v", out.Attempt.StartTime, out.Job.StartTime, start)
	}
	if !out.Attempt.EndTime.Equal(end) || !out.Job.EndTime.Equal(end) {
		t.Errorf("end %v / %v, want %v", out.Attempt.EndTime, out.Job.EndTime, end)
	}
}

// TestStepRefuses: an unknown report state is the caller's field error;
// a rank the attempt lacks is refused.
func TestStepRefuses(t *testing.T) {
	j, a := fixture(job.JobRunning, job.AttemptRunning, "n0")
	if _, err := jobrun.Step(j, a, report(0, "Dancing", nil), t0); core.ErrorCode(err) != core.EINVALID {
		t.Errorf("unknown state: %v, want EINVALID", err)
	}
	if _, err := jobrun.Step(j, a, report(3, node.RankCompleted, nil), t0); err == nil {
		t.Error("rank 3 of a one-rank attempt was accepted")
	}
}

// TestStepPreparingReasons: the rank's and the job's reasons quote the
// node's progress; the event log gets one line per phase.
func TestStepPreparingReasons(t *testing.T) {
	j, a := fixture(job.JobPreparing, job.AttemptPreparing, "n0", "n1")
	var events []string
	for _, rep := range []node.RankReport{pulling(120), pulling(216),
		{State: node.RankPreparing, Reason: "building shoal-build/3f2a — step 2 of 5"},
		{State: node.RankPreparing, Reason: "starting the container"}} {
		out, err := jobrun.Step(j, a, reportWith(1, rep), t0)
		if err != nil {
			t.Fatal(err)
		}
		j, a = &out.Job, out.Attempt
		if a.Ranks[1].Reason != rep.Reason {
			t.Errorf("rank 1 reason %q, want %q", a.Ranks[1].Reason, rep.Reason)
		}
		if want := "attempt 1 preparing: rank 1 on n1: " + rep.Reason; j.StatusReason != want {
			t.Errorf("job reason %q, want %q", j.StatusReason, want)
		}
		for _, e := range out.Events {
			events = append(events, e.Reason)
		}
	}
	want := []string{
		"attempt 1: rank 1 on n1: pulling localhost:5000/team/train:3 — 120 of 216 MB",
		"attempt 1: rank 1 on n1: building shoal-build/3f2a — step 2 of 5",
		"attempt 1: rank 1 on n1: starting the container",
	}
	if !slices.Equal(events, want) {
		t.Errorf("events %q, want %q", events, want)
	}
	// The image failure is the job's error, in the registry's words.
	j, a = fixture(job.JobPreparing, job.AttemptPreparing, "n0")
	out, err := jobrun.Step(j, a, reportWith(0, imageFailed(node.RankFailed)), t0)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.Job.Error, "manifest unknown") || out.Job.ExitCode != nil || out.Job.FailedAttempts != 0 || out.Job.InfraRequeues != 0 {
		t.Errorf("job error %q exit %v failed attempts %d infra requeues %d: want the registry's words, no exit code, nothing counted",
			out.Job.Error, out.Job.ExitCode, out.Job.FailedAttempts, out.Job.InfraRequeues)
	}
}

// A quick job's times come from its node's clock: a 0.2 s run whose
// Running report reached the server 1.1 ms before its result lasted
// 0.2 s, not 1.1 ms; its node-seconds follow. The server's clock places
// it: a node ahead of the server ends it no later than the server heard
// of it, one far behind starts it no earlier than the attempt was made.
func TestStepTimesAreTheNodes(t *testing.T) {
	ran := 200 * time.Millisecond
	for _, tt := range []struct {
		name      string
		skew      time.Duration // node clock minus the server's
		wantStart time.Time
	}{
		{"same clock", 0, t0.Add(-ran)},
		{"node 50 ms ahead", 50 * time.Millisecond, t0.Add(1100 * time.Microsecond).Add(-ran)},
		{"node an hour behind", -time.Hour, t0.Add(-5 * time.Second)},
	} {
		j, a := fixture(job.JobPreparing, job.AttemptPreparing, "n0")
		a.CreatedOn = t0.Add(-5 * time.Second)
		out, err := jobrun.Step(j, a, report(0, node.RankRunning, nil), t0)
		if err != nil {
			t.Fatal(err)
		}
		// The node: started 0.2 s before the server heard it run, by
		// its own clock.
		start, end := t0.Add(-ran+tt.skew), t0.Add(tt.skew)
		out, err = jobrun.Step(&out.Job, out.Attempt, reportWith(0, node.RankReport{State: node.RankCompleted, ExitCode: ip(0), StartTime: &start, EndTime: &end}), t0.Add(1100*time.Microsecond))
		if err != nil {
			t.Fatal(err)
		}
		r := out.Attempt.Ranks[0]
		if d := r.EndTime.Sub(*r.StartTime); d != ran {
			t.Errorf("%s: the rank ran %v, want the node's %v", tt.name, d, ran)
		}
		if d := out.Job.EndTime.Sub(*out.Job.StartTime); d != ran {
			t.Errorf("%s: the job ran %v (%v to %v), want %v", tt.name, d, out.Job.StartTime, out.Job.EndTime, ran)
		}
		if !r.StartTime.Equal(tt.wantStart) || !out.Job.StartTime.Equal(tt.wantStart) || !out.Attempt.StartTime.Equal(tt.wantStart) {
			t.Errorf("%s: started %v (attempt %v, job %v), want %v", tt.name, r.StartTime, out.Attempt.StartTime, out.Job.StartTime, tt.wantStart)
		}
	}
}
