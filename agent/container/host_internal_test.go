package container

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// The GPUs a host can give: CDI devices from specs in YAML and JSON, and
// the per-GPU /dev/nvidia<N> nodes (not the control nodes).
func TestHostGPUs(t *testing.T) {
	cdi, dev := t.TempDir(), t.TempDir()
	write := func(path, s string) {
		if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(cdi, "nvidia.yaml"), "cdiVersion: 0.5.0\nkind: nvidia.com/gpu\ndevices:\n- name: \"0\"\n- name: \"1\"\n- name: all\n")
	write(filepath.Join(cdi, "other.json"), `{"cdiVersion":"0.5.0","kind":"vendor.example/fpga","devices":[{"name":"a"}]}`)
	write(filepath.Join(cdi, "README"), "not a spec")
	for _, n := range []string{"nvidia0", "nvidia1", "nvidiactl", "nvidia-uvm", "null"} {
		write(filepath.Join(dev, n), "")
	}
	g, err := hostGPUs([]string{cdi, filepath.Join(cdi, "absent")}, dev)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"nvidia.com/gpu=0", "nvidia.com/gpu=1", "nvidia.com/gpu=all", "vendor.example/fpga=a"}; !slices.Equal(g.CDI, want) {
		t.Errorf("CDI %v, want %v", g.CDI, want)
	}
	if want := []string{filepath.Join(dev, "nvidia0"), filepath.Join(dev, "nvidia1")}; !slices.Equal(g.DevNodes, want) {
		t.Errorf("DevNodes %v, want %v", g.DevNodes, want)
	}
	write(filepath.Join(cdi, "bad.yaml"), "kind: nokind\n")
	if _, err := hostGPUs([]string{cdi}, dev); err == nil {
		t.Error("a spec whose kind is not vendor/class was accepted")
	}
}

// Engine errors take the kind their words or status name; the words are
// kept.
func TestClassify(t *testing.T) {
	for _, c := range []struct {
		msg  string
		kind error
	}{
		{"initializing source docker://127.0.0.1:5000/x:1: reading manifest 1 in 127.0.0.1:5000/x: manifest unknown: manifest unknown", ErrNotFound},
		{"manifest for 127.0.0.1:5000/x:1 not found: manifest unknown", ErrNotFound},
		{"unable to retrieve auth token: invalid username/password: unauthorized: authentication required", ErrUnauthorized},
		{"pull access denied for team/x, repository does not exist or may require 'docker login': denied: requested access to the resource is denied", ErrUnauthorized},
		{"writing blob: storing blob to file: write /var/lib/containers/x: no space left on device", ErrNoSpace},
		{"something else broke", errOther},
	} {
		err := classify("pull x", errors.New(c.msg))
		if !errors.Is(err, c.kind) {
			t.Errorf("%q: got %v, want kind %v", c.msg, err, c.kind)
		}
		var e *Error
		if !errors.As(err, &e) || e.Msg != c.msg {
			t.Errorf("%q: the words were not kept: %v", c.msg, err)
		}
	}
	if classify("x", nil) != nil {
		t.Error("nil classified as an error")
	}
}

// A pull's failure to reach the registry (refused, unresolved, no
// route, TLS) is ErrUnreachable, the job's failure, with the words kept;
// the same words from another operation, or the engine itself not
// answering, are not read so.
func TestClassifyPullUnreachable(t *testing.T) {
	for _, msg := range []string{
		`initializing source docker://127.0.0.1:1/x:1: pinging container registry 127.0.0.1:1: Get "https://127.0.0.1:1/v2/": dial tcp 127.0.0.1:1: connect: connection refused`,
		`initializing source docker://reg1.example.invalid/x:1: pinging container registry reg1.example.invalid: Get "https://reg1.example.invalid/v2/": dial tcp: lookup reg1.example.invalid on 10.0.0.53:53: no such host`,
		`Get "https://registry-1.docker.io/v2/": dial tcp 3.216.34.172:443: connect: network is unreachable`,
		`Get "https://registry-1.docker.io/v2/": dial tcp: lookup registry-1.docker.io: Temporary failure in name resolution`,
		`Get "https://10.0.0.9:5000/v2/": http: server gave HTTP response to HTTPS client`,
		`Get "https://reg.example.com/v2/": x509: certificate signed by unknown authority`,
	} {
		err := classifyPull("pull x", errors.New(msg))
		var e *Error
		if !errors.Is(err, ErrUnreachable) || !errors.As(err, &e) || e.Msg != msg {
			t.Errorf("%q: got %v, want kind %v with the words kept", msg, err, ErrUnreachable)
		}
	}
	if err := classify("start container", errors.New("dial tcp 10.0.0.1:80: connect: connection refused")); errors.Is(err, ErrUnreachable) {
		t.Errorf("a container start's error read as a registry's: %v", err)
	}
	if err := classifyPull("pull x", errors.New("manifest unknown: manifest unknown")); !errors.Is(err, ErrNotFound) {
		t.Errorf("manifest unknown: %v, want ErrNotFound", err)
	}
}

// A registry is insecure by name or by a CIDR holding its address.
func TestInfoInsecure(t *testing.T) {
	info := Info{InsecureRegistries: []string{"127.0.0.0/8", "registry.lan:5000"}}
	for reg, want := range map[string]bool{
		"127.0.0.1:5000": true, "127.0.0.1": true, "registry.lan:5000": true,
		"registry.lan": false, "10.0.0.1:5000": false, "docker.io": false,
	} {
		if got := info.Insecure(reg); got != want {
			t.Errorf("Insecure(%q) = %v, want %v", reg, got, want)
		}
	}
}

// Credentials print without their password.
func TestCredentialsString(t *testing.T) {
	c := Credentials{Username: "u", Password: "s3cret"}
	if s := c.String(); s != "u:<redacted>" {
		t.Errorf("String() = %q", s)
	}
}
