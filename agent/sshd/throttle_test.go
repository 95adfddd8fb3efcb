package sshd_test

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/shoal-ml/shoal/agent/sshd"
	"github.com/shoal-ml/shoal/domain/core/coretest"
)

// TestPasswordGuessingIsThrottled: after sshd.PasswordFailuresAllowed
// wrong passwords from one address within sshd.PasswordFailureWindow,
// that address may not try a password (not even the right one) for
// sshd.PasswordLockout; another address still may; afterwards the first
// may again.
func TestPasswordGuessingIsThrottled(t *testing.T) {
	dir := t.TempDir()
	home := filepath.Join(dir, "home")
	if err := os.MkdirAll(home, 0o700); err != nil {
		t.Fatal(err)
	}
	clk := coretest.NewClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	var checked atomic.Int32
	srv, err := sshd.Start(sshd.Config{
		HostKeyPath: filepath.Join(dir, "keys", "host"), HomeDir: home, Now: clk.Now,
		CheckPassword: func(pw []byte) bool { checked.Add(1); return string(pw) == "right-horse" },
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })

	// login dials from source address from (127.0.0.x: all on loopback).
	login := func(from, password string) error {
		t.Helper()
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}, Timeout: 10 * time.Second}
		nc, err := d.Dial("tcp", srv.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer nc.Close()
		c, chans, reqs, err := ssh.NewClientConn(nc, srv.Addr().String(), &ssh.ClientConfig{
			User: "azureuser", Auth: []ssh.AuthMethod{ssh.Password(password)},
			HostKeyCallback: ssh.InsecureIgnoreHostKey(), Timeout: 10 * time.Second,
		})
		if err != nil {
			return err
		}
		ssh.NewClient(c, chans, reqs).Close()
		return nil
	}

	if err := login("127.0.0.1", "right-horse"); err != nil {
		t.Fatalf("the right password: %v", err)
	}
	for i := 0; i < sshd.PasswordFailuresAllowed; i++ {
		if i > 0 {
			clk.Advance(sshd.PasswordFailureWindow / time.Duration(2*sshd.PasswordFailuresAllowed))
		}
		if err := login("127.0.0.1", "wrong"); err == nil {
			t.Fatal("a wrong password logged in")
		}
	}
	before := checked.Load()
	if err := login("127.0.0.1", "right-horse"); err == nil {
		t.Errorf("after %d wrong passwords the right one still logs in at once: guessing is not throttled", sshd.PasswordFailuresAllowed)
	}
	if checked.Load() != before {
		t.Errorf("a throttled attempt still had its password checked")
	}
	if err := login("127.0.0.2", "right-horse"); err != nil {
		t.Errorf("another address is throttled too: %v", err)
	}
	clk.Advance(sshd.PasswordLockout - time.Second)
	if err := login("127.0.0.1", "right-horse"); err == nil || !strings.Contains(err.Error(), "unable to authenticate") {
		t.Errorf("a second before the lockout ends: %v, want refused", err)
	}
	clk.Advance(2 * time.Second)
	if err := login("127.0.0.1", "right-horse"); err != nil {
		t.Errorf("after the lockout: %v", err)
	}
}

// TestPasswordFailuresAgeOut: wrong passwords spread wider than the window
// never lock anyone out.
func TestPasswordFailuresAgeOut(t *testing.T) {
	dir := t.TempDir()
	home := filepath.Join(dir, "home")
	if err := os.MkdirAll(home, 0o700); err != nil {
		t.Fatal(err)
	}
	clk := coretest.NewClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	srv, err := sshd.Start(sshd.Config{
		HostKeyPath: filepath.Join(dir, "keys", "host"), HomeDir: home, Now: clk.Now,
		CheckPassword: func(pw []byte) bool { return string(pw) == "right-horse" },
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	dial := func(password string) error {
		c, err := ssh.Dial("tcp", srv.Addr().String(), &ssh.ClientConfig{
			User: "azureuser", Auth: []ssh.AuthMethod{ssh.Password(password)},
			HostKeyCallback: ssh.InsecureIgnoreHostKey(), Timeout: 10 * time.Second,
		})
		if err == nil {
			c.Close()
		}
		return err
	}
	for i := 0; i < 3*sshd.PasswordFailuresAllowed; i++ {
		_ = dial("wrong")
		clk.Advance(sshd.PasswordFailureWindow/time.Duration(sshd.PasswordFailuresAllowed-1) + time.Second)
	}
	if err := dial("right-horse"); err != nil {
		t.Errorf("slow mistakes locked the address out: %v", err)
	}
}
