package testk8s

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// Cluster is a running test cluster: etcd, kube-apiserver,
// kube-controller-manager, kube-scheduler, and one node (containerd and
// a kubelet in a private mount and PID namespace) named NodeName.
type Cluster struct {
	// Kubeconfig is the path of a kubeconfig for the admin user
	// (system:masters, by bearer token); Server is the API's URL and
	// Token that token; CA is the cluster CA's PEM.
	Kubeconfig, Server, Token string
	CA                        []byte
	// Client is a REST client as the admin user.
	Client *Client
	// NodeName is the one node's name.
	NodeName string
	// PodSubnet is the non-hostNetwork pods' subnet (a bridge of the
	// cluster's own, BridgeName, whose address is PodGateway: the host
	// as pods reach it).
	PodSubnet, PodGateway, BridgeName string
	// Build is how long building the binaries took (0 when cached);
	// Setup how long the whole start took, build included.
	Build, Setup time.Duration

	bin   Bin
	dir   string
	procs []*proc
	node  *node
}

// Dir is the cluster's scratch directory: PKI, data, the processes' logs
// (name.log: etcd, kube-apiserver, kube-controller-manager,
// kube-scheduler, node for containerd and the kubelet together).
func (c *Cluster) Dir() string { return c.dir }

// serviceCIDR is the Services' range; its first address is the
// kubernetes Service's, which the serving certificate names.
const serviceCIDR = "10.96.0.0/24"

// Start builds (or finds) the binaries and starts a cluster in a fresh
// scratch directory; the caller closes it. It needs root, containerd,
// runc, the CNI plugins and busybox-static (see Shared for the test
// wrapper that checks them).
func Start(ctx context.Context) (c *Cluster, err error) {
	began := time.Now()
	c = &Cluster{NodeName: "localhost"}
	defer func() {
		if err != nil {
			c.Close()
			c = nil
		}
	}()
	if c.bin, c.Build, err = Binaries(); err != nil {
		return c, fmt.Errorf("build the Kubernetes binaries: %w", err)
	}
	if c.dir, err = os.MkdirTemp("", "shoal-testk8s-"); err != nil {
		return c, err
	}
	os.Chmod(c.dir, 0o755)
	pk, err := newPKI(filepath.Join(c.dir, "pki"), net.IPv4(10, 96, 0, 1))
	if err != nil {
		return c, fmt.Errorf("cluster PKI: %w", err)
	}
	c.CA = pk.caCert
	ports, err := freePorts(5)
	if err != nil {
		return c, err
	}
	etcdPort, peerPort, apiPort, kubeletPort := ports[0], ports[1], ports[2], ports[3]
	c.Server = fmt.Sprintf("https://127.0.0.1:%d", apiPort)
	c.Token = randomToken()
	nodeToken, cmToken, schedToken := randomToken(), randomToken(), randomToken()
	tokens := joinLines(
		c.Token+",admin,admin,system:masters",
		nodeToken+",system:node:"+c.NodeName+",node-"+c.NodeName+",system:nodes",
		// The controller-manager's own user is bound only to what it needs
		// to act through per-controller service accounts; in one identity
		// (use-service-account-credentials=false) it needs all rights.
		cmToken+",system:kube-controller-manager,kube-controller-manager,system:masters",
		schedToken+",system:kube-scheduler,kube-scheduler",
	)
	tokenFile := filepath.Join(c.dir, "pki", "tokens.csv")
	if err := os.WriteFile(tokenFile, []byte(tokens), 0o600); err != nil {
		return c, err
	}
	kc := func(name, user, token string) (string, error) {
		p := filepath.Join(c.dir, name+".kubeconfig")
		return p, os.WriteFile(p, []byte(kubeconfig(c.Server, c.CA, user, token)), 0o600)
	}
	if c.Kubeconfig, err = kc("admin", "admin", c.Token); err != nil {
		return c, err
	}
	nodeKC, err := kc("kubelet", "system:node:"+c.NodeName, nodeToken)
	if err != nil {
		return c, err
	}
	cmKC, err := kc("controller-manager", "system:kube-controller-manager", cmToken)
	if err != nil {
		return c, err
	}
	schedKC, err := kc("scheduler", "system:kube-scheduler", schedToken)
	if err != nil {
		return c, err
	}
	if c.Client, err = newClient(c.Server, c.Token, c.CA); err != nil {
		return c, err
	}
	probe := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool(c.CA)}}}

	etcdURL := "http://127.0.0.1:" + strconv.Itoa(etcdPort)
	peerURL := "http://127.0.0.1:" + strconv.Itoa(peerPort)
	etcd, err := c.start("etcd", flags(
		"name", "shoal-test", "data-dir", filepath.Join(c.dir, "etcd"),
		"listen-client-urls", etcdURL, "advertise-client-urls", etcdURL,
		"listen-peer-urls", peerURL, "initial-advertise-peer-urls", peerURL,
		"initial-cluster", "shoal-test="+peerURL, "unsafe-no-fsync", "true", "log-level", "warn",
	)...)
	if err != nil {
		return c, err
	}
	if err := waitFor(ctx, etcd, "etcd healthy", httpOK(probe, etcdURL+"/health", "")); err != nil {
		return c, err
	}
	api, err := c.start("kube-apiserver", flags(
		"etcd-servers", etcdURL, "bind-address", "127.0.0.1", "advertise-address", "127.0.0.1",
		"secure-port", strconv.Itoa(apiPort),
		"tls-cert-file", pk.ServingCert, "tls-private-key-file", pk.ServingKey,
		"client-ca-file", pk.CA, "token-auth-file", tokenFile,
		"service-account-issuer", "https://kubernetes.default.svc.cluster.local",
		"service-account-key-file", pk.ServiceAccountPublic, "service-account-signing-key-file", pk.ServiceAccountKey,
		"authorization-mode", "Node,RBAC", "service-cluster-ip-range", serviceCIDR,
		"kubelet-client-certificate", pk.KubeletClientCert, "kubelet-client-key", pk.KubeletClientKey,
		"allow-privileged", "true", "profiling", "false", "v", "1",
	)...)
	if err != nil {
		return c, err
	}
	if err := waitFor(ctx, api, "kube-apiserver ready", httpOK(probe, c.Server+"/readyz", c.Token)); err != nil {
		return c, err
	}
	// Without the controller-manager there is no default ServiceAccount
	// (every pod is refused) and namespaces never finish terminating.
	if _, err := c.start("kube-controller-manager", flags(
		"kubeconfig", cmKC, "leader-elect", "false", "secure-port", "0",
		"service-account-private-key-file", pk.ServiceAccountKey, "root-ca-file", pk.CA,
		"use-service-account-credentials", "false",
		"profiling", "false", "v", "1",
	)...); err != nil {
		return c, err
	}
	if _, err := c.start("kube-scheduler", flags(
		"kubeconfig", schedKC, "leader-elect", "false", "secure-port", "0",
		"authentication-skip-lookup", "true", "profiling", "false", "v", "1",
	)...); err != nil {
		return c, err
	}
	if c.node, err = startNode(ctx, c, nodeKC, pk, kubeletPort); err != nil {
		return c, err
	}
	c.procs = append(c.procs, c.node.proc)
	c.PodSubnet, c.PodGateway, c.BridgeName = c.node.subnet, c.node.gateway, c.node.bridge
	for _, img := range []struct {
		name  string
		write func(string) error
	}{{"pause", func(p string) error { return pauseImage(p, c.bin) }}, {"busybox", busyboxImage}} {
		tarball := filepath.Join(c.dir, img.name+".tar")
		if err := img.write(tarball); err != nil {
			return c, fmt.Errorf("the %s image: %w", img.name, err)
		}
		if err := c.node.importImage(ctx, tarball); err != nil {
			return c, err
		}
	}
	if err := waitFor(ctx, c.node.proc, "node "+c.NodeName+" Ready", c.nodeReady(ctx)); err != nil {
		return c, err
	}
	c.Setup = time.Since(began)
	return c, nil
}

// start starts one of the control plane's binaries in the scratch dir.
func (c *Cluster) start(name string, args ...string) (*proc, error) {
	p, err := startProc(c.dir, name, nil, nil, c.bin.Path(name), args...)
	if err != nil {
		return nil, err
	}
	c.procs = append(c.procs, p)
	return p, nil
}

// nodeReady checks that the node is registered with condition Ready.
func (c *Cluster) nodeReady(ctx context.Context) func() error {
	return func() error {
		var n struct {
			Spec struct {
				Taints []struct{ Key, Effect string }
			}
			Status struct {
				Conditions []struct{ Type, Status, Reason, Message string }
			}
		}
		if err := c.Client.Do(ctx, http.MethodGet, "/api/v1/nodes/"+c.NodeName, nil, &n); err != nil {
			return err
		}
		for _, cond := range n.Status.Conditions {
			if cond.Type == "Ready" {
				if cond.Status != "True" {
					return fmt.Errorf("node %s not Ready: %s: %s", c.NodeName, cond.Reason, cond.Message)
				}
				// The node-lifecycle controller lifts the not-ready taint
				// a moment after the kubelet reports Ready.
				if len(n.Spec.Taints) > 0 {
					return fmt.Errorf("node %s is Ready but tainted %v", c.NodeName, n.Spec.Taints)
				}
				return nil
			}
		}
		return fmt.Errorf("node %s has no Ready condition yet", c.NodeName)
	}
}

// LoadImage loads a `docker save` or OCI archive (WriteImage writes one)
// into the node's containerd, where pods with imagePullPolicy Never find
// it by the archive's name. ImportImage is its test form.
func (c *Cluster) LoadImage(ctx context.Context, tarball string) error {
	return c.node.importImage(ctx, tarball)
}

// Close stops every process (the node's PID namespace with everything
// in it: containerd, the kubelet, shims and containers), removes the
// node's cgroups and bridge, and the scratch directory.
func (c *Cluster) Close() {
	if c == nil {
		return
	}
	for i := len(c.procs) - 1; i >= 0; i-- {
		c.procs[i].stop()
	}
	if c.node != nil {
		c.node.cleanup()
	}
	if c.dir != "" && !keepDir() {
		os.RemoveAll(c.dir)
	}
}

// KeepVar, when set, keeps the scratch directory (logs, data) after the
// cluster stops, for debugging.
const KeepVar = "SHOAL_TESTK8S_KEEP"

// pool is a cert pool of caPEM.
func pool(caPEM []byte) *x509.CertPool {
	p := x509.NewCertPool()
	p.AppendCertsFromPEM(caPEM)
	return p
}

// b64 is standard base64.
func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }
