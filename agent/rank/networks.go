package rank

import (
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/shoal-ml/shoal/internal/netns"
)

// Networks are the network namespaces a node's single-node host-process
// ranks run in: one per OS account (per user), made when the account's
// first rank starts and kept while its ranks run, and for Linger after
// the last. A namespace and its way out cost a few milliseconds of CPU
// to make and to tear down, which a node running hundreds of quick jobs
// a second would otherwise spend on each; an account's jobs share
// nothing through it they did not share already (they run as the same
// OS account, which reads their files and signals their processes).
// What isolates is that no two users, and not the host's loopback,
// share one.
type Networks struct {
	// Slirp is slirp4netns's path, the namespaces' way out; "" gives
	// them none (they reach the forwarded server only).
	Slirp string
	// ServerAddr is the server's host:port on the loopback, forwarded
	// into each namespace's loopback; "" when the server is elsewhere
	// (reached through the way out).
	ServerAddr string
	// Linger is how long a namespace outlives its account's last rank.
	Linger time.Duration

	mu   sync.Mutex
	byID map[uint32]*sharedNS
}

// sharedNS is one account's namespace and who uses it.
type sharedNS struct {
	ns     *netns.NS
	server net.Listener
	users  int
	idle   *time.Timer
}

// NewNetworks is the node's namespaces, none made yet.
func NewNetworks(slirp, serverURL string) *Networks {
	return &Networks{Slirp: slirp, ServerAddr: netns.LoopbackAddr(serverURL), Linger: time.Minute, byID: map[uint32]*sharedNS{}}
}

// Acquire returns account uid's namespace, making it when it has none,
// and the release the rank calls once its processes are gone.
func (n *Networks) Acquire(uid uint32) (*netns.NS, func(), error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	s := n.byID[uid]
	if s == nil {
		ns, err := netns.New()
		if err != nil {
			return nil, nil, err
		}
		s = &sharedNS{ns: ns}
		if n.ServerAddr != "" {
			if s.server, err = ns.Listen("tcp", n.ServerAddr); err != nil {
				ns.Close()
				return nil, nil, fmt.Errorf("the server's address %s: %w", n.ServerAddr, err)
			}
			go netns.Relay(s.server, n.ServerAddr)
		}
		if n.Slirp != "" {
			if err := ns.Outbound(n.Slirp); err != nil {
				s.close()
				return nil, nil, err
			}
		}
		n.byID[uid] = s
	}
	if s.idle != nil {
		s.idle.Stop()
		s.idle = nil
	}
	s.users++
	var once sync.Once
	return s.ns, func() { once.Do(func() { n.release(uid, s) }) }, nil
}

// release drops one user of s, closing it Linger after its last.
func (n *Networks) release(uid uint32, s *sharedNS) {
	n.mu.Lock()
	defer n.mu.Unlock()
	s.users--
	if s.users > 0 {
		return
	}
	s.idle = time.AfterFunc(n.Linger, func() {
		n.mu.Lock()
		defer n.mu.Unlock()
		if s.users > 0 || n.byID[uid] != s {
			return
		}
		delete(n.byID, uid)
		s.close()
	})
}

// close ends the namespace's forward and lets it go.
func (s *sharedNS) close() {
	if s.server != nil {
		_ = s.server.Close()
	}
	_ = s.ns.Close()
}
