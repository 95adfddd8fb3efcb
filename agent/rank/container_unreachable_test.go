package rank

import (
	"net"
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/internal/testctr"
)

// closedPort is a 127.0.0.1 address nothing listens on (a port just
// released): a connection to it is refused.
func closedPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// An image on a registry the node cannot reach (the connection refused,
// a name that does not resolve) fails the rank with RankImageFailed and
// the registry's words: the image cannot be got, which is the job's
// failure. As node loss (RankLost) it was requeued twenty times onto
// nodes that met the same.
func TestContainerRankUnreachableRegistryFails(t *testing.T) {
	env := testctr.Shared(t)
	for _, c := range []struct {
		name, image, words string
	}{
		{"ConnectionRefused", closedPort(t) + "/shoal-test/x:1", "connection refused"},
		{"NoSuchHost", "reg1.example.invalid/shoal-test/x:1", "reg1.example.invalid"},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := newFakeAgentServer(t)
			id := "ctr-unreach-" + strings.ToLower(c.name)
			a := containerAgent(t, env, srv, id)
			tk := task("att-"+id, c.image)
			tk.Command = "echo should-not-run"
			log := runRank(t, a, tk, nil)
			rep := srv.final(t)
			if rep.State != node.RankFailed || rep.Failure != node.RankImageFailed || !strings.Contains(rep.Reason, c.words) {
				t.Fatalf("final report %+v, want Failed/image_failed with the registry's words (%q); log:\n%s", rep, c.words, log)
			}
			if strings.Contains(log, "should-not-run") {
				t.Errorf("the command ran:\n%s", log)
			}
			noContainersLeft(t, env, id)
		})
	}
}
