package rank

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/agent/msi"
	"github.com/shoal-ml/shoal/agent/runas"
	"github.com/shoal-ml/shoal/domain/node"
)

const (
	idA = "11111111-1111-1111-1111-111111111111"
	idB = "aaaabbbb-2222-2222-2222-22222222cccc"
)

var testIdentities = []node.TaskIdentity{{ClientID: idA, Name: "system"}, {ClientID: idB, Name: "trainer"}}

// mintNothing stands in for the server's token requests, which these
// tests do not make.
func mintNothing(ctx context.Context, req *node.TokenRequest) (*node.TokenResponse, error) {
	return &node.TokenResponse{AccessToken: "t", ExpiresIn: "3600", TokenType: "Bearer", Resource: req.Resource}, nil
}

func TestRankEnvIdentity(t *testing.T) {
	a := newTestAgent(t, Node{Accounts: runas.Unisolated(), NodeID: "node-1"})
	task := &node.AgentTask{RankRef: node.RankRef{AttemptID: "att-1"}, JobName: "job", Workspace: "ws",
		EnvironmentVariables: map[string]string{"MSI_SECRET": "from-the-job", "FOO": "bar"}}
	vars := []string{"MSI_ENDPOINT", "MSI_SECRET", "IDENTITY_ENDPOINT", "IDENTITY_HEADER", "DEFAULT_IDENTITY_CLIENT_ID"}

	t.Run("no identity", func(t *testing.T) {
		task := *task
		task.EnvironmentVariables = map[string]string{"FOO": "bar"}
		r := a.newRank(&task)
		env := r.env("/out")
		for _, k := range vars {
			if v, ok := env[k]; ok {
				t.Errorf("%s=%q set without an identity", k, v)
			}
		}
		if env["FOO"] != "bar" {
			t.Fatalf("job variable lost: %v", env)
		}
	})

	t.Run("identities", func(t *testing.T) {
		task := *task
		task.Identities = testIdentities
		r := a.newRank(&task)
		m, err := msi.Start(context.Background(), task.Identities, mintNothing, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer m.Close()
		r.msi = m
		env := r.env("/out")
		if env["MSI_ENDPOINT"] != m.URL() || env["IDENTITY_ENDPOINT"] != m.URL() {
			t.Fatalf("endpoint variables %q %q, want %q", env["MSI_ENDPOINT"], env["IDENTITY_ENDPOINT"], m.URL())
		}
		if want := m.Env()["MSI_SECRET"]; want == "" || env["MSI_SECRET"] != want || env["IDENTITY_HEADER"] != want {
			t.Fatalf("secret variables %q %q", env["MSI_SECRET"], env["IDENTITY_HEADER"])
		}
		if env["DEFAULT_IDENTITY_CLIENT_ID"] != idA {
			t.Fatalf("DEFAULT_IDENTITY_CLIENT_ID=%q, want the first identity %q", env["DEFAULT_IDENTITY_CLIENT_ID"], idA)
		}
		if env["FOO"] != "bar" || env["SHOAL_JOB_NAME"] != "job" {
			t.Fatalf("other variables lost: %v", env)
		}
	})
}

// TestRankRunServesIdentity runs a rank against a fake server: the job sees
// the variables, the endpoint forwards to the server's token call for the
// rank, and it is gone once the processes end.
func TestRankRunServesIdentity(t *testing.T) {
	var mu sync.Mutex
	var tokenPaths []string
	var tokenReqs []node.TokenRequest
	var states []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case strings.HasSuffix(r.URL.Path, "/token"):
			var req node.TokenRequest
			_ = json.NewDecoder(r.Body).Decode(&req)
			mu.Lock()
			tokenPaths = append(tokenPaths, r.URL.Path)
			tokenReqs = append(tokenReqs, req)
			mu.Unlock()
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(node.TokenResponse{AccessToken: "minted", ExpiresOn: strconv.FormatInt(time.Now().Add(time.Hour).Unix(), 10), Resource: req.Resource, TokenType: "Bearer", ClientID: req.ClientID})
		case strings.HasSuffix(r.URL.Path, "/status"):
			var rep node.RankReport
			_ = json.NewDecoder(r.Body).Decode(&rep)
			mu.Lock()
			states = append(states, rep.State)
			mu.Unlock()
			w.Write([]byte("{}"))
		default:
			_, _ = io.Copy(io.Discard, r.Body)
			w.Write([]byte("{}"))
		}
	}))
	defer srv.Close()

	dir := t.TempDir()
	a := newTestAgent(t, Node{Accounts: runas.Unisolated(), NodeID: "node-1", WorkDir: dir, ServerURL: srv.URL})
	envFile := filepath.Join(dir, "env.txt")
	goFile := filepath.Join(dir, "go")
	task := &node.AgentTask{
		RankRef: node.RankRef{AttemptID: "att-1", Rank: 0}, JobName: "job", Workspace: "ws", NodeCount: 1, ProcessesPerNode: 1,
		Command:    `printf '%s\n%s\n%s\n%s\n%s\n' "$MSI_ENDPOINT" "$MSI_SECRET" "$IDENTITY_ENDPOINT" "$IDENTITY_HEADER" "$DEFAULT_IDENTITY_CLIENT_ID" > ` + envFile + `.tmp && mv ` + envFile + `.tmp ` + envFile + `; while [ ! -e ` + goFile + ` ]; do sleep 0.02; done`,
		Identities: testIdentities,
		KillGrace:  time.Second,
	}
	r := a.newRank(task)
	done := make(chan struct{})
	go func() { defer close(done); r.Run(context.Background()) }()

	var lines []string
	deadline := time.Now().Add(10 * time.Second)
	for {
		data, err := os.ReadFile(envFile)
		if err == nil {
			lines = strings.Split(strings.TrimSpace(string(data)), "\n")
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the job did not start")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if len(lines) != 5 || lines[0] == "" || lines[0] != lines[2] || len(lines[1]) != 64 || lines[1] != lines[3] || lines[4] != idA {
		t.Fatalf("job environment: %q", lines)
	}
	req, _ := http.NewRequest(http.MethodGet, lines[0]+"?resource=https%3A%2F%2Fmanagement.azure.com&client_id="+idB+"&api-version=2019-08-01", nil)
	req.Header.Set("X-IDENTITY-HEADER", lines[3])
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var tok node.TokenResponse
	_ = json.NewDecoder(resp.Body).Decode(&tok)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || tok.AccessToken != "minted" {
		t.Fatalf("status %d, token %+v", resp.StatusCode, tok)
	}
	mu.Lock()
	if len(tokenPaths) != 1 || tokenPaths[0] != "/agent/v1/attempts/att-1/ranks/0/token" || tokenReqs[0] != (node.TokenRequest{Resource: "https://management.azure.com", ClientID: idB}) {
		t.Fatalf("server saw %q %+v", tokenPaths, tokenReqs)
	}
	mu.Unlock()

	if err := os.WriteFile(goFile, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the rank did not end")
	}
	if resp, err := http.DefaultClient.Do(req); err == nil {
		resp.Body.Close()
		t.Fatal("the identity endpoint outlives the rank")
	}
	mu.Lock()
	defer mu.Unlock()
	if len(states) == 0 || states[len(states)-1] != node.RankCompleted {
		t.Fatalf("states %q", states)
	}
}
