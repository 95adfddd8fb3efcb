package rank

import (
	"fmt"
	"net"
	"net/url"

	"github.com/shoal-ml/shoal/internal/netns"
)

// loopbackServices gives a rank's container on a subnet's network what
// a job finds on the host's loopback when it shares the host's network:
// the identity endpoint (MSI_ENDPOINT names 127.0.0.1:port) and the
// server, when the agent reaches it on the loopback (AZUREML_DEV_URL_MFE
// and the tracking URI name it). Both listen on the same addresses in
// the container's namespace: on an internal network (no public IP)
// nothing else leads off it, and these go through the agent, which
// decides as it does for a job on the host (the identity endpoint's
// secret, the server's own authentication).
func (r *Rank) loopbackServices(pid int) error {
	return r.serveLoopback(func(network, addr string) (net.Listener, error) {
		return netns.Listen(pid, network, addr)
	}, true)
}

// serveLoopback opens the loopback services (see loopbackServices) with
// listen, which listens in the rank's namespace; the server's forward
// too when server is set (a namespace shared by several ranks has its
// own: Networks).
func (r *Rank) serveLoopback(listen func(network, addr string) (net.Listener, error), server bool) error {
	if r.msi != nil {
		u, err := url.Parse(r.msi.URL())
		if err != nil {
			return err
		}
		ln, err := listen("tcp", u.Host)
		if err != nil {
			return fmt.Errorf("the identity endpoint: %w", err)
		}
		r.msi.Also(ln)
	}
	if addr := netns.LoopbackAddr(r.n.ServerURL); server && addr != "" {
		ln, err := listen("tcp", addr)
		if err != nil {
			return fmt.Errorf("the server's address %s: %w", addr, err)
		}
		r.loopMu.Lock()
		r.loopbacks = append(r.loopbacks, ln)
		r.loopMu.Unlock()
		go netns.Relay(ln, addr)
	}
	return nil
}

// closeLoopbacks closes the rank's loopback listeners.
func (r *Rank) closeLoopbacks() {
	r.loopMu.Lock()
	ls := r.loopbacks
	r.loopbacks = nil
	r.loopMu.Unlock()
	for _, l := range ls {
		_ = l.Close()
	}
}
