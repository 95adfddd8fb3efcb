package app

import (
	"errors"
	"fmt"
	"syscall"
)

// listenError says why an address could not be taken and, when another
// process holds it, how to start this server elsewhere: net's "bind:
// address already in use" names neither the flag nor the config key.
func listenError(flag, key, addr string, err error) error {
	if errors.Is(err, syscall.EADDRINUSE) {
		return fmt.Errorf("%s: %s: address already in use (by another shoal server?): stop that process, or give this server another address with %s HOST:PORT or %s: in its config file", key, addr, flag, key)
	}
	return fmt.Errorf("%s: listen on %s: %w", key, addr, err)
}
