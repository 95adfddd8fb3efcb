package sshd

import (
	"os"
	"os/signal"
	"sync"
	"syscall"
)

// hangupDefault makes the sessions' programs start with SIGHUP at its
// default action, as sshd's do. A process started with SIGHUP ignored
// (under nohup, or a runner that ignores it) passes that on to every
// child, and a hung-up session's shell would then outlive the hangup. A
// signal this process handles is reset to its default in the children,
// so the server handles SIGHUP — and does nothing with it: the agent
// itself is not ended by a hangup.
var hangupDefault sync.Once

func resetHangup() {
	hangupDefault.Do(func() {
		ch := make(chan os.Signal, 1)
		signal.Notify(ch, syscall.SIGHUP)
		go func() {
			for range ch {
			}
		}()
	})
}
