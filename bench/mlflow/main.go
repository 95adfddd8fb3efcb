// Command mlflow measures what a big MLflow run costs the server and
// everyone else on it: a `shoal server` (the binary given) on a fresh
// data dir gets one job's run filled with --points metric points, then
// one client logs small batches into that run while another updates a
// compute, both one request after another; it prints each one's median
// and p99 latency. With --baseline a second binary (the code before a
// change) runs the same runs, alternating with the first, so that a
// change is measured against what it replaces in one sitting. Run it with
// bench/mlflow.sh, which builds the binaries.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/shoal-ml/shoal/bench/internal/benchsrv"
)

// arm is one binary under test and what its runs measured.
type arm struct {
	label string
	bin   string
	runs  []result
}

// result is one run's latencies, in ms.
type result struct {
	logP50, logP99, updP50, updP99 float64
	logs, updates                  int
	fill                           time.Duration
}

// keys is how many metrics the run's points are spread over: a metric
// holds at most 10,000 points.
const keys = 100

func main() {
	bin := flag.String("bin", "", "the shoal binary run as the server (required)")
	baseline := flag.String("baseline", "", "a second shoal binary (the code before a change), run alternately with --bin")
	runs := flag.Int("runs", 3, "runs in a row for each binary, each on a fresh server and data dir")
	points := flag.Int("points", 200000, "points logged into the run before measuring (at most 800,000)")
	samples := flag.Int("samples", 200, "log-batches measured in the big run")
	batch := flag.Int("batch", 10, "points in each measured log-batch")
	flag.Parse()
	if *bin == "" {
		log.Fatal("--bin is required")
	}
	if *runs < 1 || *points < 0 || *points > 800000 || *samples < 1 || *batch < 1 || *batch > 1000 {
		log.Fatal("--runs and --samples must be at least 1, --points 0 to 800,000, --batch 1 to 1000")
	}
	root, err := os.MkdirTemp("", "shoal-bench-mlflow-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(root)
	_ = os.Chmod(root, 0o711)
	arms := []*arm{{label: "current", bin: *bin}}
	if *baseline != "" {
		arms = []*arm{{label: "baseline", bin: *baseline}, {label: "current", bin: *bin}}
	}
	fmt.Printf("%d runs: a run of %d points, then %d log-batches of %d points each beside compute updates\n", *runs, *points, *samples, *batch)
	for i := range *runs {
		order := slices.Clone(arms)
		if i%2 == 1 {
			slices.Reverse(order)
		}
		for _, a := range order {
			r := run(a.bin, filepath.Join(root, fmt.Sprintf("%s-%d", a.label, i+1)), *points, *samples, *batch)
			a.runs = append(a.runs, r)
			fmt.Printf("%-8s run %d: filled in %s; log-batch p50 %.1f ms p99 %.1f ms (%d); compute update p50 %.1f ms p99 %.1f ms (%d)\n",
				a.label, i+1, r.fill.Round(time.Millisecond), r.logP50, r.logP99, r.logs, r.updP50, r.updP99, r.updates)
		}
	}
	for _, a := range arms {
		fmt.Printf("%-8s medians of %d runs: log-batch p50 %.1f ms, p99 %.1f ms; compute update p50 %.1f ms, p99 %.1f ms\n", a.label, len(a.runs),
			median(a.runs, func(r result) float64 { return r.logP50 }), median(a.runs, func(r result) float64 { return r.logP99 }),
			median(a.runs, func(r result) float64 { return r.updP50 }), median(a.runs, func(r result) float64 { return r.updP99 }))
	}
}

// caller calls the server's API with the admin's token.
type caller struct {
	url, token string
	hc         *http.Client
}

// call sends a request and fails the bench unless it answers 2xx.
func (c caller) call(method, path, body string) {
	if status, b := c.send(method, path, body); status >= 300 {
		log.Fatalf("%s %s: %d %s", method, path, status, b)
	}
}

// send sends a request and returns its status and body.
func (c caller) send(method, path, body string) (int, []byte) {
	req, _ := http.NewRequest(method, c.url+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.hc.Do(req)
	if err != nil {
		log.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// compute is the cluster the run's job ran on.
const compute = "/api/v1/workspaces/default/computes/bench-cpu"

const mlflow = "/mlflow/v1/workspaces/default/api/2.0/mlflow/runs/log-batch"

// logBody is a log-batch of n points from point from on, spread over the
// keys, one step each.
func logBody(from, n int) string {
	var b bytes.Buffer
	b.WriteString(`{"run_id":"bench-run","metrics":[`)
	for i := from; i < from+n; i++ {
		if i > from {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"key":"m%03d","value":%d,"timestamp":%d,"step":%d}`, i%keys, i, 1700000000000+int64(i), i/keys)
	}
	b.WriteString(`]}`)
	return b.String()
}

// run is one run on a fresh server: fill the run, then measure.
func run(bin, dir string, points, samples, batch int) result {
	s, c := startServer(bin, dir)
	defer func() {
		// The compute's deletion ends its node's agent, which a server's
		// stop leaves running.
		c.call("DELETE", compute, "")
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
			if status, _ := c.send("GET", compute, ""); status == http.StatusNotFound {
				break
			}
		}
		s.Stop()
	}()
	c.call("PUT", compute, `{"size":"Standard_DS3_v2","min_instances":0,"max_instances":1,"idle_time_before_scale_down":120}`)
	c.call("PUT", "/api/v1/workspaces/default/jobs/bench-run", `{"command":"true","compute":"bench-cpu"}`)
	began := time.Now()
	for from := 0; from < points; from += 1000 {
		c.call("POST", mlflow, logBody(from, min(1000, points-from)))
	}
	r := result{fill: time.Since(began)}
	var (
		wg      sync.WaitGroup
		stop    = make(chan struct{})
		updates []time.Duration
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			t := time.Now()
			c.call("PATCH", compute, fmt.Sprintf(`{"tags":{"n":"%d"}}`, i))
			updates = append(updates, time.Since(t))
		}
	}()
	var logs []time.Duration
	for i := range samples {
		t := time.Now()
		c.call("POST", mlflow, logBody(points+i*batch, batch))
		logs = append(logs, time.Since(t))
	}
	close(stop)
	wg.Wait()
	r.logs, r.updates = len(logs), len(updates)
	r.logP50, r.logP99 = quantile(logs, 0.5), quantile(logs, 0.99)
	r.updP50, r.updP99 = quantile(updates, 0.5), quantile(updates, 0.99)
	return r
}

// quantile returns the q-quantile of ds in ms (nearest rank).
func quantile(ds []time.Duration, q float64) float64 {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := min(len(s)-1, int(q*float64(len(s))))
	return float64(s[i].Microseconds()) / 1000
}

// median returns the median of f over rs.
func median(rs []result, f func(result) float64) float64 {
	v := make([]float64, len(rs))
	for i, r := range rs {
		v[i] = f(r)
	}
	slices.Sort(v)
	n := len(v)
	if n%2 == 1 {
		return v[n/2]
	}
	return (v[n/2-1] + v[n/2]) / 2
}

// startServer starts bin as a server on a fresh data dir under dir and
// returns it with a caller holding its admin's token.
func startServer(bin, dir string) (*benchsrv.Server, caller) {
	s, _ := benchsrv.Start(bin, dir, "", "", false)
	return s, caller{url: s.URL, token: s.Token, hc: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}}
}
