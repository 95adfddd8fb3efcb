package main

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/shoal-ml/shoal/bench/internal/benchsrv"
	"github.com/shoal-ml/shoal/internal/testhosts"
	"github.com/shoal-ml/shoal/internal/teststorage"
)

// jobStart measures, with a real server and agent (the binary bin), what
// a cached input adds to a job's start: jobs jobs without inputs on a
// warm node, alternating with jobs reading the same version of a
// uri_folder (the folder already on the S3 server at prefix, total bytes)
// after one job has fetched it. It prints the medians of submit→process
// started and their difference; the target (issue 36) is a second job
// starting within 100 ms of a job without inputs.
func jobStart(ctx context.Context, p *testhosts.Program, bin string, s3 *teststorage.S3, bucket, prefix string, total int64, jobs int) {
	dir := p.TempDir()
	// 0711: the accounts jobs run as pass through to their work dirs
	// under it (the server refuses a nodes dir they cannot enter).
	if err := os.Chmod(dir, 0o711); err != nil {
		log.Fatal(err)
	}
	srv, c := benchsrv.Start(bin, filepath.Join(dir, "run"), "", "", false)
	defer srv.Stop()
	ds := fmt.Sprintf(`{"name":"bench_bucket","type":"s3","bucket":%q,"endpoint_url":%q,"credentials":{"access_key_id":%q,"secret_access_key":%q}}`,
		bucket, s3.EndpointURL, s3.AccessKey, s3.SecretKey)
	if _, _, err := c.PutDatastore(ctx, "default", "bench_bucket", []byte(ds)); err != nil {
		log.Fatal(err)
	}
	benchsrv.MustCompute(ctx, c, "bench-data", 1)
	plain := map[string]any{"command": "true", "compute": "bench-data"}
	withInput := map[string]any{"command": "test -d ${{inputs.data}}", "compute": "bench-data",
		"inputs": map[string]any{"data": map[string]any{"type": "uri_folder", "path": "azureml://datastores/bench_bucket/paths/" + prefix}}}
	timed := func(doc map[string]any) time.Duration {
		t0 := time.Now()
		j := benchsrv.Submit(ctx, c, doc)
		benchsrv.WaitDone(ctx, c, j.Name)
		return benchsrv.StartLatency(ctx, c, j.Name, t0)
	}
	first := timed(withInput)
	var none, cached []time.Duration
	for i := 0; i < jobs; i++ {
		none = append(none, timed(plain))
		cached = append(cached, timed(withInput))
	}
	med := func(d []time.Duration) time.Duration { slices.Sort(d); return d[len(d)/2] }
	mn, mc := med(none), med(cached)
	fmt.Printf("job start (submit→process started, real server and agent, %d jobs each, alternating): first job with the input %.2f s (the fetch of %.0f MiB); median without inputs %.1f ms, with the cached input %.1f ms: +%.1f ms\n",
		jobs, first.Seconds(), float64(total)/(1<<20), ms(mn), ms(mc), ms(mc-mn))
}

// ms is d in milliseconds.
func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
