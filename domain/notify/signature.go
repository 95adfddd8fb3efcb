package notify

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Sign returns the HeaderSignature value of body sent at t under secret:
// "t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">". The time is
// signed with the body so that a receiver can refuse a replayed delivery
// (Verify's maxAge).
func Sign(secret []byte, t time.Time, body []byte) string {
	ts := strconv.FormatInt(t.Unix(), 10)
	return "t=" + ts + ",v1=" + mac(secret, ts, body)
}

// Verify checks a HeaderSignature value against body and secret, and that
// its time is within maxAge of now (maxAge <= 0: any time). Receivers
// call it (Shoal's docs show the same check in Python).
func Verify(secret []byte, header string, body []byte, now time.Time, maxAge time.Duration) error {
	var ts, sig string
	for _, part := range strings.Split(header, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(part), "=")
		switch k {
		case "t":
			ts = v
		case "v1":
			sig = v
		}
	}
	if ts == "" || sig == "" {
		return fmt.Errorf("signature header %q lacks t= or v1=", header)
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return fmt.Errorf("signature time %q is not a number", ts)
	}
	if !hmac.Equal([]byte(sig), []byte(mac(secret, ts, body))) {
		return fmt.Errorf("signature does not match the body")
	}
	if maxAge > 0 {
		if d := now.Sub(time.Unix(sec, 0)); d > maxAge || d < -maxAge {
			return fmt.Errorf("signature time is %s from now, more than %s", d.Round(time.Second), maxAge)
		}
	}
	return nil
}

func mac(secret []byte, ts string, body []byte) string {
	h := hmac.New(sha256.New, secret)
	h.Write([]byte(ts))
	h.Write([]byte("."))
	h.Write(body)
	return hex.EncodeToString(h.Sum(nil))
}
