package apps

import (
	"context"
	"net"
	"net/http"
	"strings"
	"time"
)

// Probe intervals: often while an application comes up, so that it is
// reported ready soon; less once it answers, since an exit is noticed at
// once anyway (by Wait), and only a hung application needs the probe.
const (
	probeStarting = 500 * time.Millisecond
	probeReady    = 2 * time.Second
	probeTimeout  = 2 * time.Second
)

// newHealthClient returns the client of the health checks. It follows no
// redirect (a redirect is an answer: the application is up) and keeps no
// idle connection (a check every few seconds does not need one, and a
// kept one would outlive the application). dial, when set, connects in
// the applications' network namespace.
func newHealthClient(dial func(ctx context.Context, network, addr string) (net.Conn, error)) *http.Client {
	return &http.Client{
		Timeout: probeTimeout,
		// No Proxy: an HTTP_PROXY of the host must not see 127.0.0.1.
		Transport:     &http.Transport{DisableKeepAlives: true, DialContext: dial},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// healthy reports whether app answers on addr: a TCP connection when it
// has no HealthPath, else an HTTP GET of HealthPath (with HealthHeader)
// answered with a status below 400. A 4xx does not count: for Jupyter it
// would mean that the token is not the one the server's proxy sends.
func healthy(ctx context.Context, client *http.Client, dial func(ctx context.Context, network, addr string) (net.Conn, error), app App, addr string) bool {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	if app.HealthPath == "" {
		if dial == nil {
			var d net.Dialer
			dial = d.DialContext
		}
		c, err := dial(ctx, "tcp", addr)
		if err != nil {
			return false
		}
		c.Close()
		return true
	}
	path := app.HealthPath
	if !strings.HasPrefix(path, "/") {
		path = "/" + path
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+path, nil)
	if err != nil {
		return false
	}
	if k, v, ok := strings.Cut(app.HealthHeader, ":"); ok {
		req.Header.Set(strings.TrimSpace(k), strings.TrimSpace(v))
	}
	resp, err := client.Do(req)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode < 400
}
