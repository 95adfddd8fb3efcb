// Command pause is the test cluster's sandbox ("pause") image: it holds a
// pod's namespaces open until it is told to stop, and reaps the orphans
// that a pod's processes leave to it as their namespace's first process.
// It is built static (CGO_ENABLED=0) so that it runs in an image of
// nothing else.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGINT, syscall.SIGTERM)
	children := make(chan os.Signal, 16)
	signal.Notify(children, syscall.SIGCHLD)
	for {
		select {
		case <-stop:
			os.Exit(0)
		case <-children:
			for {
				var status syscall.WaitStatus
				pid, err := syscall.Wait4(-1, &status, syscall.WNOHANG, nil)
				if pid <= 0 || err != nil {
					break
				}
			}
		}
	}
}
