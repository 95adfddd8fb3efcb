package sshd

import (
	"bytes"
	"errors"
	"fmt"
	"time"

	"golang.org/x/crypto/ssh"
)

// extFingerprint names the Permissions extension that carries the
// fingerprint of the key a connection logged in with, for the log.
const extFingerprint = "key-fingerprint"

// serverConfig offers public-key authentication, and passwords only when
// the config checks them: with no password or keyboard-interactive
// callback, the library neither offers nor accepts those methods, so
// clients see "Permission denied (publickey)".
func (s *Server) serverConfig(hostKey ssh.Signer) *ssh.ServerConfig {
	conf := &ssh.ServerConfig{
		PublicKeyCallback: s.checkKey,
		ServerVersion:     "SSH-2.0-Shoal",
		MaxAuthTries:      6,
		AuthLogCallback: func(meta ssh.ConnMetadata, method string, err error) {
			if err != nil && method != "none" {
				s.cfg.Logger.Debug("ssh authentication failed", "user", meta.User(), "remote", meta.RemoteAddr().String(), "method", method, "err", err)
			}
		},
	}
	if s.cfg.CheckPassword != nil {
		throttle := newPasswordThrottle(s.cfg.Now)
		conf.PasswordCallback = func(meta ssh.ConnMetadata, password []byte) (*ssh.Permissions, error) {
			source := sourceOf(meta.RemoteAddr())
			if until := throttle.lockedUntil(source); !until.IsZero() {
				return nil, fmt.Errorf("password logins from %s are refused until %s after %d failures", source, until.UTC().Format(time.RFC3339), PasswordFailuresAllowed)
			}
			if meta.User() != s.cfg.Username || !s.cfg.CheckPassword(password) {
				if throttle.failed(source) {
					s.cfg.Logger.Warn("ssh password logins refused: too many failures", "remote", source, "failures", PasswordFailuresAllowed, "for", PasswordLockout.String())
				}
				if meta.User() != s.cfg.Username {
					return nil, fmt.Errorf("user %q may not log in: the login is %q", meta.User(), s.cfg.Username)
				}
				return nil, errors.New("wrong password")
			}
			throttle.succeeded(source)
			return &ssh.Permissions{Extensions: map[string]string{extFingerprint: "password"}}, nil
		}
	}
	conf.AddHostKey(hostKey)
	return conf
}

// checkKey accepts the configured login with one of the keys authorized
// now. The library calls it both for a key the client only offers and
// before accepting a signature, and keeps the Permissions of the key
// that was verified.
func (s *Server) checkKey(meta ssh.ConnMetadata, key ssh.PublicKey) (*ssh.Permissions, error) {
	if meta.User() != s.cfg.Username {
		return nil, fmt.Errorf("user %q may not log in: the login is %q", meta.User(), s.cfg.Username)
	}
	want := key.Marshal()
	for _, k := range s.cfg.AuthorizedKeys() {
		if k != nil && bytes.Equal(k.Marshal(), want) {
			return &ssh.Permissions{Extensions: map[string]string{extFingerprint: ssh.FingerprintSHA256(key)}}, nil
		}
	}
	return nil, errors.New("public key not authorized")
}
