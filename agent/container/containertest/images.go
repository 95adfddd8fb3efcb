package containertest

import (
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/agent/container"
)

func testInfo(t *testing.T, h Harness) {
	info, err := h.Runtime.Info(ctxFor(t, 30*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if info.Engine != "docker" && info.Engine != "podman" {
		t.Errorf("Engine %q, want docker or podman", info.Engine)
	}
	if info.Version == "" || info.APIVersion == "" || info.StorageDriver == "" || info.StorageRoot == "" {
		t.Errorf("incomplete info: %+v", info)
	}
	if info.FreeBytes <= 0 {
		t.Errorf("FreeBytes %d under %s, want the free space", info.FreeBytes, info.StorageRoot)
	}
	if !info.Insecure(h.Registry) {
		t.Errorf("InsecureRegistries %v lack the test registry %s", info.InsecureRegistries, h.Registry)
	}
	t.Logf("%s %s (API %s), runtime %s, storage %s at %s, %d MB free, GPUs %+v",
		info.Engine, info.Version, info.APIVersion, info.Runtime, info.StorageDriver, info.StorageRoot, info.FreeBytes>>20, info.GPUs)
}

func testPull(t *testing.T, h Harness) {
	ref := h.Registry + "/" + h.Pushed
	var mu sync.Mutex
	var last container.Progress
	calls := 0
	img, err := h.Runtime.Pull(ctxFor(t, 2*time.Minute), ref, container.PullOptions{Insecure: true, Progress: func(p container.Progress) {
		mu.Lock()
		defer mu.Unlock()
		calls++
		last = p
	}})
	if err != nil {
		t.Fatal(err)
	}
	if img.ID == "" || img.Size <= 0 || !slices.ContainsFunc(img.Refs, func(r string) bool { return strings.HasSuffix(r, h.Pushed) }) {
		t.Errorf("pulled image %+v: want an id, a size and the tag %s", img, h.Pushed)
	}
	if calls == 0 || last.Done < 0 || (last.Total > 0 && last.Done > last.Total) {
		t.Errorf("progress: %d calls, last %+v", calls, last)
	}
	got, err := h.Runtime.Inspect(ctxFor(t, 30*time.Second), ref)
	if err != nil || got.ID != img.ID {
		t.Errorf("inspect after pull: %+v, %v; want id %s", got, err, img.ID)
	}
	// With credentials, from the registry that requires them.
	auth := h.AuthRegistry + "/" + h.Pushed
	creds := h.Credentials
	if _, err := h.Runtime.Pull(ctxFor(t, 2*time.Minute), auth, container.PullOptions{Insecure: true, Auth: &creds}); err != nil {
		t.Errorf("pull with credentials: %v", err)
	}
}

func testPullRefused(t *testing.T, h Harness) {
	rt := h.Runtime
	_, err := rt.Inspect(ctxFor(t, 30*time.Second), "localhost/shoal-absent/image:"+token())
	wantKind(t, "inspect an absent image", err, container.ErrNotFound)

	auth := h.AuthRegistry + "/" + h.Pushed
	_, err = rt.Pull(ctxFor(t, time.Minute), auth, container.PullOptions{Insecure: true})
	wantKind(t, "pull without credentials from a registry that requires them", err, container.ErrUnauthorized)
	wrong := container.Credentials{Username: h.Credentials.Username, Password: "wrong-" + token()}
	_, err = rt.Pull(ctxFor(t, time.Minute), auth, container.PullOptions{Insecure: true, Auth: &wrong})
	wantKind(t, "pull with a wrong password", err, container.ErrUnauthorized)
	if err != nil && strings.Contains(err.Error(), wrong.Password) {
		t.Errorf("the error shows the password: %v", err)
	}

	_, err = rt.Pull(ctxFor(t, time.Minute), h.Registry+"/shoal-absent/image:"+token(), container.PullOptions{Insecure: true})
	wantKind(t, "pull an image the registry lacks", err, container.ErrNotFound)
	_, err = rt.Pull(ctxFor(t, time.Minute), h.Registry+"/"+strings.Split(h.Pushed, ":")[0]+":absent-tag", container.PullOptions{Insecure: true})
	wantKind(t, "pull a tag the registry lacks", err, container.ErrNotFound)

	// Registries the engine cannot reach: the connection refused, a name
	// that does not resolve (.invalid never does).
	l, lerr := net.Listen("tcp", "127.0.0.1:0")
	if lerr != nil {
		t.Fatal(lerr)
	}
	closed := l.Addr().String()
	l.Close()
	_, err = rt.Pull(ctxFor(t, time.Minute), closed+"/shoal-absent/image:1", container.PullOptions{})
	wantKind(t, "pull from a registry that refuses the connection", err, container.ErrUnreachable)
	_, err = rt.Pull(ctxFor(t, time.Minute), "reg1.example.invalid/shoal-absent/image:1", container.PullOptions{})
	wantKind(t, "pull from a registry whose name does not resolve", err, container.ErrUnreachable)

	_, err = rt.Pull(ctxFor(t, time.Minute), "Not A/Reference::", container.PullOptions{})
	wantKind(t, "pull a malformed reference", err, container.ErrInvalid)
	_, err = rt.Pull(ctxFor(t, time.Minute), "unlisted.invalid:5000/team/x:1", container.PullOptions{Insecure: true})
	wantKind(t, "an insecure pull from a registry the engine does not list", err, container.ErrInvalid)
}

func testBuild(t *testing.T, h Harness) {
	rt := h.Runtime
	dir := t.TempDir()
	mustWrite(t, filepath.Join(dir, "hello.txt"), "hello from the context\n")
	mustWrite(t, filepath.Join(dir, "docker", "train.Dockerfile"),
		"FROM "+h.BaseImage+"\nRUN echo built-step > /built\nCOPY hello.txt /hello.txt\nCMD [\"cat\", \"/built\", \"/hello.txt\"]\n")
	tag := "localhost/shoal-test/built:" + token()
	var mu sync.Mutex
	var lines []string
	img, err := rt.Build(ctxFor(t, 3*time.Minute), container.BuildOptions{
		ContextDir: dir, Dockerfile: "docker/train.Dockerfile", Tag: tag, Labels: map[string]string{"shoal.test": "build"},
		Log: func(l string) { mu.Lock(); lines = append(lines, l); mu.Unlock() },
	})
	if err != nil {
		t.Fatalf("build: %v\n%s", err, strings.Join(lines, "\n"))
	}
	t.Cleanup(func() { _ = rt.RemoveImage(ctxFor(t, time.Minute), img.ID) })
	if len(lines) == 0 {
		t.Error("the build's log callback got no line")
	}
	code, out, _ := runToEnd(t, rt, container.Spec{Image: tag})
	if code != 0 || out != "built-step\nhello from the context\n" {
		t.Errorf("the built image's command: exit %d, output %q", code, out)
	}

	_, err = rt.Build(ctxFor(t, time.Minute), container.BuildOptions{ContextDir: dir, Dockerfile: "absent/Dockerfile", Tag: tag + "x"})
	wantKind(t, "build with a missing Dockerfile", err, container.ErrInvalid)
	if err != nil && !strings.Contains(err.Error(), "absent/Dockerfile") {
		t.Errorf("the error does not name the Dockerfile: %v", err)
	}
	mustWrite(t, filepath.Join(dir, "Failing"), "FROM "+h.BaseImage+"\nRUN exit 3\n")
	_, err = rt.Build(ctxFor(t, 2*time.Minute), container.BuildOptions{ContextDir: dir, Dockerfile: "Failing", Tag: tag + "-failing"})
	wantKind(t, "build whose step fails", err, container.ErrInvalid)
}

// mustWrite writes a file, making its directory.
func mustWrite(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
