package delivery

import (
	"fmt"
	"sort"
	"strings"

	"github.com/shoal-ml/shoal/domain/notify"
)

// MailSubject is a notification mail's subject: "[Shoal] " and the
// payload's summary.
func MailSubject(p *notify.Payload) string {
	return "[Shoal] " + p.Summary
}

// MailBody is a notification mail's text: the summary, the reason, the
// details one per line, and the studio's page.
func MailBody(p *notify.Payload) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n\n", p.Summary)
	if p.Reason != "" {
		fmt.Fprintf(&b, "%s\n\n", p.Reason)
	}
	fmt.Fprintf(&b, "event: %s\nworkspace: %s\n%s: %s\ntime: %s\n", p.Event, p.Workspace, p.ResourceType, p.ResourceName, p.Time.UTC().Format("2006-01-02 15:04:05 MST"))
	keys := make([]string, 0, len(p.Details))
	for k := range p.Details {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, "%s: %v\n", k, p.Details[k])
	}
	if p.URL != "" {
		fmt.Fprintf(&b, "\n%s\n", p.URL)
	}
	return b.String()
}
