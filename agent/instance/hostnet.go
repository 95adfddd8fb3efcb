package instance

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os/exec"
	"time"

	"github.com/shoal-ml/shoal/internal/netns"
)

// hostNet is the network namespace of an instance that runs as host
// processes, when its node makes them (Node.OwnNetwork: the agent runs
// as root): every process of the instance starts in it — SSH sessions,
// setup scripts, the notebook, command applications — so that what the
// instance's user listens on, on 127.0.0.1, is on the instance's own
// loopback, out of reach of another user's instance or job, and the
// host's loopback is out of the instance's reach. The instance finds on
// its loopback what it found on the host's: the server at its advertised
// URL, when the agent reaches it on the loopback (relayed), and the
// identity endpoint; the outside through slirp4netns when the node has
// it. The agent reaches inside (SSH forwards, health and idle checks)
// by dialing in the namespace; the application proxy enters it through
// the application's process (its report's NetNSPID).
type hostNet struct {
	ns *netns.NS
	// server is the agent's listener for the server's address inside.
	server net.Listener
}

// openHostNet makes the instance's namespace with the server's address
// relayed into it and its way out.
func (rt *Runtime) openHostNet() (*hostNet, error) {
	ns, err := netns.New()
	if err != nil {
		return nil, err
	}
	h := &hostNet{ns: ns}
	if rt.n.SDKEnv != nil {
		if addr := netns.LoopbackAddr(rt.n.SDKEnv()["AZUREML_DEV_URL_MFE"]); addr != "" {
			if h.server, err = ns.Listen("tcp", addr); err != nil {
				h.close()
				return nil, fmt.Errorf("the server's address %s: %w", addr, err)
			}
			go netns.Relay(h.server, addr)
		}
	}
	if rt.n.Slirp != "" {
		if err := ns.Outbound(rt.n.Slirp); err != nil {
			h.close()
			return nil, err
		}
	}
	return h, nil
}

// close ends the relay and lets the namespace go (it goes once the
// instance's last process in it has).
func (h *hostNet) close() {
	if h == nil {
		return
	}
	if h.server != nil {
		_ = h.server.Close()
	}
	_ = h.ns.Close()
}

// start starts cmd in the namespace; nil (the host's network) when
// there is none.
func (h *hostNet) start() func(*exec.Cmd) error {
	if h == nil {
		return nil
	}
	return h.ns.Start
}

// dial connects inside the namespace; nil (the host's network) when
// there is none.
func (h *hostNet) dial() func(ctx context.Context, network, addr string) (net.Conn, error) {
	if h == nil {
		return nil
	}
	return h.ns.Dial
}

// listen listens on the instance's loopback: its namespace's, else the
// host's.
func (h *hostNet) listen(addr string) (net.Listener, error) {
	if h == nil {
		return net.Listen("tcp", addr)
	}
	return h.ns.Listen("tcp", addr)
}

// httpClient is a client of what listens on the instance's loopback,
// with a timeout (the idle check's, of the notebook).
func (h *hostNet) httpClient(timeout time.Duration) *http.Client {
	return &http.Client{Timeout: timeout, Transport: &http.Transport{DisableKeepAlives: true, Proxy: nil, DialContext: h.dial()}}
}
