package e2e_test

import (
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/internal/testenv"
)

// TestAzureBlobPython: Azure's Python storage client (azure-storage-blob)
// and azure-ai-ml's code upload against `shoal server --tls`
// (testdata/azurepy/blobs.py). azure-ai-ml builds the account URL
// https://shoal.blob.core.windows.net from the datastore, so the script
// runs in a mount namespace whose /etc/hosts maps that name to a
// loopback address where the test relays port 443 to the server: what an
// operator does with DNS and a port (docs/guides/azure-sdks.md). The
// relay copies bytes (TLS is the server's, end to end).
func TestAzureBlobPython(t *testing.T) {
	t.Parallel()
	testenv.AzureML(t)
	testenv.Root(t, "mounts a private /etc/hosts in a mount namespace and listens on port 443")
	s := startServer(t, serverOpts{Config: fastJobsConfig, Args: []string{"--tls"}, TLS: true})
	sp := runJSON[map[string]any](t, s.env, "sp", "create", "--name", "sdk-blobs", "-o", "json")
	mustRun(t, s.env, "role", "assign", "--sp", "sdk-blobs", "--role", "Contributor", "-o", "none")

	ip := relay443(t, s.addr)
	hosts := filepath.Join(t.TempDir(), "hosts")
	if err := os.WriteFile(hosts, []byte("127.0.0.1 localhost\n"+ip+" shoal.blob.core.windows.net\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, steps := runAzurePy(t, s, pyRun{script: "blobs.py", sp: sp, hosts: hosts, env: []string{"BLOB_ACCOUNT_URL=" + s.url + "/shoal"}})
	want := map[string]map[string]any{
		"datastore":         {"account": "shoal", "container": "workspaceblobstore", "has_sas": true},
		"storage_blob":      {"same": true, "empty": true, "part": true, "sha": true, "size": float64(11), "who": "python"},
		"overwrite_refused": {"refused": true, "error": "ResourceExistsError"},
		"code":              {"name": "e2e-code", "version": "1"},
		"code_again":        {"version": "1"},
	}
	for step, fields := range want {
		for k, v := range fields {
			if got := steps[step][k]; got != v {
				t.Errorf("step %s: %s = %v, want %v\n%s", step, k, got, v, out)
			}
		}
	}
	if got := fmt.Sprint(steps["storage_blob"]["names"]); got != "[e2e/big.bin e2e/empty e2e/hello.txt]" {
		t.Errorf("listed %s", got)
	}
	path := jsonStr(steps["code"]["path"])
	if !strings.HasPrefix(path, "https://shoal.blob.core.windows.net/workspaceblobstore/LocalUpload/") || !strings.HasSuffix(path, "/src") {
		t.Errorf("code path %q", path)
	}
	blobs := fmt.Sprint(steps["code_blobs"]["names"])
	if !strings.Contains(blobs, "/src/train.py") || !strings.Contains(blobs, "/src/lib/util.py") {
		t.Errorf("uploaded code blobs: %s", blobs)
	}
	if jsonStr(steps["code_again"]["path"]) != path {
		t.Errorf("the second create_or_update uploaded again: %v, first %s", steps["code_again"], path)
	}
}

// relay443 listens on port 443 of a loopback address of its own (none
// other listens there) and copies each connection to addr; it returns
// the address.
func relay443(t *testing.T, addr string) string {
	t.Helper()
	var ln net.Listener
	var ip string
	for i := 0; i < 20 && ln == nil; i++ {
		ip = fmt.Sprintf("127.%d.%d.%d", 100+rand.IntN(100), rand.IntN(250)+1, rand.IntN(250)+1)
		ln, _ = net.Listen("tcp", ip+":443")
	}
	if ln == nil {
		t.Fatal("no loopback address with port 443 free")
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				u, err := net.Dial("tcp", addr)
				if err != nil {
					return
				}
				defer u.Close()
				go func() { io.Copy(u, c); u.(*net.TCPConn).CloseWrite() }()
				io.Copy(c, u)
			}()
		}
	}()
	return ip
}
