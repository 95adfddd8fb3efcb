package sim

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Job is one job of a trace: it arrives at Submit (from the trace's
// start), runs Duration once placed, on Nodes nodes at once.
type Job struct {
	ID       string
	Submit   time.Duration
	Duration time.Duration
	Nodes    int
	// User and Tags, when the trace has them (Shoal's own history).
	User string
	Tags map[string]string
	// Waited is the queue wait the job really had (Shoal's own history:
	// submission to start); nil for traces that do not record it.
	Waited *time.Duration
}

// Filter selects a trace's jobs.
type Filter struct {
	// GPUs, when >= 0, keeps the Alibaba rows asking for exactly that many
	// GPUs (the golden replay takes the 1-GPU jobs); -1 keeps all.
	GPUs int
}

// ReadAlibaba reads the Alibaba GPU 2023 trace
// (openb_pod_list_default.csv): a row arrives at creation_time and runs
// deletion_time − scheduled_time seconds on one node (a node stands for
// the GPU machine the task needs). Rows the trace never scheduled (no
// scheduled_time, or no deletion_time) never ran and are skipped.
func ReadAlibaba(r io.Reader, f Filter) ([]Job, error) {
	cr := csv.NewReader(r)
	header, err := cr.Read()
	if err != nil {
		return nil, fmt.Errorf("alibaba trace: header: %w", err)
	}
	col := map[string]int{}
	for i, h := range header {
		col[strings.TrimSpace(h)] = i
	}
	for _, need := range []string{"name", "num_gpu", "creation_time", "deletion_time", "scheduled_time"} {
		if _, ok := col[need]; !ok {
			return nil, fmt.Errorf("alibaba trace: no %q column (is this openb_pod_list_default.csv?)", need)
		}
	}
	var out []Job
	for line := 2; ; line++ {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("alibaba trace: line %d: %w", line, err)
		}
		gpus, err := strconv.Atoi(rec[col["num_gpu"]])
		if err != nil {
			return nil, fmt.Errorf("alibaba trace: line %d: num_gpu %q: %v", line, rec[col["num_gpu"]], err)
		}
		if f.GPUs >= 0 && gpus != f.GPUs {
			continue
		}
		sched, del := rec[col["scheduled_time"]], rec[col["deletion_time"]]
		if sched == "" || del == "" {
			continue
		}
		created, err1 := strconv.ParseInt(rec[col["creation_time"]], 10, 64)
		s, err2 := strconv.ParseInt(sched, 10, 64)
		d, err3 := strconv.ParseInt(del, 10, 64)
		if err1 != nil || err2 != nil || err3 != nil || d < s || created < 0 {
			return nil, fmt.Errorf("alibaba trace: line %d: times %v,%v,%v are not seconds with deletion ≥ scheduled", line, rec[col["creation_time"]], sched, del)
		}
		out = append(out, Job{ID: rec[col["name"]], Submit: time.Duration(created) * time.Second, Duration: time.Duration(d-s) * time.Second, Nodes: 1})
	}
	sortJobs(out)
	return out, nil
}

// ReadSimple reads the simple CSV format: submit_time,duration,
// instance_count, with times in seconds (fractions allowed) and an
// optional header; jobs are named job-<line>.
func ReadSimple(r io.Reader) ([]Job, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	var out []Job
	for line := 1; ; line++ {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("trace: line %d: %w", line, err)
		}
		if line == 1 && len(rec) > 0 && strings.EqualFold(strings.TrimSpace(rec[0]), "submit_time") {
			continue
		}
		if len(rec) < 2 || len(rec) > 3 {
			return nil, fmt.Errorf("trace: line %d: want submit_time,duration[,instance_count], got %d fields", line, len(rec))
		}
		sub, err := seconds(rec[0])
		if err != nil {
			return nil, fmt.Errorf("trace: line %d: submit_time: %v", line, err)
		}
		dur, err := seconds(rec[1])
		if err != nil {
			return nil, fmt.Errorf("trace: line %d: duration: %v", line, err)
		}
		n := 1
		if len(rec) == 3 && strings.TrimSpace(rec[2]) != "" {
			n, err = strconv.Atoi(strings.TrimSpace(rec[2]))
			if err != nil || n < 1 {
				return nil, fmt.Errorf("trace: line %d: instance_count %q must be a whole number ≥ 1", line, rec[2])
			}
		}
		out = append(out, Job{ID: fmt.Sprintf("job-%d", line), Submit: sub, Duration: dur, Nodes: n})
	}
	sortJobs(out)
	return out, nil
}

func seconds(s string) (time.Duration, error) {
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	// At most 100 years: a time.Duration holds about 292.
	if err != nil || f < 0 || math.IsInf(f, 0) || math.IsNaN(f) || f > 100*365*86400 {
		return 0, fmt.Errorf("%q is not a number of seconds from 0 to 100 years", s)
	}
	return time.Duration(f * float64(time.Second)), nil
}

// sortJobs orders jobs by arrival, equal arrivals in the trace's order:
// the replay's submission order.
func sortJobs(j []Job) {
	sort.SliceStable(j, func(a, b int) bool { return j[a].Submit < j[b].Submit })
}
