package node

import (
	"sort"
	"strings"
)

// NodeLister lists nodes; the store's transaction is one.
type NodeLister interface {
	ListNodes(filter NodeFilter) ([]*Node, error)
}

// WhyNoRuntime says why no host of a location can run containers, as its
// nodes reported ("host 10.0.0.5 (node c-n1): podman: not installed; …"),
// or "" when one can or none has reported (a location whose nodes have
// not joined may well run containers). Submit and create refuse what
// needs a runtime on the strength of it.
func WhyNoRuntime(tx NodeLister, location string) (string, error) {
	nodes, err := tx.ListNodes(NodeFilter{Location: location})
	if err != nil {
		return "", err
	}
	why := map[string]bool{}
	for _, n := range nodes {
		if n.Runtime == nil {
			continue
		}
		if n.Runtime.Usable() {
			return "", nil
		}
		host := n.PrivateIPAddress
		if host == "" {
			host = n.ID
		}
		why["host "+host+" (node "+n.ID+"): "+n.Runtime.Describe()] = true
	}
	lines := make([]string, 0, len(why))
	for l := range why {
		lines = append(lines, l)
	}
	sort.Strings(lines)
	return strings.Join(lines, "; "), nil
}
