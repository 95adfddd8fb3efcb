// Package msi is the managed-identity endpoint a node's agent serves to
// the work it runs: Azure's MSI protocol (MSI_ENDPOINT, MSI_SECRET,
// IDENTITY_ENDPOINT, IDENTITY_HEADER) on 127.0.0.1, minting tokens for
// the task's identities through the server and caching them.
package msi

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/node"
)

// The per-rank managed identity endpoint. A job on a compute with a managed
// identity gets tokens the way Azure ML code does:
//
//	GET $MSI_ENDPOINT?resource=<aud>&clientid=<id>&api-version=2017-09-01
//	Secret: $MSI_SECRET
//
// or in the App Service form the Azure SDKs prefer when IDENTITY_ENDPOINT is
// set:
//
//	GET $IDENTITY_ENDPOINT?resource=<aud>&client_id=<id>&api-version=2019-08-01
//	X-IDENTITY-HEADER: $IDENTITY_HEADER
//
// The endpoint listens on loopback only, checks the rank's secret, lets the
// job pick only among the identities of its task and forwards the request to
// the server, which mints the token for this rank (and refuses once the
// attempt has ended). Tokens are cached until shortly before they expire,
// since SDKs ask often.

const (
	msiPath = "/msi/token"
	// msiRefreshMargin: a cached token is served until this long before it
	// expires; after that the server is asked for a new one.
	msiRefreshMargin = 5 * time.Minute
	// msiMintTimeout bounds one round trip to the server.
	msiMintTimeout = 30 * time.Second
	// msiMaxCache bounds the cache; the resource is chosen by the job.
	msiMaxCache = 256
	// msiMaxResource bounds the resource parameter.
	msiMaxResource = 2048
)

// Minter asks the server for a token on behalf of the rank; in the agent
// it is AgentClient.Token bound to the rank's reference.
type Minter func(ctx context.Context, req *node.TokenRequest) (*node.TokenResponse, error)

type msiKey struct{ resource, clientID string }

type msiCached struct {
	resp    node.TokenResponse
	expires time.Time
}

type msiFlight struct {
	done chan struct{}
	resp *node.TokenResponse
	err  error
}

// Endpoint serves tokens to one rank's processes.
type Endpoint struct {
	secret string
	ids    []node.TaskIdentity
	mint   Minter
	log    *slog.Logger
	now    func() time.Time

	// ctx bounds the calls to the server; cancelled by Close.
	ctx    context.Context
	cancel context.CancelFunc

	mu      sync.Mutex
	cache   map[msiKey]*msiCached
	flights map[msiKey]*msiFlight

	srv  *http.Server
	url  string
	done chan struct{}
	once sync.Once
}

// New returns the handler with a fresh secret; it does not listen
// (see Start). ids must not be empty.
func New(ctx context.Context, ids []node.TaskIdentity, mint Minter, log *slog.Logger) (*Endpoint, error) {
	if len(ids) == 0 {
		return nil, errors.New("msi endpoint: no identity")
	}
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, fmt.Errorf("msi endpoint: secret: %w", err)
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	m := &Endpoint{
		secret:  hex.EncodeToString(b[:]),
		ids:     append([]node.TaskIdentity(nil), ids...),
		mint:    mint,
		log:     log,
		now:     time.Now,
		cache:   map[msiKey]*msiCached{},
		flights: map[msiKey]*msiFlight{},
	}
	m.ctx, m.cancel = context.WithCancel(ctx)
	return m, nil
}

// Start starts an endpoint on 127.0.0.1 on a free port.
func Start(ctx context.Context, ids []node.TaskIdentity, mint Minter, log *slog.Logger) (*Endpoint, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("msi endpoint: %w", err)
	}
	return Serve(ctx, ids, mint, log, ln)
}

// Serve starts an endpoint on ln, a loopback listener (one made in a
// container's network namespace serves that container's processes); it
// closes ln when it fails or is closed.
func Serve(ctx context.Context, ids []node.TaskIdentity, mint Minter, log *slog.Logger, ln net.Listener) (*Endpoint, error) {
	m, err := New(ctx, ids, mint, log)
	if err != nil {
		ln.Close()
		return nil, err
	}
	m.url = "http://" + ln.Addr().String() + msiPath
	m.srv = &http.Server{
		Handler:           m,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       10 * time.Second,
		WriteTimeout:      msiMintTimeout + 10*time.Second,
		IdleTimeout:       60 * time.Second,
		MaxHeaderBytes:    16 << 10,
		BaseContext:       func(net.Listener) context.Context { return m.ctx },
		ErrorLog:          slog.NewLogLogger(m.log.Handler(), slog.LevelDebug),
	}
	m.done = make(chan struct{})
	go func() {
		defer close(m.done)
		if err := m.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			m.log.Warn("msi endpoint stopped", "err", err)
		}
	}()
	return m, nil
}

// Also serves the endpoint on another listener too (the loopback of a
// container's network namespace, where the job's processes look for the
// same address); Close closes it with the first.
func (m *Endpoint) Also(ln net.Listener) {
	go func() { _ = m.srv.Serve(ln) }()
}

// Close stops the endpoint and aborts calls to the server in flight. It is
// safe to call more than once.
func (m *Endpoint) Close() {
	m.once.Do(func() {
		m.cancel()
		if m.srv != nil {
			m.srv.Close()
			<-m.done
		}
	})
}

// URL is where the endpoint answers.
func (m *Endpoint) URL() string { return m.url }

// Env is what the job's processes need to find the endpoint.
func (m *Endpoint) Env() map[string]string {
	return map[string]string{
		"MSI_ENDPOINT":               m.url,
		"MSI_SECRET":                 m.secret,
		"IDENTITY_ENDPOINT":          m.url,
		"IDENTITY_HEADER":            m.secret,
		"DEFAULT_IDENTITY_CLIENT_ID": m.ids[0].ClientID,
	}
}

type msiError struct {
	Error       string `json:"error"`
	Description string `json:"error_description"`
}

func writeMSIJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func writeMSIError(w http.ResponseWriter, status int, code, desc string) {
	writeMSIJSON(w, status, msiError{Error: code, Description: desc})
}

// ServeHTTP answers a token request.
func (m *Endpoint) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != msiPath && r.URL.Path != msiPath+"/" {
		writeMSIError(w, http.StatusNotFound, "not_found", "the token endpoint is "+msiPath)
		return
	}
	if r.Method != http.MethodGet {
		w.Header().Set("Allow", http.MethodGet)
		writeMSIError(w, http.StatusMethodNotAllowed, "invalid_request", "only GET is supported")
		return
	}
	// Like IMDS, the endpoint serves code on this node only: a request that
	// went through a proxy is refused.
	if r.Header.Get("X-Forwarded-For") != "" || r.Header.Get("Forwarded") != "" {
		writeMSIError(w, http.StatusBadRequest, "invalid_request", "requests through a proxy (X-Forwarded-For) are not accepted")
		return
	}
	if !m.authorized(r) {
		writeMSIError(w, http.StatusUnauthorized, "invalid_request", "missing or wrong secret: send $MSI_SECRET in the Secret header or $IDENTITY_HEADER in the X-IDENTITY-HEADER header")
		return
	}
	q := r.URL.Query()
	resource, err := singleParam(q["resource"], "resource")
	if err != nil {
		writeMSIError(w, http.StatusBadRequest, "invalid_request", err.Error())
		return
	}
	if resource == "" {
		writeMSIError(w, http.StatusBadRequest, "invalid_request", "the resource parameter is required")
		return
	}
	if len(resource) > msiMaxResource {
		writeMSIError(w, http.StatusBadRequest, "invalid_request", "the resource parameter is too long")
		return
	}
	id, err := m.identity(q)
	if err != nil {
		writeMSIError(w, http.StatusBadRequest, "invalid_request", err.Error())
		return
	}
	resp, err := m.token(r.Context(), msiKey{resource: resource, clientID: id.ClientID})
	if err != nil {
		status, code, desc := msiFailure(err)
		m.log.Warn("token request failed", "resource", resource, "client_id", id.ClientID, "status", status, "err", err)
		writeMSIError(w, status, code, desc)
		return
	}
	writeMSIJSON(w, http.StatusOK, resp)
}

// authorized checks the secret; every secret header sent must match and at
// least one must be sent.
func (m *Endpoint) authorized(r *http.Request) bool {
	seen := false
	for _, h := range []string{"Secret", "X-IDENTITY-HEADER"} {
		for _, v := range r.Header.Values(h) {
			if subtle.ConstantTimeCompare([]byte(v), []byte(m.secret)) != 1 {
				return false
			}
			seen = true
		}
	}
	return seen
}

// singleParam returns a query parameter given at most once (repeats of the
// same value are tolerated).
func singleParam(vals []string, name string) (string, error) {
	v := ""
	for _, s := range vals {
		if s == "" {
			continue
		}
		if v != "" && s != v {
			return "", fmt.Errorf("the %s parameter is given more than once", name)
		}
		v = s
	}
	return v, nil
}

// identity picks the identity the request names (clientid, client_id, or
// mi_res_id / msi_res_id as a client ID or an Azure-style resource id), or
// the default one when none is named. Only the task's identities can be
// named.
func (m *Endpoint) identity(q map[string][]string) (node.TaskIdentity, error) {
	for _, p := range []string{"object_id", "principal_id"} {
		if v, _ := singleParam(q[p], p); v != "" {
			return node.TaskIdentity{}, fmt.Errorf("selecting an identity by %s is not supported; use client_id", p)
		}
	}
	want := ""
	for _, p := range []string{"clientid", "client_id", "mi_res_id", "msi_res_id"} {
		v, err := singleParam(q[p], p)
		if err != nil {
			return node.TaskIdentity{}, err
		}
		if v == "" {
			continue
		}
		if want != "" && !strings.EqualFold(want, v) {
			return node.TaskIdentity{}, errors.New("the request names two different identities")
		}
		want = v
	}
	if want == "" {
		return m.ids[0], nil
	}
	for _, id := range m.ids {
		if id.ClientID != "" && strings.EqualFold(id.ClientID, want) {
			return id, nil
		}
	}
	// Azure SDKs also name a user-assigned identity by its resource id,
	// ".../userAssignedIdentities/<name>": match the name.
	if i := strings.LastIndex(strings.ToLower(want), "/userassignedidentities/"); i >= 0 {
		name := want[i+len("/userAssignedIdentities/"):]
		for _, id := range m.ids {
			if id.Name != "" && strings.EqualFold(id.Name, name) {
				return id, nil
			}
		}
	}
	return node.TaskIdentity{}, fmt.Errorf("identity %q is not assigned to this compute", want)
}

// token returns a cached token or asks the server, one call per key at a
// time.
func (m *Endpoint) token(ctx context.Context, key msiKey) (*node.TokenResponse, error) {
	m.mu.Lock()
	if c := m.cache[key]; c != nil {
		now := m.now()
		if now.Before(c.expires.Add(-msiRefreshMargin)) {
			resp := c.resp
			if resp.ExpiresIn != "" {
				resp.ExpiresIn = strconv.FormatInt(int64(c.expires.Sub(now)/time.Second), 10)
			}
			m.mu.Unlock()
			return &resp, nil
		}
		delete(m.cache, key)
	}
	f := m.flights[key]
	if f == nil {
		f = &msiFlight{done: make(chan struct{})}
		m.flights[key] = f
		go m.fetch(key, f)
	}
	m.mu.Unlock()
	select {
	case <-f.done:
		if f.err != nil {
			return nil, f.err
		}
		resp := *f.resp
		return &resp, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// fetch asks the server for a token; it runs on the endpoint's context, not
// the caller's, so a caller that gives up does not fail the others waiting.
func (m *Endpoint) fetch(key msiKey, f *msiFlight) {
	ctx, cancel := context.WithTimeout(m.ctx, msiMintTimeout)
	defer cancel()
	resp, err := m.mint(ctx, &node.TokenRequest{Resource: key.resource, ClientID: key.clientID})
	if err == nil && resp == nil {
		err = errors.New("the server returned no token")
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.flights, key)
	f.resp, f.err = resp, err
	// The waiters are released once the token is cached, so a request that
	// follows one answered never misses the cache.
	defer close(f.done)
	if err != nil {
		return
	}
	now := m.now()
	exp, ok := tokenExpiry(resp, now)
	if !ok || !now.Before(exp.Add(-msiRefreshMargin)) {
		return
	}
	if len(m.cache) >= msiMaxCache {
		for k, c := range m.cache {
			if !now.Before(c.expires.Add(-msiRefreshMargin)) {
				delete(m.cache, k)
			}
		}
		for k := range m.cache {
			if len(m.cache) < msiMaxCache {
				break
			}
			delete(m.cache, k)
		}
	}
	m.cache[key] = &msiCached{resp: *resp, expires: exp}
}

// tokenExpiry reads when a token expires: expires_on as seconds since the
// epoch (or the date form App Service's 2017 API used), else expires_in.
func tokenExpiry(resp *node.TokenResponse, now time.Time) (time.Time, bool) {
	if s := strings.TrimSpace(resp.ExpiresOn); s != "" {
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			return time.Unix(n, 0), true
		}
		if f, err := strconv.ParseFloat(s, 64); err == nil {
			return time.Unix(int64(f), 0), true
		}
		for _, layout := range []string{time.RFC3339, "1/2/2006 3:04:05 PM -07:00"} {
			if t, err := time.Parse(layout, s); err == nil {
				return t, true
			}
		}
	}
	if n, err := strconv.ParseInt(strings.TrimSpace(resp.ExpiresIn), 10, 64); err == nil {
		return now.Add(time.Duration(n) * time.Second), true
	}
	return time.Time{}, false
}

// msiFailure maps a failed call to the server to the endpoint's answer: a
// refusal keeps the server's message; an unreachable server is 503, which
// the SDKs retry.
func msiFailure(err error) (int, string, string) {
	var se *core.Error
	if errors.As(err, &se) {
		switch se.Code {
		case core.EINTERNAL, core.EUNAVAILABLE, core.ESTORAGEFULL:
		case core.EINVALID, core.EQUOTA:
			return http.StatusBadRequest, "invalid_request", se.Message
		default:
			return http.StatusForbidden, "access_denied", se.Message
		}
	}
	return http.StatusServiceUnavailable, "temporarily_unavailable", "the Shoal server could not be reached to get a token; retry later"
}
