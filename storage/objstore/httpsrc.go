package objstore

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path"
	"strings"
)

// httpSource is one file at a plain http(s) URL, fetched anonymously
// with GET: a URL names one object, and plain HTTP has no listing, so a
// folder cannot be read this way.
type httpSource struct {
	c   *http.Client
	url string
	key string // the URL path's last segment
}

// NewHTTP returns a Source over the one file at rawURL. Its single
// object's key is the URL path's last segment ("iris.csv"). allowHTTP
// permits http:// (a datastore that says protocol http); otherwise only
// https is fetched.
func NewHTTP(rawURL string, allowHTTP bool, dial Dialer) (Source, error) {
	u, err := url.Parse(rawURL)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("objstore: %q is not a URL", rawURL)
	}
	switch u.Scheme {
	case "https":
	case "http":
		if !allowHTTP {
			return nil, errorf(ErrUnsupported, nil, fmt.Sprintf("%s: plain http is refused: use https", rawURL))
		}
	default:
		return nil, fmt.Errorf("objstore: %q is not an http(s) URL", rawURL)
	}
	if u.User != nil {
		return nil, fmt.Errorf("objstore: a URL with a user name or password is refused: credentials come from a datastore")
	}
	key := path.Base(u.Path)
	if key == "/" || key == "." || strings.HasSuffix(u.Path, "/") {
		return nil, errorf(ErrUnsupported, nil, fmt.Sprintf("%s names a folder: plain http(s) cannot list one (register the data on a datastore)", rawURL))
	}
	hc, err := httpClient(dial)
	if err != nil {
		return nil, err
	}
	// Redirects are followed through the same dialer (so through the
	// guard), but never from https down to http.
	hc.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if len(via) >= 10 {
			return fmt.Errorf("stopped after 10 redirects")
		}
		if req.URL.Scheme != "https" && !allowHTTP {
			return fmt.Errorf("redirected to plain http: refused")
		}
		return nil
	}
	return &httpSource{c: hc, url: rawURL, key: key}, nil
}

// List returns the one object when prefix is empty or its key; anything
// else is a folder, which plain http(s) cannot list.
func (s *httpSource) List(ctx context.Context, prefix string) ([]Object, error) {
	if prefix != "" && prefix != s.key {
		return nil, errorf(ErrUnsupported, nil, fmt.Sprintf("%s: plain http(s) cannot list a folder", s.url))
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodHead, s.url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := s.c.Do(req)
	if err != nil {
		return nil, transportError("head "+s.url, err)
	}
	resp.Body.Close()
	o := Object{Key: s.key, Size: resp.ContentLength, ETag: resp.Header.Get("ETag")}
	switch {
	case resp.StatusCode == http.StatusMethodNotAllowed || resp.StatusCode == http.StatusNotImplemented:
		o.Size = -1 // a server without HEAD: GET will say
	case resp.StatusCode/100 != 2:
		return nil, httpFail("head "+s.url, resp, nil)
	}
	if o.ETag == "" {
		o.ETag = resp.Header.Get("Last-Modified")
	}
	return []Object{o}, nil
}

// Open GETs the file.
func (s *httpSource) Open(ctx context.Context, key string) (io.ReadCloser, int64, error) {
	if key != s.key {
		return nil, 0, errorf(ErrNotFound, nil, fmt.Sprintf("%s has no object %q", s.url, key))
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.url, nil)
	if err != nil {
		return nil, 0, err
	}
	resp, err := s.c.Do(req)
	if err != nil {
		return nil, 0, transportError("get "+s.url, err)
	}
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		resp.Body.Close()
		return nil, 0, httpFail("get "+s.url, resp, body)
	}
	return resp.Body, resp.ContentLength, nil
}

// Put is refused: a URL is read-only.
func (s *httpSource) Put(ctx context.Context, key string, r io.Reader, size int64) error {
	return errorf(ErrUnsupported, nil, fmt.Sprintf("%s: a plain URL cannot be written: outputs go to a datastore", s.url))
}

// httpFail is an Error with the server's status and the start of its
// body.
func httpFail(op string, resp *http.Response, body []byte) error {
	msg := fmt.Sprintf("%s: HTTP %s", op, resp.Status)
	if b := strings.TrimSpace(strings.ToValidUTF8(string(body), "")); b != "" {
		if i := strings.IndexByte(b, '\n'); i >= 0 {
			b = b[:i]
		}
		msg += ": " + b
	}
	return errorf(statusKind(resp.StatusCode), nil, msg)
}
