// Command data measures how fast job inputs reach a node, side by side
// in one run: a uri_folder of --files files, --size bytes in all (1 GiB
// of 1,000 files by default), downloaded through objstore.Download (the
// agent's path: 8 streams, the guard dialer) from a real S3-compatible
// server (versitygw) and from Azurite, against a plain sequential copy of
// the same bytes from the same server (net/http GETs of the public
// container's blob URLs on Azurite, one object after another through
// the SDK on S3); then a data cache's first Get (the download) against a
// second Get of the same version, which is what a second job on the
// host waits for; with --bin, jobs on a real server and agent: the start
// of a job reading the cached version against a job without inputs. The
// targets (issue 36): Download at least 0.8x the plain copy's rate; a
// second job with the same version starting within 100 ms of a job
// without inputs.
//
// It needs what the storage tests need (scripts/test installs Azurite
// and versitygw) and, with --bin, root. CI does not run it. Usage:
// bench/data.sh, or go run ./bench/data [--size BYTES] [--files N]
// [--bin SHOAL --jobs N].
package main

import (
	"context"
	"crypto/rand"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"

	"github.com/shoal-ml/shoal/agent/datacache"
	"github.com/shoal-ml/shoal/internal/testhosts"
	"github.com/shoal-ml/shoal/internal/teststorage"
	"github.com/shoal-ml/shoal/storage/objstore"
)

// rounds is how many times each way is timed.
var rounds = flag.Int("rounds", 2, "times each way is timed, alternating (the best counts)")

func main() {
	size := flag.Int64("size", 1<<30, "bytes in the folder, in all")
	files := flag.Int("files", 1000, "files in the folder")
	bin := flag.String("bin", "", "a shoal binary: with it, jobs on a real server and agent measure what a cached input adds to a job's start")
	jobs := flag.Int("jobs", 20, "jobs of each kind timed for the job start (with --bin)")
	flag.Parse()
	p := &testhosts.Program{}
	defer p.Done()
	ctx := context.Background()
	dial := objstore.GuardDialer((&net.Dialer{Timeout: 10 * time.Second}).DialContext, nil)

	// The folder, made once.
	src := p.TempDir()
	per := *size / int64(*files)
	buf := make([]byte, per)
	for i := 0; i < *files; i++ {
		rand.Read(buf)
		if err := os.WriteFile(filepath.Join(src, fmt.Sprintf("part-%05d.bin", i)), buf, 0o644); err != nil {
			log.Fatal(err)
		}
	}
	total := per * int64(*files)
	fmt.Printf("folder: %d files of %d bytes (%.0f MiB); machine: %d CPUs, loaded by whatever else runs\n", *files, per, float64(total)/(1<<20), runtime.NumCPU())

	// S3.
	s3srv := teststorage.StartS3(p)
	s3srv.Bucket(p, "bench")
	s3src, err := objstore.NewS3(objstore.S3Config{EndpointURL: s3srv.EndpointURL, Bucket: "bench", AccessKeyID: s3srv.AccessKey, SecretAccessKey: s3srv.SecretKey, Dial: dial})
	must(err)
	must(objstore.Upload(ctx, s3src, "folder/", src, nil))
	sdkSeq := func(dst string) error { return sequential(ctx, s3src, "folder/", dst) }
	compare(ctx, p, "S3 (versitygw)", s3src, total, "one object after another (SDK)", sdkSeq)

	// Azurite, its container public so plain GETs need no signature.
	az := teststorage.StartAzurite(p)
	cred, _ := container.NewSharedKeyCredential(az.Account, az.Key)
	admin, _ := container.NewClientWithSharedKeyCredential(az.ServiceURL+"/bench", cred, nil)
	access := container.PublicAccessTypeContainer
	_, err = admin.Create(ctx, &container.CreateOptions{Access: &access})
	must(err)
	azsrc, err := objstore.NewAzureBlob(objstore.AzureBlobConfig{ServiceURL: az.ServiceURL, Container: "bench", AccountName: az.Account, AccountKey: az.Key, Dial: dial})
	must(err)
	must(objstore.Upload(ctx, azsrc, "folder/", src, nil))
	objs, err := azsrc.List(ctx, "folder/")
	must(err)
	plainGet := func(dst string) error {
		for _, o := range objs {
			resp, err := http.Get(az.ServiceURL + "/bench/" + o.Key)
			if err != nil {
				return err
			}
			f, err := os.Create(filepath.Join(dst, filepath.Base(o.Key)))
			if err != nil {
				return err
			}
			_, err = io.Copy(f, resp.Body)
			resp.Body.Close()
			f.Close()
			if err != nil {
				return err
			}
		}
		return nil
	}
	compare(ctx, p, "Azure Blob (Azurite)", azsrc, total, "sequential net/http GETs", plainGet)

	// The cache: the first Get downloads, the second is served.
	cache, err := datacache.Open(p.TempDir(), 4*total+1)
	must(err)
	t0 := time.Now()
	s3objs, err := s3src.List(ctx, "folder/")
	must(err)
	listed := time.Since(t0)
	key := datacache.KeyOf(s3srv.EndpointURL+"/bench/folder/", s3objs)
	t0 = time.Now()
	e, err := cache.Get(ctx, key, total, func(dir string) error { return objstore.Download(ctx, s3src, "folder/", dir, nil) })
	must(err)
	first := time.Since(t0)
	e.Release()
	t0 = time.Now()
	e, err = cache.Get(ctx, key, total, func(string) error { return fmt.Errorf("refetched") })
	must(err)
	second := time.Since(t0)
	e.Release()
	fmt.Printf("data cache: first Get %.2f s (the download), second Get of the same version %.3f ms; listing the folder (which tells a rank the version it needs, before every Get) %.1f ms\n",
		first.Seconds(), float64(second.Nanoseconds())/1e6, float64(listed.Microseconds())/1000)

	if *bin != "" {
		jobStart(ctx, p, *bin, s3srv, "bench", "folder/", total, *jobs)
	}
}

// compare downloads the folder through objstore and through the plain
// way, each into a fresh directory, alternating --rounds times so that
// neither alone pays for a cold server or page cache, and prints the best
// rate of each and their ratio.
func compare(ctx context.Context, p *testhosts.Program, name string, src objstore.Source, total int64, plainName string, plain func(dst string) error) {
	timed := func(f func(dst string) error) time.Duration {
		d := p.TempDir()
		t0 := time.Now()
		must(f(d))
		el := time.Since(t0)
		os.RemoveAll(d)
		return el
	}
	ours, theirs := time.Duration(1<<62), time.Duration(1<<62)
	for i := 0; i < *rounds; i++ {
		ours = min(ours, timed(func(d string) error { return objstore.Download(ctx, src, "folder/", d, nil) }))
		theirs = min(theirs, timed(plain))
	}
	mb := float64(total) / 1e6
	fmt.Printf("%-22s objstore.Download %7.1f MB/s (%.1f s) | %s %7.1f MB/s (%.1f s) | ratio %.2fx (best of %d each)\n",
		name, mb/ours.Seconds(), ours.Seconds(), plainName, mb/theirs.Seconds(), theirs.Seconds(), theirs.Seconds()/ours.Seconds(), *rounds)
}

// sequential copies every object under prefix one after another.
func sequential(ctx context.Context, src objstore.Source, prefix, dst string) error {
	objs, err := src.List(ctx, prefix)
	if err != nil {
		return err
	}
	for _, o := range objs {
		r, _, err := src.Open(ctx, o.Key)
		if err != nil {
			return err
		}
		f, err := os.Create(filepath.Join(dst, filepath.Base(o.Key)))
		if err != nil {
			r.Close()
			return err
		}
		_, err = io.Copy(f, r)
		r.Close()
		f.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

func must(err error) {
	if err != nil {
		log.Fatal(err)
	}
}
