package sshd

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"

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
	cfg := sess.s.cfg
	if cfg.Container != nil {
		return sess.startSFTPInContainer()
	}
	if cfg.Credential != nil {
		// Files are reached as the login's account: the SFTP server is a
		// process of that account, never the server itself (which may be
		// root).
		sess.started = true
		if len(cfg.SFTPCommand) == 0 {
			why := cmp.Or(cfg.SFTPUnavailable, "no SFTP server can run as this login's account")
			return true, sess.async(func() {
				sess.s.cfg.Logger.Info("sftp refused", "why", why)
				sess.fail("sftp: " + why)
			})
		}
		cmd := &exec.Cmd{Path: cfg.SFTPCommand[0], Args: cfg.SFTPCommand, Dir: cfg.HomeDir, Env: sess.environ("")}
		winsize := sess.winsize
		sess.winsize = nil // SFTP speaks over pipes, never a terminal
		prog, err := sess.launchCmd(cmd)
		sess.winsize = winsize
		if err != nil {
			return true, sess.async(func() {
				sess.s.cfg.Logger.Info("sftp server did not start", "err", err)
				sess.fail(fmt.Sprintf("sftp: %s did not start as this login's account: %v", cfg.SFTPCommand[0], err))
			})
		}
		sess.prog = prog
		return true, sess.async(func() { sess.exit(sess.run(prog)) })
	}
	sess.started = true
	return true, sess.async(sess.serveSFTP)
}

// fail ends a session that could not start, telling the client why on
// its stderr (sftp and scp print it) and with exit status 1.
func (sess *session) fail(why string) {
	_, _ = sess.ch.Stderr().Write([]byte("shoal sshd: " + why + "\n"))
	sess.finish(nil)
	sess.exit(exitCode(1))
}

// ServeStdio serves SFTP on standard input and output, with relative paths
// resolved in dir: `shoal agent sftp-server`, which an SSH server whose
// logins run as another account starts as that account.
func ServeStdio(dir string) error {
	srv, err := sftp.NewServer(stdio{}, sftp.WithServerWorkingDirectory(dir))
	if err != nil {
		return err
	}
	defer srv.Close()
	if err := srv.Serve(); err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	return nil
}

// stdio is standard input and output as one stream.
type stdio struct{}

func (stdio) Read(p []byte) (int, error)  { return os.Stdin.Read(p) }
func (stdio) Write(p []byte) (int, error) { return os.Stdout.Write(p) }
func (stdio) Close() error                { return os.Stdin.Close() }

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
