package testk8s

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// Client is a small REST client for the test cluster's API over net/http,
// authenticated by the admin token: enough for tests to create, read and
// delete objects and read logs without making the main module depend on
// client-go.
type Client struct {
	// Server is the API's base URL ("https://127.0.0.1:<port>").
	Server string
	token  string
	http   *http.Client
}

// newClient trusts only the cluster's CA.
func newClient(server, token string, caPEM []byte) (*Client, error) {
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		return nil, errors.New("the cluster CA's PEM holds no certificate")
	}
	return &Client{Server: server, token: token, http: &http.Client{
		Timeout:   30 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}},
	}}, nil
}

// StatusError is a response of the API other than 2xx.
type StatusError struct {
	Method, Path string
	Code         int
	Body         string
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("%s %s: %d: %s", e.Method, e.Path, e.Code, tail(e.Body, 1000))
}

// IsNotFound reports whether err is the API's 404.
func IsNotFound(err error) bool {
	var se *StatusError
	return errors.As(err, &se) && se.Code == http.StatusNotFound
}

// Raw sends a request with body (JSON-encoded unless it is nil, []byte or
// a string) to path ("/api/v1/namespaces") and returns the response body.
func (c *Client) Raw(ctx context.Context, method, path string, body any) ([]byte, error) {
	var r io.Reader
	switch b := body.(type) {
	case nil:
	case []byte:
		r = bytes.NewReader(b)
	case string:
		r = strings.NewReader(b)
	default:
		data, err := json.Marshal(b)
		if err != nil {
			return nil, fmt.Errorf("%s %s: encode body: %w", method, path, err)
		}
		r = bytes.NewReader(data)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.Server+path, r)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("Accept", "application/json, */*")
	if r != nil {
		req.Header.Set("Content-Type", "application/json")
		if method == http.MethodPatch {
			req.Header.Set("Content-Type", "application/merge-patch+json")
		}
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode/100 != 2 {
		return nil, &StatusError{Method: method, Path: path, Code: resp.StatusCode, Body: string(data)}
	}
	return data, nil
}

// Do sends a request as Raw does and decodes a JSON response into out
// (unless out is nil).
func (c *Client) Do(ctx context.Context, method, path string, body, out any) error {
	data, err := c.Raw(ctx, method, path, body)
	if err != nil || out == nil {
		return err
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("%s %s: decode: %w", method, path, err)
	}
	return nil
}

// Pod is the part of a pod the harness's own waits read.
type Pod struct {
	Metadata struct {
		Name, Namespace string
	} `json:"metadata"`
	Spec struct {
		NodeName string `json:"nodeName"`
	} `json:"spec"`
	Status struct {
		Phase      string `json:"phase"`
		Reason     string `json:"reason"`
		Message    string `json:"message"`
		PodIP      string `json:"podIP"`
		Conditions []struct {
			Type, Status, Reason, Message string
		} `json:"conditions"`
		ContainerStatuses []struct {
			Name  string          `json:"name"`
			State json.RawMessage `json:"state"`
		} `json:"containerStatuses"`
	} `json:"status"`
}

// CreatePod creates the pod (a manifest as a map or a JSON string) in ns.
func (c *Client) CreatePod(ctx context.Context, ns string, pod any) error {
	return c.Do(ctx, http.MethodPost, "/api/v1/namespaces/"+ns+"/pods", pod, nil)
}

// GetPod reads a pod.
func (c *Client) GetPod(ctx context.Context, ns, name string) (*Pod, error) {
	var p Pod
	return &p, c.Do(ctx, http.MethodGet, "/api/v1/namespaces/"+ns+"/pods/"+name, nil, &p)
}

// WaitPod polls a pod until its phase is one of phases and returns it;
// at ctx's end it returns the last pod read with an error that describes
// it (phase, reason, conditions, container states).
func (c *Client) WaitPod(ctx context.Context, ns, name string, phases ...string) (*Pod, error) {
	var last *Pod
	var lastErr error
	for {
		p, err := c.GetPod(ctx, ns, name)
		if err == nil {
			last, lastErr = p, nil
			for _, ph := range phases {
				if p.Status.Phase == ph {
					return p, nil
				}
			}
		} else if ctx.Err() == nil {
			lastErr = err
		}
		select {
		case <-ctx.Done():
			desc := "never read"
			if last != nil {
				b, _ := json.Marshal(last.Status)
				desc = string(b)
			}
			return last, fmt.Errorf("pod %s/%s not %v: %v (last error %v; status %s)", ns, name, phases, ctx.Err(), lastErr, desc)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// Logs reads a container's log through the API (the apiserver asks the
// kubelet); container may be "" for a pod of one container.
func (c *Client) Logs(ctx context.Context, ns, pod, container string) (string, error) {
	path := "/api/v1/namespaces/" + ns + "/pods/" + pod + "/log"
	if container != "" {
		path += "?container=" + container
	}
	data, err := c.Raw(ctx, http.MethodGet, path, nil)
	return string(data), err
}
