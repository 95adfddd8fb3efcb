// Package runas gives each principal's work an OS account of its own on a
// node, so that no work a user submits runs with the agent's (or the
// server's) rights.
//
// An agent that runs as root runs every job rank, instance shell, notebook,
// application and setup script as the account of the principal it belongs
// to: one account per principal (user:alice, sp:<client>, or a cluster's
// own compute:<workspace>/<name> for its admin's SSH logins), created on
// first use with useradd, without a password, a login shell of its own or
// supplementary groups. One account per principal rather than per
// workspace: two members of one workspace must not read each other's
// instance homes or job folders, which a shared workspace account would
// allow; one person's work in two workspaces shares that person's account,
// as that person's own files would on any shared machine.
//
// An agent that does not run as root cannot switch accounts: work then runs
// as the agent's own user and can read what that user can read. Accounts
// says so (Isolated is false) and the server tells its operator.
package runas

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Prefix starts the name of every account this package creates.
const Prefix = "shoal-"

// Account is the OS account a principal's work runs as on this node.
type Account struct {
	// Name is the account's login name.
	Name string
	// UID and GID are its numeric identity.
	UID, GID uint32
	// switched is true when processes must change to the account: the
	// agent runs as root and the account is not root.
	switched bool
}

// Switched reports whether processes started for a switch to the account
// (false: they run as the agent's own user).
func (a *Account) Switched() bool { return a != nil && a.switched }

// Apply makes cmd's process run as the account: its user and group, and no
// supplementary groups (root's would otherwise be kept). attr is created
// when nil.
func (a *Account) Apply(attr *syscall.SysProcAttr) *syscall.SysProcAttr {
	if attr == nil {
		attr = &syscall.SysProcAttr{}
	}
	if a.Switched() {
		attr.Credential = &syscall.Credential{Uid: a.UID, Gid: a.GID, Groups: []uint32{}}
	}
	return attr
}

// Env is the account's identity variables for a process's environment.
func (a *Account) Env() []string {
	if a == nil {
		return nil
	}
	return []string{"USER=" + a.Name, "LOGNAME=" + a.Name}
}

// Own hands path to the account (without following a symbolic link). It
// does nothing when processes do not switch.
func (a *Account) Own(path string) error {
	if !a.Switched() {
		return nil
	}
	return os.Lchown(path, int(a.UID), int(a.GID))
}

// LetThrough opens dir, a folder of the agent's already filled, to the
// account's processes: they may pass through it to what they own below
// (a rank's code, inputs and outputs) but neither list it nor write in
// it, and no other account may enter it, not even to stat a name it
// guesses. Its group becomes the account's own group (each account is
// made with one, useradd --user-group) and its mode 0710; the group is
// set first, while the agent still keeps the folder 0700, so that it is
// never open to a group that is not the account's. When processes do not
// switch, everything runs as the folder's owner, and it gets 0711, the
// mode such folders always had.
func (a *Account) LetThrough(dir string) error {
	if !a.Switched() {
		return os.Chmod(dir, 0o711)
	}
	if err := os.Lchown(dir, -1, int(a.GID)); err != nil {
		return err
	}
	return os.Chmod(dir, 0o710)
}

// OwnTree hands root and everything below it to the account. It follows no
// symbolic link, so it must run before any of the account's processes can
// change the tree (the agent prepares a folder, then starts the work).
func (a *Account) OwnTree(root string) error {
	if !a.Switched() {
		return nil
	}
	return filepath.WalkDir(root, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, int(a.UID), int(a.GID))
	})
}

// MkdirOwned creates dir (mode 0700) if missing and hands it to the
// account. An existing dir that is a symbolic link is refused: the agent
// must never be led to hand out a folder elsewhere.
func (a *Account) MkdirOwned(dir string) error {
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s is not a directory", dir)
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return err
	}
	return a.Own(dir)
}

// Accounts finds or creates the accounts of principals. Its methods are
// safe for concurrent use.
type Accounts struct {
	isolated bool
	self     *Account

	mu    sync.Mutex
	known map[string]*Account
	// add creates an account with a comment (useradd).
	add func(name, comment string) error
}

// New returns the accounts of this process: isolated (one account per
// principal) when it runs as root, else every principal's work runs as
// this process's user.
func New() (*Accounts, error) {
	s := &Accounts{isolated: os.Geteuid() == 0, known: map[string]*Account{}, add: useradd}
	u, err := user.Current()
	name := strconv.Itoa(os.Geteuid())
	if err == nil {
		name = u.Username
	}
	s.self = &Account{Name: name, UID: uint32(os.Geteuid()), GID: uint32(os.Getegid())}
	return s, nil
}

// Unisolated returns accounts that run every principal's work as this
// process's own user, whatever user that is: for tests of the agent that
// are about something else, in folders other accounts could not enter.
func Unisolated() *Accounts {
	s, _ := New()
	s.isolated = false
	return s
}

// Isolated reports whether work runs as the accounts of its principals
// (true) or as this process's own user (false).
func (s *Accounts) Isolated() bool { return s.isolated }

// Self is this process's own account.
func (s *Accounts) Self() *Account { return s.self }

// NameFor is the account name of a principal: Prefix, a readable part of
// the principal's name (at most 8 characters) and 64 bits of a hash of the
// whole principal, at most 31 characters (useradd allows 32) of lower-case
// letters, digits and dashes. The readable part is chosen by users (a
// cluster's name, a user's); the hash is what tells principals apart, and
// For also checks the account's comment, which names the whole hash.
func NameFor(principal string) string {
	sum := sha256.Sum256([]byte(principal))
	readable := principal
	if i := strings.LastIndexAny(readable, ":/"); i >= 0 {
		readable = readable[i+1:]
	}
	var b strings.Builder
	for _, r := range strings.ToLower(readable) {
		if b.Len() == 8 {
			break
		}
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		}
	}
	if b.Len() == 0 {
		b.WriteString("work")
	}
	return Prefix + b.String() + "-" + hex.EncodeToString(sum[:8])
}

// commentFor is the comment (GECOS) of a principal's account: the hash of
// the whole principal, so that an account is used only by the principal
// it was made for, whatever its name.
func commentFor(principal string) string {
	sum := sha256.Sum256([]byte(principal))
	return "Shoal work account " + hex.EncodeToString(sum[:])
}

// For returns the account principal's work runs as: its own (created on
// first use) when isolated, else this process's. An empty principal is
// refused when isolated: work that belongs to nobody has no account.
func (s *Accounts) For(principal string) (*Account, error) {
	if !s.isolated {
		return s.self, nil
	}
	if principal == "" {
		return nil, errors.New("run as: the work names no principal to run as")
	}
	name := NameFor(principal)
	s.mu.Lock()
	defer s.mu.Unlock()
	if a := s.known[name]; a != nil {
		return a, nil
	}
	comment := commentFor(principal)
	a, gecos, err := lookup(name)
	if err != nil {
		if err := s.add(name, comment); err != nil {
			return nil, fmt.Errorf("run as %s: create account %s: %w", principal, name, err)
		}
		if a, gecos, err = lookup(name); err != nil {
			return nil, fmt.Errorf("run as %s: %w", principal, err)
		}
	}
	if gecos != comment {
		return nil, fmt.Errorf("run as %s: the account %s exists and was not made for it (its comment is %q): refused", principal, name, gecos)
	}
	if a.UID == 0 || a.GID == 0 {
		return nil, fmt.Errorf("run as %s: account %s is root's uid or gid", principal, name)
	}
	a.switched = true
	s.known[name] = a
	return a, nil
}

// lookup reads an existing account and its comment.
func lookup(name string) (*Account, string, error) {
	u, err := user.Lookup(name)
	if err != nil {
		return nil, "", err
	}
	uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
	gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
	if err1 != nil || err2 != nil {
		return nil, "", fmt.Errorf("account %s: uid %q, gid %q", name, u.Uid, u.Gid)
	}
	return &Account{Name: name, UID: uint32(uid), GID: uint32(gid)}, u.Name, nil
}

// useradd creates a system account with a group of its own, no home, no
// password (it cannot log in by itself) and bash as its shell. Another
// agent on the same host may be writing /etc/passwd at the same moment:
// useradd then fails to lock it (exit 10) or finds the account made
// (exit 9), and both are retried or taken as done.
func useradd(name, comment string) error {
	var out []byte
	var err error
	for try := 0; try < 50; try++ {
		cmd := exec.Command(useraddPath(), "--system", "--user-group", "--no-create-home",
			"--home-dir", "/nonexistent", "--shell", "/bin/bash", "--comment", comment, name)
		out, err = cmd.CombinedOutput()
		var ee *exec.ExitError
		switch {
		case err == nil:
			return nil
		case errors.As(err, &ee) && ee.ExitCode() == 9: // exists
			return nil
		case errors.As(err, &ee) && ee.ExitCode() == 10: // cannot lock
			time.Sleep(time.Duration(20+try*10) * time.Millisecond)
			continue
		}
		break
	}
	return fmt.Errorf("%v: %s", err, strings.TrimSpace(string(out)))
}

func useraddPath() string {
	for _, p := range []string{"/usr/sbin/useradd", "/sbin/useradd"} {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return "useradd"
}

// CheckReachable returns an error naming the first folder above dir
// (dir's parents, not dir itself) that other accounts cannot enter: work
// run as another account could not reach its folders below dir.
func CheckReachable(dir string) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	for p := filepath.Dir(abs); ; p = filepath.Dir(p) {
		fi, err := os.Stat(p)
		if err != nil {
			return err
		}
		if fi.Mode().Perm()&0o001 == 0 {
			return fmt.Errorf("%s (mode %04o) cannot be entered by the accounts work runs as, so nothing below it can hold their folders: choose a work dir whose parents others may enter (mode o+x)", p, fi.Mode().Perm())
		}
		if p == filepath.Dir(p) {
			return nil
		}
	}
}

// Describe says as whom work started by this process runs, and what it can
// therefore read: the sentence the server logs at startup and `shoal
// location show` prints for the local provider.
func (s *Accounts) Describe() string {
	if s.isolated {
		return "work runs as an OS account of its own per user (" + Prefix + "<name>-<hash>), which cannot read the server's data dir, other users' work or other processes' environments"
	}
	name := s.self.Name
	return fmt.Sprintf("work runs as %s and can read what %s can read: run as root, or use containers, before sharing this server", name, name)
}

// MkdirReachable creates dir and the parents it lacks, each mode 0711
// whatever the umask, and makes dir itself 0711: the accounts work runs as
// pass through it to their own folders without listing it.
func MkdirReachable(dir string) error {
	var missing []string
	for p := dir; ; p = filepath.Dir(p) {
		if _, err := os.Stat(p); err == nil || p == filepath.Dir(p) {
			break
		}
		missing = append(missing, p)
	}
	if err := os.MkdirAll(dir, 0o711); err != nil {
		return err
	}
	for _, p := range append(missing, dir) {
		if err := os.Chmod(p, 0o711); err != nil {
			return err
		}
	}
	return nil
}
