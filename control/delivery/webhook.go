package delivery

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/shoal-ml/shoal/domain/notify"
	"github.com/shoal-ml/shoal/storage/objstore"
)

// NewHTTPClient is the client webhooks are POSTed with: it never follows
// a redirect (a 3xx is a failure that says where it pointed, so a URL an
// Owner set cannot send the server elsewhere), uses no proxy from the
// environment (which would dial past the guard), and, unless
// allowPrivate, dials through objstore's guard, which refuses loopback,
// link-local (the metadata address) and unspecified addresses at connect
// time, after resolving: a name that resolves to the loopback later (DNS
// rebinding) is refused then.
func NewHTTPClient(allowPrivate bool) *http.Client {
	var d net.Dialer
	dial := objstore.Dialer(d.DialContext)
	if !allowPrivate {
		dial = objstore.GuardDialer(dial, nil)
	}
	return &http.Client{
		Transport: &http.Transport{
			Proxy:                 nil,
			DialContext:           dial,
			ForceAttemptHTTP2:     true,
			MaxIdleConns:          16,
			IdleConnTimeout:       90 * time.Second,
			TLSHandshakeTimeout:   10 * time.Second,
			ResponseHeaderTimeout: 10 * time.Second,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// errorBody is how much of a failed answer's body LastError keeps.
const errorBody = 200

// outcome is a try's result: delivered, or the failure in the
// receiver's words (statusCode when it answered).
type outcome struct {
	err        error
	statusCode int
}

// post sends a webhook delivery, signed under secret at now.
func post(ctx context.Context, client *http.Client, d *notify.Delivery, secret []byte, now time.Time) outcome {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, d.Target, bytes.NewReader(d.Payload))
	if err != nil {
		return outcome{err: fmt.Errorf("request: %w", err)}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "Shoal-Webhook/1")
	req.Header.Set(notify.HeaderSignature, notify.Sign(secret, now, d.Payload))
	req.Header.Set(notify.HeaderEvent, d.Event)
	req.Header.Set(notify.HeaderDelivery, strconv.FormatInt(d.ID, 10))
	resp, err := client.Do(req)
	if err != nil {
		return outcome{err: err}
	}
	defer resp.Body.Close()
	head, _ := io.ReadAll(io.LimitReader(resp.Body, errorBody))
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10)) // lets the connection be reused
	switch {
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		return outcome{statusCode: resp.StatusCode}
	case resp.StatusCode >= 300 && resp.StatusCode < 400:
		return outcome{statusCode: resp.StatusCode, err: fmt.Errorf("HTTP %d redirect to %q, not followed: set the webhook's URL to where it should go",
			resp.StatusCode, oneLine(resp.Header.Get("Location")))}
	}
	msg := fmt.Sprintf("HTTP %d", resp.StatusCode)
	if s := oneLine(string(bytes.ToValidUTF8(head, nil))); s != "" {
		msg += ": " + s
	}
	return outcome{statusCode: resp.StatusCode, err: fmt.Errorf("%s", msg)}
}
