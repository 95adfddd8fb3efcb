package delivery

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/shoal-ml/shoal/domain/notify"
)

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
