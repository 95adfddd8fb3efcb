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
// an input the node already holds adds to a job's start: jobs jobs
// without inputs on a warm node, alternating with jobs reading a
// registered data asset version of a uri_folder (the folder already on
// the S3 server at prefix, total bytes) and jobs reading the same folder
// by its datastore path, after one job of each has fetched it. It prints
// the medians of submit→process started and their differences; the
// target (issue 36) is a second job with the same version starting
// within 100 ms of a job without inputs.
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
	place := "azureml://datastores/bench_bucket/paths/" + prefix
	if _, _, err := c.CreateData(ctx, "default", []byte(fmt.Sprintf(`{"type":"uri_folder","path":%q}`, place)), "bench-folder", "1"); err != nil {
		log.Fatal(err)
	}
	benchsrv.MustCompute(ctx, c, "bench-data", 1)
	reading := func(path string) map[string]any {
		return map[string]any{"command": "test -d ${{inputs.data}}", "compute": "bench-data",
			"inputs": map[string]any{"data": map[string]any{"type": "uri_folder", "path": path}}}
	}
	plain := map[string]any{"command": "true", "compute": "bench-data"}
	asset, path := reading("azureml:bench-folder:1"), reading(place)
	timed := func(doc map[string]any) time.Duration {
		t0 := time.Now()
		j := benchsrv.Submit(ctx, c, doc)
		benchsrv.WaitDone(ctx, c, j.Name)
		return benchsrv.StartLatency(ctx, c, j.Name, t0)
	}
	first := timed(asset)
	timed(path) // the path's own entry (a listing's key), fetched once
	var none, byVersion, byListing []time.Duration
	for i := 0; i < jobs; i++ {
		none = append(none, timed(plain))
		byVersion = append(byVersion, timed(asset))
		byListing = append(byListing, timed(path))
	}
	med := func(d []time.Duration) time.Duration { slices.Sort(d); return d[len(d)/2] }
	mn, mv, ml := med(none), med(byVersion), med(byListing)
	fmt.Printf("job start (submit→process started, real server and agent, %d jobs of each kind, alternating): first job with the input %.2f s (the fetch of %.0f MiB)\n",
		jobs, first.Seconds(), float64(total)/(1<<20))
	fmt.Printf("  median without inputs %.1f ms | the data asset's version held by the node %.1f ms (+%.1f ms) | the same folder as a datastore path, listed to tell its content %.1f ms (+%.1f ms)\n",
		ms(mn), ms(mv), ms(mv-mn), ms(ml), ms(ml-mn))
}

// ms is d in milliseconds.
func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
