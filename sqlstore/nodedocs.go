package sqlstore

import (
	"encoding/json"
	"sync"

	"github.com/shoal-ml/shoal"
)

// nodeDocs caches decoded node documents by their exact text. Every
// controller pass reads every node, and decoding their JSON was a fifth
// of a 10,000-node server's CPU; most documents are unchanged between
// passes, and looking one up by its text costs a hash of it. Being keyed by
// content, the cache is never stale, whichever store the text came from.
var nodeDocs = struct {
	mu sync.Mutex
	m  map[string]*shoal.Node
}{m: map[string]*shoal.Node{}}

// nodeDocsMax bounds the cache; past it, it starts over.
const nodeDocsMax = 50_000

// decodeNodeDoc sets the document's fields of n (those stored in the
// JSON document; the columns scanned into n stay as they are).
func decodeNodeDoc(doc []byte, n *shoal.Node) error {
	nodeDocs.mu.Lock()
	cached := nodeDocs.m[string(doc)]
	nodeDocs.mu.Unlock()
	if cached == nil {
		var d shoal.Node
		if err := json.Unmarshal(doc, &d); err != nil {
			return err
		}
		cached = &d
		nodeDocs.mu.Lock()
		if len(nodeDocs.m) >= nodeDocsMax {
			nodeDocs.m = map[string]*shoal.Node{}
		}
		nodeDocs.m[string(doc)] = cached
		nodeDocs.mu.Unlock()
	}
	// A copy: callers change the nodes they read. The columns scanned
	// before the document are kept; the two pointers get copies of their
	// own.
	c := *cached
	c.Workspace, c.ProviderRef, c.JoinTokenHash, c.CredentialHash, c.Version = n.Workspace, n.ProviderRef, n.JoinTokenHash, n.CredentialHash, n.Version
	c.JoinTokenExpires = n.JoinTokenExpires
	if !n.LastHeartbeat.IsZero() {
		c.LastHeartbeat = n.LastHeartbeat // from its column
	}
	if c.ReadyOn != nil {
		t := *c.ReadyOn
		c.ReadyOn = &t
	}
	if c.IdleSince != nil {
		t := *c.IdleSince
		c.IdleSince = &t
	}
	*n = c
	return nil
}
