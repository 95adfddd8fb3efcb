package sshd

import (
	"errors"
	"io"

	"github.com/pkg/sftp"
)

// startSFTP serves the "sftp" subsystem, once per channel. It is also
// what OpenSSH 9's scp speaks by default; legacy `scp -O` runs `scp -t`
// or `scp -f` through exec instead, with the system's scp.
func (sess *session) startSFTP() (bool, func()) {
	sess.mu.Lock()
	defer sess.mu.Unlock()
	if sess.started || sess.ended {
		return false, nil
	}
	sess.started = true
	return true, sess.async(sess.serveSFTP)
}

// serveSFTP runs pkg/sftp's server on the channel, as the agent's user,
// with relative paths (and so scp's ~/ paths, which OpenSSH's scp sends
// relative) resolved in the home.
func (sess *session) serveSFTP() {
	code := uint32(0)
	srv, err := sftp.NewServer(activityChannel{sess.s, sess.ch}, sftp.WithServerWorkingDirectory(sess.s.cfg.HomeDir))
	if err == nil {
		err = srv.Serve()
		if err != nil && !errors.Is(err, io.EOF) {
			sess.s.cfg.Logger.Info("sftp session ended with an error", "err", err)
			code = 1
		}
	} else {
		code = 1
	}
	sess.finish(nil)
	sess.exit(exitCode(code))
	if srv != nil {
		_ = srv.Close()
	}
}
