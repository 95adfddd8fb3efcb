package objstore

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"
)

// httpClient is an HTTP client that dials only through dial, never the
// process's own default (nor a proxy from the environment, which would
// route a job's fetch through the agent's network).
func httpClient(dial Dialer) (*http.Client, error) {
	if dial == nil {
		return nil, errors.New("objstore: no dialer: the caller must say how to reach the network")
	}
	tr := &http.Transport{
		DialContext:           dial,
		Proxy:                 nil,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          64,
		MaxIdleConnsPerHost:   32,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   30 * time.Second,
		ResponseHeaderTimeout: 5 * time.Minute,
		TLSClientConfig:       &tls.Config{MinVersion: tls.VersionTLS12},
	}
	return &http.Client{Transport: tr}, nil
}

// transportError classifies an error that came before any HTTP response:
// the context's own end is passed on as is; anything else is
// ErrUnreachable with the network's words but never the request's URL
// (a SAS token rides in its query).
func transportError(op string, err error) error {
	if err == nil {
		return nil
	}
	var oe *Error
	if errors.As(err, &oe) {
		return oe
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	var ue *url.Error
	for errors.As(err, &ue) {
		err = ue.Err
	}
	return errorf(ErrUnreachable, err, fmt.Sprintf("%s: %v", op, err))
}

// statusKind is the class of an HTTP status.
func statusKind(status int) error {
	switch status {
	case http.StatusNotFound:
		return ErrNotFound
	case http.StatusUnauthorized, http.StatusForbidden:
		return ErrDenied
	}
	return nil
}
