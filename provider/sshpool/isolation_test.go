package sshpool

import (
	"strings"
	"testing"
)

// location show says which hosts' work runs as their login.
func TestWorkIsolation(t *testing.T) {
	p := &Provider{cfg: Config{Hosts: []Host{{Address: "10.0.0.1", User: "root"}, {Address: "10.0.0.2", User: "root"}}}}
	if got := p.WorkIsolation(); !strings.Contains(got, "account of its own per user on every host") {
		t.Errorf("all root: %q", got)
	}
	p.cfg.Hosts[1].User = "alice"
	if got := p.WorkIsolation(); !strings.Contains(got, "on alice@10.0.0.2 work runs as that login") || strings.Contains(got, "10.0.0.1") {
		t.Errorf("one login not root: %q", got)
	}
}
