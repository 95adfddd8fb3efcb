package notify

import (
	"net/mail"
	"strings"
	"unicode"

	"github.com/shoal-ml/shoal/domain/core"
)

// webhookNameRE: a letter, then letters, digits, '-' and '_', up to 64
// characters in all (names go in URLs and command lines unquoted).
var webhookNameRE = core.LazyRegexp(`^[A-Za-z][A-Za-z0-9_-]{0,63}$`)

// ValidateWebhookName checks a webhook's name.
func ValidateWebhookName(name string) error {
	switch {
	case name == "":
		return core.FieldErrorf("name", "is required")
	case !webhookNameRE.MatchString(name):
		return core.FieldErrorf("name", "%q must be 1 to 64 characters: a letter first, then letters, digits, '-' and '_'", core.Short(name))
	}
	return nil
}

// CanonicalEvent returns the notification event e names (Azure's
// spelling job_cancelled is job_canceled; case is ignored), or false when
// it names none.
func CanonicalEvent(e string) (string, bool) {
	e = strings.ToLower(strings.TrimSpace(e))
	if e == "job_cancelled" {
		e = JobCanceled
	}
	for _, known := range Events {
		if e == known {
			return e, true
		}
	}
	return "", false
}

// CheckEvents returns events canonical (CanonicalEvent), each once, or a
// field error naming the first unknown one and listing the known.
func CheckEvents(field string, events []string) ([]string, error) {
	if len(events) == 0 {
		return nil, core.FieldErrorf(field, "is required: one or more of %s", strings.Join(Events, ", "))
	}
	var out []string
	seen := map[string]bool{}
	for _, e := range events {
		c, ok := CanonicalEvent(e)
		if !ok {
			return nil, core.FieldErrorf(field, "%q is not a notification event; the events are %s", core.Short(e), strings.Join(Events, ", "))
		}
		if !seen[c] {
			seen[c] = true
			out = append(out, c)
		}
	}
	return out, nil
}

// CheckEmails checks a list of mail addresses: each a bare RFC 5322
// addr-spec (user@domain, no display name, no line breaks or other
// control characters, a domain name rather than an [address literal]), at most
// MaxEmails. field names the key in errors.
func CheckEmails(field string, emails []string) error {
	if len(emails) > MaxEmails {
		return core.FieldErrorf(field, "has %d addresses, more than the %d allowed", len(emails), MaxEmails)
	}
	for _, e := range emails {
		a, err := mail.ParseAddress(e)
		if err != nil || a.Name != "" || a.Address != e || !strings.Contains(a.Address, "@") || strings.ContainsFunc(e, lineish) {
			return core.FieldErrorf(field, "%q is not a mail address (user@example.com)", core.Short(e))
		}
		if strings.HasSuffix(e, "]") {
			return core.FieldErrorf(field, "%q names an IP address, not a mail domain: the mail server would deliver to that address (its own loopback among them)", core.Short(e))
		}
	}
	return nil
}

// lineish reports a control character (C0 or C1, NEL among them) or a
// Unicode line or paragraph separator: none belongs in an address, and
// some mail software reads them as line breaks.
func lineish(r rune) bool {
	return unicode.IsControl(r) || unicode.In(r, unicode.Zl, unicode.Zp)
}

// WebhookCreate is the body of a webhook's create (`shoal webhook
// create`, POST …/webhooks).
type WebhookCreate struct {
	Name        string   `json:"name"`
	Description string   `json:"description,omitempty"`
	URL         string   `json:"url,omitempty"`
	Emails      []string `json:"emails,omitempty"`
	Events      []string `json:"events"`
}

// WebhookCreated is a new webhook with its signing secret: the answer of
// a create or a secret's rotation, the only ones that ever carry it.
type WebhookCreated struct {
	*Webhook
	// Secret signs every delivery (Sign's key is the secret's bytes as
	// written here).
	Secret string `json:"secret"`
}
