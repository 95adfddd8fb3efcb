// Package testpg starts a private PostgreSQL server for tests: Debian's
// postgresql binaries (initdb, pg_ctl), a data dir in a temp dir, a free
// port on 127.0.0.1, no fsync. As root it runs the server as the postgres
// user (PostgreSQL refuses to run as root). The test command installs the
// package; without it a test skips, saying so (internal/testenv; under
// SHOAL_TEST_REQUIRE_ALL, as scripts/test runs, it fails).
// SHOAL_TESTPG_OPTS adds server settings ("-c log_statement=all") and
// SHOAL_TESTPG_LOG keeps the server's log in that file, for benches that
// look inside PostgreSQL (bench/pgstmts).
package testpg

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/shoal-ml/shoal/internal/testenv"
	"github.com/shoal-ml/shoal/internal/testhosts"
)

// Server is a running PostgreSQL server.
type Server struct {
	dir, bin string
	Port     int
	runAs    string // "" when the test's own user runs it
	seq      atomic.Int32
}

// Start starts a server, stopped at cleanup. Without PostgreSQL the test
// skips (fails under SHOAL_TEST_REQUIRE_ALL).
func Start(t testhosts.T) *Server {
	t.Helper()
	bins := testenv.Glob(t, "/usr/lib/postgresql/*/bin/initdb", "PostgreSQL's initdb and pg_ctl", "apt-get install postgresql")
	if os.Geteuid() == 0 {
		// The package makes the postgres user the server then runs as.
		testenv.Require(t, "the postgres user to run PostgreSQL as (it refuses root)", func() error {
			_, err := user.Lookup("postgres")
			return err
		}, "apt-get install postgresql")
	}
	sort.Strings(bins)
	s := &Server{bin: filepath.Dir(bins[len(bins)-1])}
	dir, err := os.MkdirTemp("", "shoal-pg-")
	if err != nil {
		t.Fatalf("%v", err)
	}
	s.dir = dir
	t.Cleanup(func() { s.stop(); os.RemoveAll(dir) })
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			t.Fatalf("%v", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chmod(dir, 0o755); err != nil {
			t.Fatalf("%v", err)
		}
		if err := os.Chown(dir, uid, gid); err != nil {
			t.Fatalf("%v", err)
		}
		s.runAs = "postgres"
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("%v", err)
	}
	s.Port = l.Addr().(*net.TCPAddr).Port
	l.Close()
	data := filepath.Join(dir, "data")
	if out, err := s.command("initdb", "-D", data, "-A", "trust", "-U", "shoal", "--no-sync", "-E", "UTF8", "--locale=C").CombinedOutput(); err != nil {
		t.Fatalf("initdb: %v\n%s", err, out)
	}
	opts := fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200", s.Port, dir)
	// A bench may ask for more settings and keep the server's log, e.g.
	// every statement logged to count them (bench/pgstmts).
	if extra := os.Getenv("SHOAL_TESTPG_OPTS"); extra != "" {
		opts += " " + extra
	}
	logFile := filepath.Join(dir, "server.log")
	if v := os.Getenv("SHOAL_TESTPG_LOG"); v != "" {
		logFile = v
		if err := s.ownedFile(logFile); err != nil {
			t.Fatalf("SHOAL_TESTPG_LOG: %v", err)
		}
	}
	if out, err := s.command("pg_ctl", "-D", data, "-o", opts, "-l", logFile, "-w", "-t", "60", "start").CombinedOutput(); err != nil {
		t.Fatalf("pg_ctl start: %v\n%s", err, out)
	}
	return s
}

// ownedFile creates (or empties) path for the server's user to write.
func (s *Server) ownedFile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	f.Close()
	if s.runAs == "" {
		return nil
	}
	u, err := user.Lookup(s.runAs)
	if err != nil {
		return err
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return os.Chown(path, uid, gid)
}

// command runs one of the server's programs as the server's user.
func (s *Server) command(name string, args ...string) *exec.Cmd {
	prog := filepath.Join(s.bin, name)
	if s.runAs == "" {
		return exec.Command(prog, args...)
	}
	return exec.Command("runuser", append([]string{"-u", s.runAs, "--", prog}, args...)...)
}

// URL is the connection URL of database db.
func (s *Server) URL(db string) string {
	return fmt.Sprintf("postgres://shoal@127.0.0.1:%d/%s?sslmode=disable", s.Port, db)
}

// NewDatabase creates an empty database and returns its URL.
func (s *Server) NewDatabase(t testhosts.T) string {
	t.Helper()
	name := fmt.Sprintf("t%d_%d", os.Getpid(), s.seq.Add(1))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, s.URL("postgres"))
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer c.Close(ctx)
	if _, err := c.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("create database: %v", err)
	}
	return s.URL(name)
}

// stop stops the server at once.
func (s *Server) stop() {
	s.command("pg_ctl", "-D", filepath.Join(s.dir, "data"), "-m", "immediate", "-w", "stop").Run()
}

// PID returns the server's postmaster process ID (the first line of its
// postmaster.pid), 0 when it cannot be read. Its backends are its
// children: a bench counts their CPU as the server's.
func (s *Server) PID() int {
	b, err := os.ReadFile(filepath.Join(s.dir, "data", "postmaster.pid"))
	if err != nil {
		return 0
	}
	first, _, _ := strings.Cut(string(b), "\n")
	pid, _ := strconv.Atoi(strings.TrimSpace(first))
	return pid
}
