package client

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/shoal-ml/shoal/internal/tlsconf"
)

// Client calls a Shoal server. Errors come back as *shoal.Error with the
// code the server chose.
type Client struct {
	// BaseURL is the server, e.g. http://127.0.0.1:7420.
	BaseURL string
	// Token is the bearer token sent with every request.
	Token string
	// HTTP is the client used; nil means a client with a 60 s timeout.
	HTTP *http.Client
	// Base, when set, gives the server to call instead of BaseURL (an
	// agent's client moving between servers), and Unreachable is told
	// when a call could not reach it at all (no answer, not an error
	// answer), so that the next call goes elsewhere.
	Base        func() string
	Unreachable func(base string, err error)
}

// base is the server the next call goes to.
func (c *Client) base() string {
	if c.Base != nil {
		return c.Base()
	}
	return c.BaseURL
}

// NewClient returns a client for baseURL authenticating with token.
func NewClient(baseURL, token string) *Client {
	return &Client{BaseURL: strings.TrimRight(baseURL, "/"), Token: token, HTTP: &http.Client{Timeout: 60 * time.Second}}
}

// TrustCA makes the client trust caPEM's certificates (a server's private
// CA) besides the system's roots.
func (c *Client) TrustCA(caPEM []byte) error {
	if len(caPEM) == 0 {
		return nil
	}
	pool, err := tlsconf.Pool(caPEM)
	if err != nil {
		return err
	}
	t := http.DefaultTransport.(*http.Transport).Clone()
	if c.HTTP != nil {
		if own, ok := c.HTTP.Transport.(*http.Transport); ok {
			t = own.Clone() // keep its dialer (an agent's short dial timeout)
		}
	}
	t.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	if c.HTTP == nil {
		c.HTTP = &http.Client{Timeout: 60 * time.Second}
	}
	c.HTTP.Transport = t
	return nil
}

// do sends a request with an optional JSON body and decodes a JSON answer
// into out (when not nil). It returns the answer's status code.
func (c *Client) do(ctx context.Context, method, path string, body any, headers map[string]string, out any) (int, error) {
	var rd io.Reader
	if raw, ok := body.(json.RawMessage); ok {
		rd = bytes.NewReader(raw)
	} else if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return 0, err
		}
		rd = bytes.NewReader(b)
	}
	base := c.base()
	req, err := http.NewRequestWithContext(ctx, method, base+path, rd)
	if err != nil {
		return 0, err
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	for k, v := range headers {
		if v != "" {
			req.Header.Set(k, v)
		}
	}
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		if c.Unreachable != nil && ctx.Err() == nil {
			c.Unreachable(base, err)
		}
		return 0, fmt.Errorf("cannot reach the Shoal server at %s: %w (is `shoal server` running? set SHOAL_SERVER or the server in ~/.config/shoal/config.yaml)", base, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return 0, err
	}
	if resp.StatusCode >= 400 {
		return resp.StatusCode, decodeErrorResponse(resp.StatusCode, data)
	}
	if out != nil && len(data) > 0 {
		if err := json.Unmarshal(data, out); err != nil {
			return resp.StatusCode, fmt.Errorf("the server's answer to %s %s is not valid JSON: %w", method, path, err)
		}
	}
	return resp.StatusCode, nil
}

func wsPath(workspace string) string {
	return "/api/v1/workspaces/" + url.PathEscape(workspace)
}

// Health calls /healthz.
func (c *Client) Health(ctx context.Context) error {
	_, err := c.do(ctx, http.MethodGet, "/healthz", nil, nil, nil)
	return err
}

// Ready calls /readyz: whether the server's store answers, its role
// among the replicas, the leader, the lease and the replicas seen.
func (c *Client) Ready(ctx context.Context) (map[string]any, error) {
	var out map[string]any
	_, err := c.do(ctx, http.MethodGet, "/readyz", nil, nil, &out)
	return out, err
}

func bytesReader(b []byte) io.Reader { return bytes.NewReader(b) }
