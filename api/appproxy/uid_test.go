package appproxy

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/internal/procmark"
)

// Anyone's process can carry a copy of an instance's environment mark: a
// listener must also be the instance account's (the UID its agent
// reports), or the proxy refuses it. Without a reported UID (work runs as
// the agent's own user) the mark is what is checked.
func TestAppListenerMustBeTheInstanceAccounts(t *testing.T) {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	mark := procmark.Node("test-"+hex.EncodeToString(b), "/nonexistent/"+hex.EncodeToString(b))
	cmd := exec.Command("python3", "-c", "import socket,sys\ns=socket.socket()\ns.bind(('127.0.0.1',0))\ns.listen()\nprint(s.getsockname()[1],flush=True)\nsys.stdin.read()")
	cmd.Env = append(os.Environ(), mark...)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("python3: %v", err)
	}
	t.Cleanup(func() { in.Close(); _ = cmd.Wait() })
	port, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	addr := "127.0.0.1:" + strings.TrimSpace(port)
	me, other := os.Getuid(), os.Getuid()+4242
	if err := checkAppListener("application web of compute instance ci", addr, appOwner{mark: mark, uid: &me}); err != nil {
		t.Errorf("the account's own marked listener: %v", err)
	}
	if err := checkAppListener("application web of compute instance ci", addr, appOwner{mark: mark}); err != nil {
		t.Errorf("no account reported: %v", err)
	}
	if err := checkAppListener("application web of compute instance ci", addr, appOwner{mark: mark, uid: &other}); core.ErrorCode(err) != core.EFORBIDDEN {
		t.Errorf("a marked listener of another account: %v; want EFORBIDDEN", err)
	}
}
