package e2e_test

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/internal/testctr"
)

// subnetProbe is the jobs' program: "serve" prints the container's
// address and answers on 8765 for a minute; "probe ADDR:PORT..." tries
// each address and prints what came of it.
const subnetProbe = `import fcntl, socket, struct, sys, time
def addr():
    for _, name in socket.if_nameindex():
        if name == "lo":
            continue
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        try:
            return socket.inet_ntoa(fcntl.ioctl(s.fileno(), 0x8915, struct.pack("256s", name[:15].encode()))[20:24])
        except OSError:
            pass
    return "none"
if sys.argv[1] == "services":
    import json, os, urllib.request
    q = os.environ["MSI_ENDPOINT"] + "?resource=https://management.azure.com&api-version=2017-09-01"
    r = urllib.request.urlopen(urllib.request.Request(q, headers={"Secret": os.environ["MSI_SECRET"]}), timeout=20)
    print("token", json.load(r)["access_token"][:2], flush=True)
    r = urllib.request.urlopen(os.environ["AZUREML_DEV_URL_MFE"] + "healthz", timeout=20)
    print("server", r.status, flush=True)
elif sys.argv[1] == "serve":
    srv = socket.socket(); srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("0.0.0.0", 8765)); srv.listen(); srv.settimeout(60)
    print("addr", addr(), flush=True)
    try:
        while True:
            c, _ = srv.accept(); c.sendall(b"peer"); c.close()
    except socket.timeout:
        pass
else:
    for target in sys.argv[2:]:
        host, port = target.rsplit(":", 1)
        try:
            socket.create_connection((host, int(port)), timeout=3).close()
            print("reached", target, flush=True)
        except OSError as e:
            print("unreachable", target, type(e).__name__, flush=True)
`

// A cluster in a virtual network runs its jobs in containers on its
// subnet's network: with no public IP, a job reaches a peer of its own
// subnet but not the host's loopback, not the host's address and not a
// job of another subnet, while its identity endpoint and the server
// answer on its own loopback; a bare job and a multi-node job there are
// refused at submit, naming the field.
func TestContainerJobsInASubnet(t *testing.T) {
	env := testctr.Shared(t)
	s := startServer(t, serverOpts{Env: []string{"SHOAL_AGENT_CONTAINER_HOST=" + env.Host}})
	image := env.Registry.Addr + "/" + testctr.PushedBase
	for _, c := range []struct{ name, subnet, extra string }{{"subnet-a", "train-a", ""}, {"subnet-b", "train-b", ""},
		{"subnet-id", "train-a", "identity:\n  type: system_assigned\n"}} {
		f := filepath.Join(t.TempDir(), c.name+".yml")
		doc := fmt.Sprintf("name: %s\ntype: amlcompute\nsize: Standard_DS3_v2\nmax_instances: 2\nvnet_name: ml-vnet\nsubnet_name: %s\nenable_node_public_ip: false\n%s", c.name, c.subnet, c.extra)
		if err := os.WriteFile(f, []byte(doc), 0o600); err != nil {
			t.Fatal(err)
		}
		mustRun(t, s.env, "compute", "create", "-f", f, "-o", "none")
	}
	code := t.TempDir()
	if err := os.WriteFile(filepath.Join(code, "probe.py"), []byte(subnetProbe), 0o644); err != nil {
		t.Fatal(err)
	}
	job := func(compute, args string) string {
		return writeJobFile(t, fmt.Sprintf("code: %s\ncommand: python3 probe.py %s\ncompute: azureml:%s\nenvironment:\n  image: %s\n", code, args, compute, image))
	}

	// The host listens on its loopback and on every address.
	loop, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer loop.Close()
	all, err := net.Listen("tcp", "0.0.0.0:0")
	if err != nil {
		t.Fatal(err)
	}
	defer all.Close()
	hostAddr := hostIPv4(t)

	server := submitJob(t, s, job("subnet-a", "serve"))
	var peer string
	waitFor(t, 3*time.Minute, "the serving job to print its address", func() (bool, string) {
		_, _, body := s.httpDo(t, "GET", "/api/v1/workspaces/default/jobs/"+server+"/logs?rank=0", s.adminToken(t), nil, nil)
		if m := regexp.MustCompile(`addr (\d+\.\d+\.\d+\.\d+)`).FindSubmatch(body); m != nil {
			peer = string(m[1])
			return true, ""
		}
		if j := getJob(t, s, server); j.Status == "Failed" || j.Status == "Completed" {
			t.Fatalf("the serving job ended %s: %v\n%s", j.Status, j, jobLog(t, s, server))
		}
		return false, string(body)
	})
	targets := fmt.Sprintf("%s:8765 %s %s:%d", peer, loop.Addr(), hostAddr, all.Addr().(*net.TCPAddr).Port)
	same := submitJob(t, s, job("subnet-a", "probe "+targets))
	other := submitJob(t, s, job("subnet-b", "probe "+peer+":8765"))
	services := submitJob(t, s, job("subnet-id", "services"))
	for _, name := range []string{same, other, services} {
		if j := waitJob(t, s, name, 3*time.Minute, "Completed", "Failed"); j.Status != "Completed" {
			t.Fatalf("job %s: %v\n%s", name, j, jobLog(t, s, name))
		}
	}
	sameLog, otherLog := jobLog(t, s, same), jobLog(t, s, other)
	for _, want := range []string{
		"reached " + peer + ":8765",
		"unreachable " + loop.Addr().String(),
		fmt.Sprintf("unreachable %s:%d", hostAddr, all.Addr().(*net.TCPAddr).Port),
	} {
		if !strings.Contains(sameLog, want) {
			t.Errorf("the job in the same subnet: want %q in\n%s", want, sameLog)
		}
	}
	if !strings.Contains(otherLog, "unreachable "+peer+":8765") {
		t.Errorf("the job in another subnet reached the peer:\n%s", otherLog)
	}
	if l := jobLog(t, s, services); !strings.Contains(l, "token ey\n") || !strings.Contains(l, "server 200\n") {
		t.Errorf("the job with an identity in the internal subnet: want a token and the server's answer in\n%s", l)
	}

	// What the subnet cannot honour is refused, naming the field.
	bare := writeJobFile(t, "command: echo on the host\ncompute: azureml:subnet-a\n")
	if stderr, _ := mustFail(t, s.env, "job", "create", "-f", bare); !strings.Contains(stderr, "environment") || !strings.Contains(stderr, "ml-vnet") {
		t.Errorf("a bare job on a subnet's cluster: %s", stderr)
	}
	multi := writeJobFile(t, "command: echo two\ncompute: azureml:subnet-a\nresources:\n  instance_count: 2\nenvironment:\n  image: "+image+"\n")
	if stderr, _ := mustFail(t, s.env, "job", "create", "-f", multi); !strings.Contains(stderr, "resources.instance_count") {
		t.Errorf("a two-node job on a subnet's cluster: %s", stderr)
	}
	inst := filepath.Join(t.TempDir(), "inst.yml")
	os.WriteFile(inst, []byte("name: subnet-ci\ntype: computeinstance\nsize: Standard_DS3_v2\nnetwork_settings:\n  vnet_name: ml-vnet\n  subnet: train-a\n"), 0o600)
	if stderr, _ := mustFail(t, s.env, "compute", "create", "-f", inst); !strings.Contains(stderr, "network_settings") {
		t.Errorf("an instance in a virtual network: %s", stderr)
	}
	mustRun(t, s.env, "job", "cancel", "-n", server)
	waitJob(t, s, server, time.Minute, "Canceled", "Completed")
	assertNoShoalContainers(t, env)
}

// hostIPv4 is an IPv4 address of this host other than the loopback's.
func hostIPv4(t *testing.T) string {
	t.Helper()
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil && !n.IP.IsLoopback() && !strings.HasPrefix(n.IP.String(), "10.88.") && !strings.HasPrefix(n.IP.String(), "10.89.") {
			return n.IP.String()
		}
	}
	t.Fatal("this host has no IPv4 address but its loopback's")
	return ""
}
