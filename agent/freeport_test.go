package agent

import (
	"net"
	"strconv"
	"testing"
)

// A node's port starts a block of free ports, aligned, outside the
// kernel's ephemeral range; a block one of whose ports is taken is not
// picked, so a tensorflow task (port + its local index) never lands on
// a port another node or process holds at the time of the pick.
func TestFreePortPicksAFreeAlignedBlock(t *testing.T) {
	// The first draw's block has its third port taken; the second's is free.
	draws := []float64{0.25, 0.75}
	taken := portLow + int(draws[0]*portBlocksInTheRange)*portBlock + 2
	// Held here, or by another process already: taken either way.
	if l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(taken))); err == nil {
		defer l.Close()
	}
	i := 0
	rnd := func() float64 { d := draws[i%len(draws)]; i++; return d }
	p, err := freePort("127.0.0.1", rnd)
	if err != nil {
		t.Fatal(err)
	}
	want := portLow + int(draws[1]*portBlocksInTheRange)*portBlock
	if p != want || (p-portLow)%portBlock != 0 || p+portBlock > portHigh {
		t.Fatalf("picked %d, want the second draw's block %d", p, want)
	}
	if !blockFree("127.0.0.1", p, portBlock) {
		t.Errorf("the picked block %d is not free", p)
	}
}
