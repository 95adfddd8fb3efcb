package idle

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// ErrTerminalsUnavailable is returned by Jupyter.Terminals when the
// server has no terminals API (Jupyter answers 404 when terminals are
// disabled or terminado is missing). There can be no terminal activity
// then, so callers treat it as an empty list; it is an error rather than
// a silent empty list so that a wrong BaseURL is not mistaken for it.
var ErrTerminalsUnavailable = errors.New("jupyter: terminals are not available on this server (GET /api/terminals: 404)")

// Jupyter reads the kernels and terminals of a Jupyter server through its
// REST API, for the idle signals.
type Jupyter struct {
	// BaseURL is the server's URL including its base_url, e.g.
	// "http://127.0.0.1:8888/some/prefix/"; a trailing slash is optional.
	BaseURL string
	// Token is the server's token, sent as "Authorization: token …".
	Token string
	// HTTP is the client to use; nil means one with a 10 s timeout, so
	// that a hung server cannot stall the caller's loop.
	HTTP *http.Client
}

var defaultHTTP = &http.Client{Timeout: 10 * time.Second}

// maxBody bounds what is read of an answer: a listing of kernels is a few
// hundred bytes each.
const maxBody = 4 << 20

// wireKernel and wireTerminal are Jupyter's JSON, with last_activity as
// text so that its parse errors name the entry.
type wireKernel struct {
	ID             string `json:"id"`
	Name           string `json:"name"`
	LastActivity   string `json:"last_activity"`
	ExecutionState string `json:"execution_state"`
	Connections    int    `json:"connections"`
}

type wireTerminal struct {
	Name         string `json:"name"`
	LastActivity string `json:"last_activity"`
}

// Kernels lists the server's kernels (GET {BaseURL}/api/kernels).
func (j *Jupyter) Kernels(ctx context.Context) ([]Kernel, error) {
	var wire []wireKernel
	if _, err := j.get(ctx, "api/kernels", &wire); err != nil {
		return nil, err
	}
	out := make([]Kernel, 0, len(wire))
	for _, w := range wire {
		t, err := parseActivity(w.LastActivity)
		if err != nil {
			return nil, fmt.Errorf("jupyter: kernel %s: %w", w.ID, err)
		}
		out = append(out, Kernel{ID: w.ID, Name: w.Name, ExecutionState: w.ExecutionState, LastActivity: t, Connections: w.Connections})
	}
	return out, nil
}

// Terminals lists the server's terminals (GET {BaseURL}/api/terminals).
// It returns ErrTerminalsUnavailable when the server has no terminals.
func (j *Jupyter) Terminals(ctx context.Context) ([]Terminal, error) {
	var wire []wireTerminal
	found, err := j.get(ctx, "api/terminals", &wire)
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, ErrTerminalsUnavailable
	}
	out := make([]Terminal, 0, len(wire))
	for _, w := range wire {
		t, err := parseActivity(w.LastActivity)
		if err != nil {
			return nil, fmt.Errorf("jupyter: terminal %s: %w", w.Name, err)
		}
		out = append(out, Terminal{Name: w.Name, LastActivity: t})
	}
	return out, nil
}

// get decodes the JSON answer to GET {BaseURL}/{path} into v. A 404 on
// the terminals API returns found=false; every other status but 200 is an
// error naming the status (never the token).
func (j *Jupyter) get(ctx context.Context, path string, v any) (found bool, err error) {
	if j.BaseURL == "" {
		return false, errors.New("jupyter: no BaseURL")
	}
	u := strings.TrimRight(j.BaseURL, "/") + "/" + path
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return false, fmt.Errorf("jupyter: %w", err)
	}
	req.Header.Set("Accept", "application/json")
	if j.Token != "" {
		req.Header.Set("Authorization", "token "+j.Token)
	}
	c := j.HTTP
	if c == nil {
		c = defaultHTTP
	}
	resp, err := c.Do(req)
	if err != nil {
		return false, fmt.Errorf("jupyter: GET %s: %w", u, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		return false, fmt.Errorf("jupyter: GET %s: reading the answer: %w", u, err)
	}
	switch {
	case resp.StatusCode == http.StatusNotFound && path == "api/terminals":
		return false, nil
	case resp.StatusCode == http.StatusForbidden || resp.StatusCode == http.StatusUnauthorized:
		return false, fmt.Errorf("jupyter: GET %s: %s: the token was refused", u, resp.Status)
	case resp.StatusCode == http.StatusNotFound:
		return false, fmt.Errorf("jupyter: GET %s: %s: is BaseURL the server's base_url?", u, resp.Status)
	case resp.StatusCode != http.StatusOK:
		return false, fmt.Errorf("jupyter: GET %s: %s: %s", u, resp.Status, snippet(body))
	}
	if err := json.Unmarshal(body, v); err != nil {
		return false, fmt.Errorf("jupyter: GET %s: not the expected JSON: %w", u, err)
	}
	return true, nil
}

// parseActivity reads Jupyter's last_activity: RFC 3339 with fractional
// seconds, in UTC ("2024-05-01T10:20:30.123456Z"). Empty means never.
func parseActivity(s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("last_activity %q is not an RFC 3339 time", s)
	}
	return t.UTC(), nil
}

// snippet shortens an error answer for a message.
func snippet(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 200 {
		s = strings.ToValidUTF8(s[:200], "") + "…"
	}
	if s == "" {
		return "(empty answer)"
	}
	return s
}
