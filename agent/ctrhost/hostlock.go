package ctrhost

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// The nodes of a host share one image store (podman's default, or the
// engine of Docker or podman's system service), but each has an agent
// process of its own: what one node pulls or builds, the others must not
// pull or build again at the same time. A file lock per image and store,
// in a folder every agent of the host finds, serializes them; the second
// node, once it holds the lock, finds the image there and uses it.

// LockDirVar names the folder of the host-wide locks; by default
// /run/shoal/locks as root, else a folder under the temporary dir.
const LockDirVar = "SHOAL_AGENT_LOCK_DIR"

// lockDir is the host-wide locks' folder.
func lockDir() string {
	if d := os.Getenv(LockDirVar); d != "" {
		return d
	}
	if os.Geteuid() == 0 {
		return "/run/shoal/locks"
	}
	return filepath.Join(os.TempDir(), fmt.Sprintf("shoal-locks-%d", os.Geteuid()))
}

// lockPoll is how often a lock another agent holds is tried again.
const lockPoll = 100 * time.Millisecond

// hostLock takes the host-wide lock of key within the node's image store
// (an image's pull or build), waiting while another agent of the host
// holds it; it returns the unlock. Without a scope (no engine yet) or
// where no lock file can be made, it locks nothing: the pull or build
// then happens as it would on one node.
func (h *Host) hostLock(ctx context.Context, key string) (func(), error) {
	if h.scope == "" {
		return func() {}, nil
	}
	dir := lockDir()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		h.log.Warn("no host-wide image lock: its folder cannot be made", "dir", dir, "err", err)
		return func() {}, nil
	}
	sum := sha256.Sum256([]byte(h.scope + "\x00" + key))
	f, err := os.OpenFile(filepath.Join(dir, "image-"+hex.EncodeToString(sum[:12])+".lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		h.log.Warn("no host-wide image lock", "err", err)
		return func() {}, nil
	}
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			return func() {
				_ = unix.Flock(int(f.Fd()), unix.LOCK_UN)
				f.Close()
			}, nil
		}
		if !errors.Is(err, unix.EWOULDBLOCK) {
			f.Close()
			h.log.Warn("no host-wide image lock", "err", err)
			return func() {}, nil
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, ctx.Err()
		case <-time.After(lockPoll):
		}
	}
}

// usesDir is the folder of the store's image uses: one file per image,
// its modification time the last use any node of the store recorded.
func (h *Host) usesDir() string {
	sum := sha256.Sum256([]byte(h.scope))
	return filepath.Join(lockDir(), "uses-"+hex.EncodeToString(sum[:12]))
}

// recordUse records, for the other nodes of the store, that this node
// used image id now.
func (h *Host) recordUse(id string) {
	if h.scope == "" || h.clock == nil {
		return
	}
	dir := h.usesDir()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return
	}
	name := filepath.Join(dir, filepath.Base(strings.TrimPrefix(id, "sha256:")))
	if err := os.WriteFile(name, nil, 0o600); err != nil {
		return
	}
	now := h.clock.Now()
	_ = os.Chtimes(name, now, now)
}

// loadUses tells cache the uses the store's other nodes recorded.
func (h *Host) loadUses(cache interface{ UsedAt(string, time.Time) }) {
	if h.scope == "" {
		return
	}
	entries, err := os.ReadDir(h.usesDir())
	if err != nil {
		return
	}
	for _, e := range entries {
		if info, err := e.Info(); err == nil {
			cache.UsedAt(e.Name(), info.ModTime())
		}
	}
}

// StateDirVar names the folder where the agents of a host keep what
// must outlive them (the images pulled with a login); by default
// /var/lib/shoal/agent as root, else the user's cache folder. It must
// last as long as the image store (not /run: the store's images outlive
// a reboot).
const StateDirVar = "SHOAL_AGENT_STATE_DIR"

// stateDir is the host-wide state folder.
func stateDir() string {
	if d := os.Getenv(StateDirVar); d != "" {
		return d
	}
	if os.Geteuid() == 0 {
		return "/var/lib/shoal/agent"
	}
	if c, err := os.UserCacheDir(); err == nil {
		return filepath.Join(c, "shoal-agent")
	}
	return filepath.Join(os.TempDir(), fmt.Sprintf("shoal-agent-%d", os.Geteuid()))
}

// loginDir is the folder of the store's images pulled with a login: one
// empty file per image id.
func (h *Host) loginDir() string {
	sum := sha256.Sum256([]byte(h.scope))
	return filepath.Join(stateDir(), "logins-"+hex.EncodeToString(sum[:12]))
}

// markPulledWithLogin records that image id came with a registry login.
func (h *Host) markPulledWithLogin(id string) error {
	if h.scope == "" {
		return errors.New("no image store")
	}
	dir := h.loginDir()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, filepath.Base(strings.TrimPrefix(id, "sha256:"))), nil, 0o600)
}

// pulledWithLogin reports whether image id came with a registry login
// (true when that cannot be read: the registry is asked then).
func (h *Host) pulledWithLogin(id string) bool {
	if h.scope == "" {
		return false
	}
	_, err := os.Stat(filepath.Join(h.loginDir(), filepath.Base(strings.TrimPrefix(id, "sha256:"))))
	return err == nil || !errors.Is(err, os.ErrNotExist)
}

// markServedWithout records that repository repo served image id without
// a login: a job naming that repository is handed its copy as it is,
// even when the same image came from elsewhere with a login (the public
// copy of a private image's content is public there).
func (h *Host) markServedWithout(repo, id string) error {
	if h.scope == "" {
		return nil
	}
	dir := h.loginDir()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, publicKey(repo, id)), nil, 0o600)
}

// servedWithout reports whether repository repo served image id without
// a login.
func (h *Host) servedWithout(repo, id string) bool {
	if h.scope == "" {
		return false
	}
	_, err := os.Stat(filepath.Join(h.loginDir(), publicKey(repo, id)))
	return err == nil
}

// publicKey names the record that repo served id without a login.
func publicKey(repo, id string) string {
	sum := sha256.Sum256([]byte(repo + "\x00" + id))
	return "public-" + hex.EncodeToString(sum[:16])
}
