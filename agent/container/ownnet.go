package container

// NetworkOwn is a Spec.Network: a network namespace of the container's
// own with a way out that does not lead to the host's loopback. Podman
// gives it slirp4netns (a user-mode stack per container, with
// allow_host_loopback=false: its gateway is not the host's 127.0.0.1,
// and nothing but the container is on its network); Docker its default
// bridge (the host's loopback is not on it, but the other containers on
// that bridge are).
const NetworkOwn = "shoal-own"

// networkMode is network as the engine names it.
func (e *Engine) networkMode(network string) string {
	if network != NetworkOwn {
		return network
	}
	if e.podman {
		return "slirp4netns:allow_host_loopback=false"
	}
	return "bridge"
}
