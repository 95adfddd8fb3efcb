package sshd

import (
	"io"

	"golang.org/x/crypto/ssh"
)

// Data moving on a channel, either way, is activity: the wrappers below
// note it for LastActivity, which idle shutdown reads.

type activityReader struct {
	s *Server
	r io.Reader
}

func (a activityReader) Read(p []byte) (int, error) {
	n, err := a.r.Read(p)
	if n > 0 {
		a.s.touch()
	}
	return n, err
}

type activityWriter struct {
	s *Server
	w io.Writer
}

func (a activityWriter) Write(p []byte) (int, error) {
	n, err := a.w.Write(p)
	if n > 0 {
		a.s.touch()
	}
	return n, err
}

// activityChannel is a channel as an io.ReadWriteCloser that notes
// activity, for the sftp server.
type activityChannel struct {
	s  *Server
	ch ssh.Channel
}

func (a activityChannel) Read(p []byte) (int, error)  { return activityReader{a.s, a.ch}.Read(p) }
func (a activityChannel) Write(p []byte) (int, error) { return activityWriter{a.s, a.ch}.Write(p) }
func (a activityChannel) Close() error                { return a.ch.Close() }
