package container_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/agent/container"
)

// fakeEngine is an HTTP server on a socket speaking the engine API's
// few routes Open and Info use, counting the requests to /version and
// /info: a real podman does not tell how often it was asked. ping's
// headers name the engine (or nothing); before, when not nil, is
// waited on before /info answers.
type fakeEngine struct {
	ping           map[string]string
	before         chan struct{}
	versions, info atomic.Int32
}

// open starts f and opens an Engine on it.
func (f *fakeEngine) open(t *testing.T) *container.Engine {
	t.Helper()
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Api-Version", "1.41")
		switch {
		case strings.HasSuffix(r.URL.Path, "/_ping"):
			for k, v := range f.ping {
				w.Header().Set(k, v)
			}
			_, _ = w.Write([]byte("OK"))
		case strings.HasSuffix(r.URL.Path, "/version"):
			f.versions.Add(1)
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"Version":"4.9.0","ApiVersion":"1.41","Components":[{"Name":"Podman Engine","Version":"4.9.0"}]}`))
		case strings.HasSuffix(r.URL.Path, "/info"):
			f.info.Add(1)
			if f.before != nil {
				<-f.before
			}
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"Driver":"overlay","DockerRootDir":"/nonexistent","DefaultRuntime":"runc"}`))
		default:
			http.NotFound(w, r)
		}
	}))
	// A socket, as podman's service and Docker listen on: the client's
	// ping names no host to dial.
	sock := filepath.Join(t.TempDir(), "engine.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	srv.Listener = l
	srv.Start()
	t.Cleanup(srv.Close)
	e, err := container.Open(context.Background(), container.Config{Host: "unix://" + sock})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

// podman answers /version and /info each with its whole host report,
// for which it runs dpkg (or rpm) to name the packages of runc, conmon
// and slirp4netns: over a second of CPU each. The engine and its
// version are what Open's ping said, so Info asks /info alone; an engine
// whose ping names neither is asked /version once, by Open.
func TestInfoAsksVersionOnlyWhenThePingDidNotSay(t *testing.T) {
	for _, tc := range []struct {
		name         string
		ping         map[string]string
		wantEngine   string
		wantVersion  string
		wantVersions int32
	}{
		{"podman", map[string]string{"Libpod-Api-Version": "4.3.1"}, "podman", "4.3.1", 0},
		{"docker", map[string]string{"Server": "Docker/27.3.1 (linux)"}, "docker", "27.3.1", 0},
		{"silent", nil, "podman", "4.9.0", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeEngine{ping: tc.ping}
			info, err := f.open(t).Info(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if info.Engine != tc.wantEngine || info.Version != tc.wantVersion || info.Runtime != "runc" || info.StorageDriver != "overlay" {
				t.Errorf("info %+v; want %s %s, runtime runc, driver overlay", info, tc.wantEngine, tc.wantVersion)
			}
			if got := f.versions.Load(); got != tc.wantVersions || f.info.Load() != 1 {
				t.Errorf("Open and Info asked /version %d and /info %d times; want %d and 1", got, f.info.Load(), tc.wantVersions)
			}
		})
	}
}

// Infos asked while one is under way share its answer: a node's join
// and its first pull from an insecure registry ask at once, and each
// costs podman over a second of CPU. One caller giving up (its context
// ends) fails neither the request nor the others' waits.
func TestConcurrentInfosShareOneRequest(t *testing.T) {
	f := &fakeEngine{ping: map[string]string{"Libpod-Api-Version": "4.3.1"}, before: make(chan struct{})}
	e := f.open(t)
	impatient, cancel := context.WithCancel(context.Background())
	errs, asking := make(chan error, 4), make(chan struct{}, 4)
	for i := range 4 {
		ctx := context.Background()
		if i == 0 {
			ctx = impatient
		}
		go func() {
			asking <- struct{}{}
			info, err := e.Info(ctx)
			if err == nil && info.StorageDriver != "overlay" {
				err = errors.New("no storage driver in " + info.Engine)
			}
			errs <- err
		}()
	}
	// The request is held at the engine until every caller has asked
	// (a second after the last said it would: on a loaded machine a
	// goroutine may wait that long between the two).
	for range 4 {
		<-asking
	}
	deadline := time.Now().Add(10 * time.Second)
	for f.info.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(time.Second)
	cancel()
	next := func() error {
		select {
		case err := <-errs:
			return err
		case <-time.After(30 * time.Second):
			t.Fatal("a caller of Info did not return within 30 s")
			return nil
		}
	}
	if err := next(); !errors.Is(err, context.Canceled) {
		t.Errorf("the caller whose context ended got %v; want its context's error", err)
	}
	close(f.before)
	for range 3 {
		if err := next(); err != nil {
			t.Errorf("a caller sharing the request: %v", err)
		}
	}
	if got := f.info.Load(); got != 1 {
		t.Errorf("the engine was asked /info %d times by 4 callers at once; want 1", got)
	}
	// A caller whose context has ended asks nothing.
	if _, err := e.Info(impatient); !errors.Is(err, context.Canceled) || f.info.Load() != 1 {
		t.Errorf("Info on an ended context: %v, /info asked %d times; want its context's error and no request", err, f.info.Load())
	}
}
