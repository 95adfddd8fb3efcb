package msi

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/node"
)

const (
	idA = "11111111-1111-1111-1111-111111111111"
	idB = "aaaabbbb-2222-2222-2222-22222222cccc"
)

var testIdentities = []node.TaskIdentity{{ClientID: idA, Name: "system"}, {ClientID: idB, Name: "trainer"}}

// fakeMinter records the requests the endpoint forwards.
type fakeMinter struct {
	mu    sync.Mutex
	calls []node.TokenRequest
	err   error
	ttl   time.Duration
	block chan struct{}
}

func (f *fakeMinter) mint(ctx context.Context, req *node.TokenRequest) (*node.TokenResponse, error) {
	f.mu.Lock()
	f.calls = append(f.calls, *req)
	n := len(f.calls)
	err, ttl, block := f.err, f.ttl, f.block
	f.mu.Unlock()
	if block != nil {
		select {
		case <-block:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if err != nil {
		return nil, err
	}
	if ttl == 0 {
		ttl = time.Hour
	}
	return &node.TokenResponse{
		AccessToken: "tok-" + strconv.Itoa(n) + "-" + req.ClientID + "-" + req.Resource,
		ExpiresOn:   strconv.FormatInt(time.Now().Add(ttl).Unix(), 10),
		ExpiresIn:   strconv.Itoa(int(ttl / time.Second)),
		Resource:    req.Resource,
		TokenType:   "Bearer",
		ClientID:    req.ClientID,
	}, nil
}

func (f *fakeMinter) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.calls)
}

func (f *fakeMinter) last() node.TokenRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[len(f.calls)-1]
}

func newTestMSI(t *testing.T, f *fakeMinter) *Endpoint {
	t.Helper()
	m, err := New(context.Background(), testIdentities, f.mint, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	return m
}

type msiReq struct {
	method  string
	path    string
	query   url.Values
	headers map[string]string
}

func doMSI(t *testing.T, m *Endpoint, r msiReq) (int, map[string]string) {
	t.Helper()
	if r.method == "" {
		r.method = http.MethodGet
	}
	if r.path == "" {
		r.path = msiPath
	}
	req := httptest.NewRequest(r.method, r.path+"?"+r.query.Encode(), nil)
	for k, v := range r.headers {
		req.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	m.ServeHTTP(w, req)
	if ct := w.Header().Get("Content-Type"); ct != "application/json; charset=utf-8" {
		t.Errorf("content type %q", ct)
	}
	var body map[string]string
	if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil {
		t.Fatalf("body %q: %v", w.Body.String(), err)
	}
	return w.Code, body
}

// azureML is the request the Azure ML documentation's sample sends.
func azureML(m *Endpoint, resource, clientID string) msiReq {
	q := url.Values{"resource": {resource}, "api-version": {"2017-09-01"}}
	if clientID != "" {
		q.Set("clientid", clientID)
	}
	return msiReq{query: q, headers: map[string]string{"Secret": m.secret}}
}

// appService is the request the Azure SDKs send when IDENTITY_ENDPOINT is set.
func appService(m *Endpoint, resource, clientID string) msiReq {
	q := url.Values{"resource": {resource}, "api-version": {"2019-08-01"}}
	if clientID != "" {
		q.Set("client_id", clientID)
	}
	return msiReq{query: q, headers: map[string]string{"X-IDENTITY-HEADER": m.secret}}
}

func wantError(t *testing.T, code int, body map[string]string, wantCode int) {
	t.Helper()
	if code != wantCode {
		t.Fatalf("status %d, want %d (%v)", code, wantCode, body)
	}
	if body["error"] == "" || body["error_description"] == "" {
		t.Fatalf("error body %v", body)
	}
	if body["access_token"] != "" {
		t.Fatalf("token in an error answer: %v", body)
	}
}

func TestMSISecret(t *testing.T) {
	f := &fakeMinter{}
	m := newTestMSI(t, f)
	if len(m.secret) != 64 {
		t.Fatalf("secret %q is not 32 bytes in hex", m.secret)
	}
	if other := newTestMSI(t, f); other.secret == m.secret {
		t.Fatal("two endpoints share a secret")
	}
	q := url.Values{"resource": {"https://management.azure.com"}, "api-version": {"2017-09-01"}}
	for name, headers := range map[string]map[string]string{
		"missing":              nil,
		"wrong Secret":         {"Secret": m.secret[:63] + "x"},
		"wrong identity":       {"X-IDENTITY-HEADER": "nope"},
		"empty":                {"Secret": ""},
		"prefix":               {"Secret": m.secret[:32]},
		"bearer":               {"Authorization": "Bearer " + m.secret},
		"one right, one wrong": {"Secret": m.secret, "X-IDENTITY-HEADER": "nope"},
	} {
		t.Run(name, func(t *testing.T) {
			code, body := doMSI(t, m, msiReq{query: q, headers: headers})
			wantError(t, code, body, http.StatusUnauthorized)
			if body["error"] != "invalid_request" {
				t.Fatalf("error %q", body["error"])
			}
		})
	}
	if f.count() != 0 {
		t.Fatalf("unauthorized requests reached the server: %v", f.calls)
	}
}

func TestMSIRequestShapes(t *testing.T) {
	f := &fakeMinter{}
	m := newTestMSI(t, f)
	for name, r := range map[string]msiReq{
		"azureml 2017-09-01":      azureML(m, "https://management.azure.com", idB),
		"app service 2019-08-01":  appService(m, "https://storage.azure.com", idB),
		"secret with 2019":        {query: url.Values{"resource": {"https://vault.azure.net"}, "api-version": {"2019-08-01"}, "client_id": {idB}}, headers: map[string]string{"Secret": m.secret}},
		"identity header 2017":    {query: url.Values{"resource": {"https://database.windows.net"}, "api-version": {"2017-09-01"}, "clientid": {idB}}, headers: map[string]string{"X-IDENTITY-HEADER": m.secret}},
		"mi_res_id":               {query: url.Values{"resource": {"api://x"}, "api-version": {"2019-08-01"}, "mi_res_id": {idB}}, headers: map[string]string{"X-IDENTITY-HEADER": m.secret}},
		"upper case client id":    azureML(m, "api://upper", strings.ToUpper(idB)),
		"both headers":            {query: url.Values{"resource": {"api://both"}, "clientid": {idB}}, headers: map[string]string{"Secret": m.secret, "X-IDENTITY-HEADER": m.secret}},
		"trailing slash":          {path: msiPath + "/", query: url.Values{"resource": {"api://slash"}, "client_id": {idB}}, headers: map[string]string{"X-IDENTITY-HEADER": m.secret}},
		"same id in both params":  {query: url.Values{"resource": {"api://same"}, "clientid": {idB}, "client_id": {idB}}, headers: map[string]string{"Secret": m.secret}},
		"lower-case secret name":  {query: url.Values{"resource": {"api://lower"}, "clientid": {idB}}, headers: map[string]string{"secret": m.secret}},
		"lower-case identity hdr": {query: url.Values{"resource": {"api://lower2"}, "client_id": {idB}}, headers: map[string]string{"x-identity-header": m.secret}},
	} {
		t.Run(name, func(t *testing.T) {
			code, body := doMSI(t, m, r)
			if code != http.StatusOK {
				t.Fatalf("status %d: %v", code, body)
			}
			res := r.query.Get("resource")
			got := f.last()
			if got.Resource != res || got.ClientID != idB {
				t.Fatalf("forwarded %+v", got)
			}
			if body["access_token"] == "" || body["resource"] != res || body["token_type"] != "Bearer" || body["expires_on"] == "" {
				t.Fatalf("answer %v", body)
			}
			if _, err := strconv.ParseInt(body["expires_on"], 10, 64); err != nil {
				t.Fatalf("expires_on %q", body["expires_on"])
			}
		})
	}
}

func TestMSIDefaultIdentity(t *testing.T) {
	f := &fakeMinter{}
	m := newTestMSI(t, f)
	for name, r := range map[string]msiReq{
		"no client id":    azureML(m, "https://management.azure.com", ""),
		"empty client id": {query: url.Values{"resource": {"https://storage.azure.com"}, "clientid": {""}, "api-version": {"2017-09-01"}}, headers: map[string]string{"Secret": m.secret}},
		"app service":     appService(m, "https://vault.azure.net", ""),
		"default by name": azureML(m, "api://default", idA),
	} {
		t.Run(name, func(t *testing.T) {
			code, body := doMSI(t, m, r)
			if code != http.StatusOK {
				t.Fatalf("status %d: %v", code, body)
			}
			if got := f.last(); got.ClientID != idA {
				t.Fatalf("forwarded client id %q, want the default %q", got.ClientID, idA)
			}
		})
	}
}

func TestMSIBadRequests(t *testing.T) {
	f := &fakeMinter{}
	m := newTestMSI(t, f)
	hdr := map[string]string{"Secret": m.secret}
	for name, tc := range map[string]struct {
		r    msiReq
		want int
	}{
		"missing resource":      {msiReq{query: url.Values{"api-version": {"2017-09-01"}, "clientid": {idA}}, headers: hdr}, http.StatusBadRequest},
		"empty resource":        {msiReq{query: url.Values{"resource": {""}, "clientid": {idA}}, headers: hdr}, http.StatusBadRequest},
		"two resources":         {msiReq{query: url.Values{"resource": {"a", "b"}}, headers: hdr}, http.StatusBadRequest},
		"unknown clientid":      {azureML(m, "https://management.azure.com", "33333333-3333-3333-3333-333333333333"), http.StatusBadRequest},
		"unknown client_id":     {appService(m, "https://management.azure.com", "None"), http.StatusBadRequest},
		"unknown mi_res_id":     {msiReq{query: url.Values{"resource": {"r"}, "mi_res_id": {"/subscriptions/x/resourceGroups/rg/providers/Microsoft.ManagedIdentity/userAssignedIdentities/other"}}, headers: hdr}, http.StatusBadRequest},
		"two identities":        {msiReq{query: url.Values{"resource": {"r"}, "clientid": {idA}, "client_id": {idB}}, headers: hdr}, http.StatusBadRequest},
		"object id":             {msiReq{query: url.Values{"resource": {"r"}, "object_id": {"x"}}, headers: hdr}, http.StatusBadRequest},
		"principal id":          {msiReq{query: url.Values{"resource": {"r"}, "principal_id": {"x"}}, headers: hdr}, http.StatusBadRequest},
		"x-forwarded-for":       {msiReq{query: url.Values{"resource": {"r"}}, headers: map[string]string{"Secret": m.secret, "X-Forwarded-For": "10.0.0.1"}}, http.StatusBadRequest},
		"forwarded":             {msiReq{query: url.Values{"resource": {"r"}}, headers: map[string]string{"Secret": m.secret, "Forwarded": "for=10.0.0.1"}}, http.StatusBadRequest},
		"x-forwarded-for first": {msiReq{query: url.Values{"resource": {"r"}}, headers: map[string]string{"X-Forwarded-For": "10.0.0.1"}}, http.StatusBadRequest},
		"post":                  {msiReq{method: http.MethodPost, query: url.Values{"resource": {"r"}}, headers: hdr}, http.StatusMethodNotAllowed},
		"head-less put":         {msiReq{method: http.MethodPut, query: url.Values{"resource": {"r"}}, headers: hdr}, http.StatusMethodNotAllowed},
		"other path":            {msiReq{path: "/metadata/identity/oauth2/token", query: url.Values{"resource": {"r"}}, headers: hdr}, http.StatusNotFound},
	} {
		t.Run(name, func(t *testing.T) {
			code, body := doMSI(t, m, tc.r)
			wantError(t, code, body, tc.want)
		})
	}
	if f.count() != 0 {
		t.Fatalf("bad requests reached the server: %v", f.calls)
	}
}

func TestMSIServerErrors(t *testing.T) {
	for name, tc := range map[string]struct {
		err      error
		want     int
		wantDesc string
	}{
		"attempt ended": {core.Errorf(core.EFORBIDDEN, "the attempt has ended"), http.StatusForbidden, "the attempt has ended"},
		"not found":     {core.Errorf(core.ENOTFOUND, "no such attempt"), http.StatusForbidden, "no such attempt"},
		"invalid":       {core.Errorf(core.EINVALID, "resource: not a valid audience"), http.StatusBadRequest, "resource: not a valid audience"},
		"server 5xx":    {core.Errorf(core.EINTERNAL, "the server answered 502 Bad Gateway"), http.StatusServiceUnavailable, ""},
		"store full":    {core.Errorf(core.ESTORAGEFULL, "the store cannot write: its disk is full"), http.StatusServiceUnavailable, ""},
		"unreachable":   {errors.New("cannot reach the Shoal server at http://x: connection refused"), http.StatusServiceUnavailable, ""},
	} {
		t.Run(name, func(t *testing.T) {
			f := &fakeMinter{err: tc.err}
			m := newTestMSI(t, f)
			code, body := doMSI(t, m, azureML(m, "https://management.azure.com", ""))
			wantError(t, code, body, tc.want)
			if tc.wantDesc != "" && body["error_description"] != tc.wantDesc {
				t.Fatalf("description %q, want %q", body["error_description"], tc.wantDesc)
			}
			// Failures are not cached: the next request asks again.
			doMSI(t, m, azureML(m, "https://management.azure.com", ""))
			if f.count() != 2 {
				t.Fatalf("%d calls, want 2", f.count())
			}
		})
	}
}

func TestMSICache(t *testing.T) {
	f := &fakeMinter{}
	m := newTestMSI(t, f)
	now := time.Now()
	m.now = func() time.Time { return now }

	_, first := doMSI(t, m, azureML(m, "https://management.azure.com", ""))
	// Same resource and (default) identity, either request style: cached.
	_, second := doMSI(t, m, appService(m, "https://management.azure.com", idA))
	if f.count() != 1 {
		t.Fatalf("%d calls to the server, want 1", f.count())
	}
	if first["access_token"] != second["access_token"] {
		t.Fatalf("cached token differs: %v vs %v", first, second)
	}
	// Another resource or identity is another token.
	doMSI(t, m, azureML(m, "https://storage.azure.com", ""))
	doMSI(t, m, azureML(m, "https://management.azure.com", idB))
	if f.count() != 3 {
		t.Fatalf("%d calls to the server, want 3", f.count())
	}
	// A cached answer's expires_in counts down.
	now = now.Add(10 * time.Minute)
	_, third := doMSI(t, m, azureML(m, "https://management.azure.com", ""))
	if f.count() != 3 || third["access_token"] != first["access_token"] {
		t.Fatalf("not served from the cache: %d calls, %v", f.count(), third)
	}
	if in, _ := strconv.Atoi(third["expires_in"]); in > 3000 || in < 2900 {
		t.Fatalf("expires_in %q after 10 minutes of a 1 hour token", third["expires_in"])
	}
	// Within 5 minutes of expiry the server is asked again.
	now = now.Add(46 * time.Minute)
	_, fourth := doMSI(t, m, azureML(m, "https://management.azure.com", ""))
	if f.count() != 4 || fourth["access_token"] == first["access_token"] {
		t.Fatalf("near-expiry token served from the cache: %d calls, %v", f.count(), fourth)
	}
}

func TestMSIShortLivedTokenNotCached(t *testing.T) {
	f := &fakeMinter{ttl: 4 * time.Minute}
	m := newTestMSI(t, f)
	doMSI(t, m, azureML(m, "https://management.azure.com", ""))
	doMSI(t, m, azureML(m, "https://management.azure.com", ""))
	if f.count() != 2 {
		t.Fatalf("%d calls, want 2: a token expiring within 5 minutes is not cached", f.count())
	}
}

func TestMSIConcurrentRequestsShareOneCall(t *testing.T) {
	f := &fakeMinter{block: make(chan struct{})}
	m := newTestMSI(t, f)
	var wg sync.WaitGroup
	var ok atomic.Int32
	for range 8 {
		wg.Go(func() {
			if code, _ := doMSI(t, m, azureML(m, "https://management.azure.com", "")); code == http.StatusOK {
				ok.Add(1)
			}
		})
	}
	for f.count() == 0 {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(20 * time.Millisecond)
	close(f.block)
	wg.Wait()
	if f.count() != 1 || ok.Load() != 8 {
		t.Fatalf("%d calls, %d answers: want 1 call and 8 answers", f.count(), ok.Load())
	}
}

func TestMSIEndpointListens(t *testing.T) {
	f := &fakeMinter{}
	m, err := Start(context.Background(), testIdentities, f.mint, nil)
	if err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(m.url)
	if err != nil || u.Hostname() != "127.0.0.1" || u.Path != msiPath || u.Port() == "" || u.Port() == "0" {
		t.Fatalf("endpoint %q", m.url)
	}
	get := func() (*http.Response, error) {
		req, _ := http.NewRequest(http.MethodGet, m.url+"?resource=https%3A%2F%2Fmanagement.azure.com&clientid="+idB+"&api-version=2017-09-01", nil)
		req.Header.Set("Secret", m.secret)
		return http.DefaultClient.Do(req)
	}
	resp, err := get()
	if err != nil {
		t.Fatal(err)
	}
	var tok node.TokenResponse
	data, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || json.Unmarshal(data, &tok) != nil || tok.AccessToken == "" || tok.ClientID != idB {
		t.Fatalf("status %d: %s", resp.StatusCode, data)
	}
	m.Close()
	m.Close()
	if resp, err := get(); err == nil {
		resp.Body.Close()
		t.Fatal("the endpoint still answers after Close")
	}
}

// Azure SDKs name a user-assigned identity by its resource id in mi_res_id.
func TestMSIIdentityByResourceID(t *testing.T) {
	f := &fakeMinter{}
	m := newTestMSI(t, f)
	r := azureML(m, "shoal", "")
	r.query.Set("mi_res_id", "/subscriptions/x/resourceGroups/y/providers/Microsoft.ManagedIdentity/userAssignedIdentities/Trainer")
	if code, body := doMSI(t, m, r); code != http.StatusOK {
		t.Fatalf("status %d: %v", code, body)
	}
	if got := f.last(); got.ClientID != idB {
		t.Fatalf("forwarded client id %q, want trainer's %q", got.ClientID, idB)
	}
	r.query.Set("mi_res_id", "/subscriptions/x/providers/Microsoft.ManagedIdentity/userAssignedIdentities/someone-else")
	if code, _ := doMSI(t, m, r); code != http.StatusBadRequest {
		t.Fatalf("an identity of another compute: status %d, want 400", code)
	}
}
