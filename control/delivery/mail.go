package delivery

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"mime"
	"mime/quotedprintable"
	"net"
	"net/mail"
	"net/smtp"
	"strconv"
	"strings"
	"time"

	"github.com/shoal-ml/shoal/server/config"
)

// Mailer sends notification mail through the SMTP server the config
// names (notifications.smtp).
type Mailer struct {
	cfg config.SMTP
	// tlsConfig is the STARTTLS client config; tests give one that
	// trusts their own server's certificate.
	tlsConfig *tls.Config
}

// NewMailer returns a Mailer for cfg; tlsConf nil verifies the server's
// certificate against the system's roots, for cfg.Host.
func NewMailer(cfg config.SMTP, tlsConf *tls.Config) *Mailer {
	if tlsConf == nil {
		tlsConf = &tls.Config{ServerName: cfg.Host, MinVersion: tls.VersionTLS12}
	}
	return &Mailer{cfg: cfg, tlsConfig: tlsConf}
}

// Send mails subject and body to the addresses in to, within ctx's
// deadline: STARTTLS when the server offers it (or refused without it
// when the config requires it), AUTH PLAIN when a username is set (only
// over TLS: net/smtp refuses to send a password in clear to another
// host). An error is the server's own words.
func (m *Mailer) Send(ctx context.Context, to []string, subject, body string, now time.Time) error {
	addr := net.JoinHostPort(m.cfg.Host, strconv.Itoa(m.cfg.Port))
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return fmt.Errorf("smtp %s: %w", addr, err)
	}
	defer conn.Close()
	if dl, ok := ctx.Deadline(); ok {
		conn.SetDeadline(dl)
	}
	c, err := smtp.NewClient(conn, m.cfg.Host)
	if err != nil {
		return fmt.Errorf("smtp %s: %w", addr, err)
	}
	defer c.Close()
	if err := m.secure(c); err != nil {
		return fmt.Errorf("smtp %s: %w", addr, err)
	}
	from, _ := mail.ParseAddress(m.cfg.From) // checked by the config
	if err := c.Mail(from.Address); err != nil {
		return fmt.Errorf("smtp %s: MAIL FROM: %w", addr, err)
	}
	for _, r := range to {
		if err := c.Rcpt(r); err != nil {
			return fmt.Errorf("smtp %s: RCPT TO %s: %w", addr, r, err)
		}
	}
	w, err := c.Data()
	if err != nil {
		return fmt.Errorf("smtp %s: DATA: %w", addr, err)
	}
	if _, err := w.Write(Message(m.cfg.From, to, subject, body, now)); err != nil {
		return fmt.Errorf("smtp %s: %w", addr, err)
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("smtp %s: %w", addr, err)
	}
	return c.Quit()
}

// secure runs STARTTLS and AUTH as the config asks.
func (m *Mailer) secure(c *smtp.Client) error {
	tlsOn := false
	if ok, _ := c.Extension("STARTTLS"); ok && m.cfg.StartTLS != config.StartTLSNever {
		if err := c.StartTLS(m.tlsConfig); err != nil {
			return fmt.Errorf("STARTTLS: %w", err)
		}
		tlsOn = true
	} else if m.cfg.StartTLS == config.StartTLSRequired {
		return fmt.Errorf("the server does not offer STARTTLS, which notifications.smtp.starttls requires")
	}
	if m.cfg.Username == "" {
		return nil
	}
	if !tlsOn {
		return fmt.Errorf("refusing to send the SMTP password without TLS (the server offers no STARTTLS or starttls is never)")
	}
	if ok, _ := c.Extension("AUTH"); !ok {
		return fmt.Errorf("the server offers no AUTH, and notifications.smtp.username is set")
	}
	if err := c.Auth(smtp.PlainAuth("", m.cfg.Username, m.cfg.Password, m.cfg.Host)); err != nil {
		return fmt.Errorf("AUTH: %w", err)
	}
	return nil
}

// Message is the RFC 5322 message of a notification: a one-line subject
// (line breaks and other control characters made spaces, so nothing an
// event says can add a header), a UTF-8 text body in quoted-printable.
func Message(from string, to []string, subject, body string, now time.Time) []byte {
	var b bytes.Buffer
	h := func(k, v string) { fmt.Fprintf(&b, "%s: %s\r\n", k, v) }
	h("From", from)
	h("To", strings.Join(to, ", "))
	h("Subject", mime.QEncoding.Encode("utf-8", oneLine(subject)))
	h("Date", now.UTC().Format(time.RFC1123Z))
	h("MIME-Version", "1.0")
	h("Content-Type", "text/plain; charset=utf-8")
	h("Content-Transfer-Encoding", "quoted-printable")
	h("Auto-Submitted", "auto-generated")
	b.WriteString("\r\n")
	qp := quotedprintable.NewWriter(&b)
	qp.Write([]byte(strings.ReplaceAll(body, "\n", "\r\n")))
	qp.Close()
	return b.Bytes()
}

// oneLine makes every control character a space.
func oneLine(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, s)
}
