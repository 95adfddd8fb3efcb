package e2e_test

import (
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/internal/tlsconf"
)

// `shoal server --tls`: HTTPS with a private CA made in the data dir on
// first start; the client config it writes records the CA, so the CLI
// verifies the server; the nodes' agents verify it too (a job runs); a
// client that does not trust the CA is refused; a restart keeps the CA.
func TestServerTLS(t *testing.T) {
	t.Parallel()
	s := startServer(t, serverOpts{Config: fastJobsConfig, Args: []string{"--tls"}, TLS: true})
	caPEM, err := os.ReadFile(filepath.Join(s.dataDir, "tls", "ca.pem"))
	if err != nil {
		t.Fatal(err)
	}
	if cfg := readFile(t, filepath.Join(s.home, ".config", "shoal", "config.yaml")); !strings.Contains(cfg, "server: https://") || !strings.Contains(cfg, "BEGIN CERTIFICATE") {
		t.Fatalf("the client config does not record the HTTPS URL and the CA:\n%s", cfg)
	}
	createCluster(t, s, "tls-cluster", "--max-instances", "1")
	name := submitJob(t, s, writeJobFile(t, "type: command\ncommand: echo over https\ncompute: azureml:tls-cluster\n"))
	waitJob(t, s, name, 60*time.Second, "Completed")
	if log := jobLog(t, s, name); !strings.Contains(log, "over https") {
		t.Errorf("log %q", log)
	}
	// Without the CA, a client refuses the server.
	if _, err := http.Get(s.url + "/healthz"); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("a client without the CA: %v; want a certificate error", err)
	}
	// With it, verification passes for the address the server listens on.
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	if resp, err := hc.Get(s.url + "/readyz"); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("a client trusting the CA: %v", err)
	} else {
		resp.Body.Close()
	}
	s.restart()
	again, _ := os.ReadFile(filepath.Join(s.dataDir, "tls", "ca.pem"))
	if string(again) != string(caPEM) {
		t.Error("a restart made a new CA: clients that trusted the old one are refused")
	}
	if _, _, code := run(t, s.env, "compute", "list", "-o", "none"); code != 0 {
		t.Error("the CLI does not reach the restarted server")
	}
}

// `shoal server --tls-cert --tls-key --tls-ca`: the operator's
// certificate; clients given the CA (SHOAL_CA_FILE) reach it.
func TestServerTLSWithOwnCertificate(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	// An operator's CA and certificate, made here as any CA would.
	if _, _, err := tlsconf.SelfSigned(dir, []string{"127.0.0.1"}, time.Now()); err != nil {
		t.Fatal(err)
	}
	s := startServer(t, serverOpts{Config: fastJobsConfig, TLS: true, Args: []string{
		"--tls-cert", filepath.Join(dir, tlsconf.CertFile), "--tls-key", filepath.Join(dir, tlsconf.KeyFile), "--tls-ca", filepath.Join(dir, tlsconf.CAFile)}})
	if _, err := os.Stat(filepath.Join(s.dataDir, "tls")); !os.IsNotExist(err) {
		t.Errorf("a private CA was made though a certificate was given (%v)", err)
	}
	env := append(append([]string(nil), s.env...), "SHOAL_CA_FILE="+filepath.Join(dir, tlsconf.CAFile))
	if _, errOut, code := run(t, env, "compute", "list", "-o", "none"); code != 0 {
		t.Fatalf("the CLI with the operator's CA: %s", errOut)
	}
	createCluster(t, s, "own-tls", "--max-instances", "1")
	name := submitJob(t, s, writeJobFile(t, "type: command\ncommand: echo ok\ncompute: azureml:own-tls\n"))
	waitJob(t, s, name, 60*time.Second, "Completed")
}

// Inside a job on a compute with a system-assigned identity, what Azure's
// SDKs do with no configuration works against Shoal: a token for
// Resource Manager from the identity endpoint, then Resource Manager's
// compute list at AZUREML_DEV_URL_MFE over HTTPS, trusting the CA bundle
// the job is given.
func TestJobReachesARMWithItsIdentity(t *testing.T) {
	t.Parallel()
	s := startServer(t, serverOpts{Config: fastJobsConfig, Args: []string{"--tls"}, TLS: true})
	createCluster(t, s, "msi-arm", "--max-instances", "1", "--identity-type", "SystemAssigned")
	mustRun(t, s.env, "role", "assign", "--compute", "msi-arm", "--role", "Reader", "-o", "none")
	name := submitJob(t, s, writeJobFile(t, `type: command
command: >-
  tok=$(curl -sf -H "X-IDENTITY-HEADER: $IDENTITY_HEADER" "$IDENTITY_ENDPOINT?resource=https://management.azure.com/&api-version=2019-08-01"
  | python3 -c 'import json,sys; print(json.load(sys.stdin)["access_token"])') &&
  curl -sf -H "Authorization: Bearer $tok"
  "${AZUREML_DEV_URL_MFE}subscriptions/s1/resourceGroups/rg/providers/Microsoft.MachineLearningServices/workspaces/default/computes?api-version=2022-10-01-preview"
  | python3 -c 'import json,sys; print("computes:", [c["name"] for c in json.load(sys.stdin)["value"]])'
compute: azureml:msi-arm
`))
	j := waitJob(t, s, name, 60*time.Second, "Completed", "Failed")
	if log := jobLog(t, s, name); j.Status != "Completed" || !strings.Contains(log, "computes: ['msi-arm']") {
		t.Fatalf("%s:\n%s", j, log)
	}
}
