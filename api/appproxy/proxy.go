// Package appproxy is the application proxy: the authenticated reverse
// proxy from the API to an instance's applications (Jupyter, custom
// ones), which checks at each dial that the listener is the instance's
// own, and keeps the caller's Shoal credential and the studio's cookies
// away from the application. api.Server mounts it on the applications'
// own origin (Origin redirects there); it is apart from the API's
// handlers because it speaks to processes on the nodes, not to the
// services.
package appproxy

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/shoal-ml/shoal/api/httpx"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/identity"
	"github.com/shoal-ml/shoal/internal/netns"
	"github.com/shoal-ml/shoal/internal/portowner"
	"github.com/shoal-ml/shoal/service"
	"github.com/shoal-ml/shoal/service/computes"
)

// Proxy serves the application routes over the services.
type Proxy struct {
	// Svc resolves an instance's application to its address and owner.
	Svc *service.Services
	// Errors writes the proxy's refusals.
	Errors httpx.Errors
	// Stream runs serve as one of p's streams to instance applications
	// (what names them in a refusal), or answers 429 when p holds its
	// cap: the server's per-principal limits are the server's.
	Stream func(w http.ResponseWriter, p *identity.Principal, what string, serve func())
}

// ServeHTTP is the authenticated reverse proxy to an
// instance's applications: /api/v1/workspaces/{ws}/computes/{name}/
// applications/{app}/... reaches the application on the instance, for the
// instance's user only. HTTP and WebSocket upgrades (Jupyter's kernels
// and terminals) pass through. The caller's Shoal credential never
// reaches the application: the Authorization header and cookies are
// dropped, and the notebook gets the server's own token instead.
func (s *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ws, name, app := r.PathValue("ws"), r.PathValue("name"), r.PathValue("app")
	t, err := s.Svc.ResolveInstanceApp(r.Context(), ws, name, app)
	if err != nil {
		s.Errors.Write(w, r, err)
		return
	}
	s.serve(w, r, t, "application "+app+" of compute instance "+name, "", "requests to instance applications")
}

// ServeJobService is the same proxy to a running job's service:
// /api/v1/workspaces/{ws}/jobs/{name}/nodes/{node}/applications/{svc}/...
// reaches the service on that node of the job, for the job's submitter
// only, while the job runs; the listener must be a process of the job's
// rank on that node.
func (s *Proxy) ServeJobService(w http.ResponseWriter, r *http.Request) {
	ws, name, svc := r.PathValue("ws"), r.PathValue("name"), r.PathValue("svc")
	idx, err := strconv.Atoi(r.PathValue("node"))
	if err != nil || idx < 0 {
		s.Errors.Write(w, r, core.FieldErrorf("node", "must be a node index (0, 1, ...), got %q", core.Short(r.PathValue("node"))))
		return
	}
	t, err := s.Svc.ResolveJobService(r.Context(), ws, name, idx, svc)
	if err != nil {
		s.Errors.Write(w, r, err)
		return
	}
	s.serve(w, r, t, fmt.Sprintf("service %s of job %s on node %d", svc, name, idx), "the job's rank", "requests to job services")
}

// serve proxies r to target t; what names the application in refusals,
// whose its owner ("" for an instance), streams the caller's streams.
func (s *Proxy) serve(w http.ResponseWriter, r *http.Request, t *computes.InstanceAppTarget, what, whose, streams string) {
	target := &url.URL{Scheme: "http", Host: t.Addr}
	prefix := t.BasePath
	rp := &httputil.ReverseProxy{
		Transport: appTransport(what, appOwner{whose: whose, mark: t.Mark, uid: t.UID, containerID: t.ContainerID, containerPID: t.ContainerPID, netnsPID: t.NetNSPID}),
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(target)
			if t.StripPrefix {
				// Custom applications expect to be served at their root.
				p := "/" + strings.TrimPrefix(pr.In.URL.Path, prefix)
				pr.Out.URL.Path, pr.Out.URL.RawPath = p, ""
			} else {
				pr.Out.URL.Path, pr.Out.URL.RawPath = pr.In.URL.Path, pr.In.URL.RawPath
			}
			pr.Out.Host = t.Addr
			pr.Out.Header.Del("Authorization")
			pr.Out.Header.Del("Cookie")
			if t.Token != "" {
				pr.Out.Header.Set("Authorization", "token "+t.Token)
			}
			pr.SetXForwarded()
		},
		ModifyResponse: func(resp *http.Response) error {
			stripStudioCookies(resp.Header)
			if resp.Header.Get("Cross-Origin-Resource-Policy") == "" {
				// Other origins (another site, the studio) may not embed
				// the application's responses as scripts or images.
				resp.Header.Set("Cross-Origin-Resource-Policy", "same-origin")
			}
			return nil
		},
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			if core.ErrorCode(err) == core.EFORBIDDEN {
				s.Errors.Write(w, r, err)
				return
			}
			// The cause is in the 502's body, and (httpx.FailureNote)
			// in the server's request log beside the status.
			s.Errors.Write(w, r, core.Errorf(core.EUNAVAILABLE, "%s does not answer yet (%v); if it just started, try again in a moment", what, err))
		},
	}
	s.Stream(w, identity.PrincipalFrom(r.Context()), streams, func() { rp.ServeHTTP(w, r) })
}

// appTransport dials an application only after checking, at each dial,
// that the socket listening on its port is held by one of the instance's
// own processes (those carrying mark): a custom application's target port
// is whatever its spec says, and without the check it could name another
// user's notebook, an agent's endpoint or the server itself. Connections
// are not kept for reuse, since a kept one would skip the check for the
// next request (possibly another instance's, at the same address).
func appTransport(what string, owner appOwner) http.RoundTripper {
	dialer := &net.Dialer{Timeout: 10 * time.Second}
	return &http.Transport{
		DisableKeepAlives: true,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			if err := checkAppListener(what, addr, owner); err != nil {
				return nil, err
			}
			if owner.netnsPID > 0 {
				// The application is on the loopback of its container's
				// network, not the host's (see internal/netns).
				dctx, cancel := context.WithTimeout(ctx, dialer.Timeout)
				defer cancel()
				return netns.Dial(dctx, owner.netnsPID, network, addr)
			}
			return dialer.DialContext(ctx, network, addr)
		},
	}
}

// checkAppListener refuses (EFORBIDDEN) an address whose listener is not
// the instance's (or the job rank's) own; what names the application.
func checkAppListener(what, addr string, owner appOwner) error {
	_, p, err := net.SplitHostPort(addr)
	port, perr := strconv.Atoi(p)
	if err != nil || perr != nil {
		return core.Errorf(core.EFORBIDDEN, "%s has no port to reach (%q)", what, addr)
	}
	if len(owner.mark) == 0 && owner.containerID == "" {
		return core.Errorf(core.EFORBIDDEN, "%s is not proxied: its node's provider cannot tell which processes are its own, and the proxy reaches only an instance's or a job's own applications", what)
	}
	if owner.netnsPID > 0 {
		// The namespace is entered only through a process of the
		// instance's own, as the listener must be.
		if !owner.owns(owner.netnsPID) {
			return core.Errorf(core.EFORBIDDEN, "%s is reported in the network of process %d, which is not %s's", what, owner.netnsPID, owner.who())
		}
		err = portowner.CheckIn(owner.netnsPID, port, owner.owns)
	} else {
		err = portowner.Check(port, owner.owns)
	}
	switch {
	case err == nil:
		return nil
	case errors.Is(err, portowner.ErrNoListener):
		return err // not listening yet: EUNAVAILABLE, as for a refused connection
	default:
		return core.Errorf(core.EFORBIDDEN, "%s targets port %d, where a process that is not %s's listens: the proxy reaches only applications %s itself runs", what, port, owner.who(), owner.who())
	}
}

// stripStudioCookies drops the Set-Cookie headers that name one of the
// studio's cookies (shoal_*, with or without a __Host- or __Secure-
// prefix, in any case): cookies are not port-scoped, so an application,
// even on its own origin, could otherwise overwrite the viewer's session
// or pre-session cookie.
func stripStudioCookies(h http.Header) {
	var keep []string
	for _, sc := range h.Values("Set-Cookie") {
		pair, _, _ := strings.Cut(sc, ";")
		name, _, hasValue := strings.Cut(pair, "=")
		name = strings.ToLower(strings.TrimSpace(name))
		// A nameless cookie ("=shoal_session=x") is stored by browsers
		// and sent back as "shoal_session=x": any cookie whose name or
		// first pair mentions the studio's cookies goes, and so does one
		// without a name.
		if name == "" || !hasValue || strings.Contains(strings.ToLower(pair), "shoal_") {
			continue
		}
		keep = append(keep, sc)
	}
	h.Del("Set-Cookie")
	for _, sc := range keep {
		h.Add("Set-Cookie", sc)
	}
}

// processUID is the real user ID of process pid, -1 when it cannot be
// read.
func processUID(pid int) int {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "Uid:"); ok {
			if f := strings.Fields(rest); len(f) > 0 {
				if n, err := strconv.Atoi(f[0]); err == nil {
					return n
				}
			}
		}
	}
	return -1
}
