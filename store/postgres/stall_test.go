package postgres_test

import (
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/internal/testpg"
	"github.com/shoal-ml/shoal/internal/testproxy"
	"github.com/shoal-ml/shoal/store"
	"github.com/shoal-ml/shoal/store/postgres"
)

// A server cut off from the database in the middle of a write — its
// packets dropped, not refused, so the database sees no close — holds
// its locks (here a row's, which another server's write needs) only until
// the database ends its idle transaction
// (postgres.WriteIdleTimeout), not until the operating system's TCP
// keepalive gives up on the connection (two hours by default): the other
// servers write again, and a new leader can decide.
func TestWriterCutOffMidTransactionReleasesItsLocks(t *testing.T) {
	t.Parallel() // it mostly waits out the two bounds
	pg := testpg.Start(t)
	raw := pg.NewDatabase(t)
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	f := testproxy.New(t, u.Host)
	viaProxy := *u
	viaProxy.Host = f.Addr()

	ctx := t.Context()
	a, err := postgres.Open(ctx, postgres.Config{URL: viaProxy.String()})
	if err != nil {
		t.Fatal(err)
	}
	b, err := postgres.Open(ctx, postgres.Config{URL: raw})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()

	inTx := make(chan struct{})
	aDone := make(chan error, 1)
	aBegan := time.Now()
	go func() {
		aDone <- a.Update(ctx, func(tx store.Tx) error {
			if err := tx.PutSetting("cut-off", "a"); err != nil {
				return err
			}
			if err := tx.PutSetting("writer", "a"); err != nil {
				return err
			}
			close(inTx)
			// Cut off here: the row "writer" is locked, and the next
			// statement never reaches the database.
			f.Freeze()
			return tx.PutSetting("writer", "a, again")
		})
	}()
	select {
	case <-inTx:
	case err := <-aDone:
		t.Fatalf("the first server's write ended before it was cut off: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("the first server's write did not begin")
	}

	// The other server's write of the same row waits for its lock with no deadline of
	// its own (a batch's transaction is its Updates', not one caller's):
	// if it still waits, the test resets the cut-off connection, which
	// the database does see, and fails.
	began := time.Now()
	bDone := make(chan error, 1)
	go func() { bDone <- b.Update(ctx, func(tx store.Tx) error { return tx.PutSetting("writer", "b") }) }()
	var waited time.Duration
	select {
	case err := <-bDone:
		waited = time.Since(began)
		if err != nil {
			t.Fatalf("the other server's write while the first is cut off mid-transaction: %v (after %v)", err, waited.Round(time.Millisecond))
		}
	case <-time.After(2*postgres.WriteIdleTimeout + 10*time.Second):
		f.Reset()
		<-bDone
		<-aDone
		a.Close()
		t.Fatalf("the other server's write still waited %v after the first was cut off in the middle of a write: the lock is held until the connection's end is seen", time.Since(began).Round(time.Second))
	}
	t.Logf("the other server wrote %v after the first was cut off (WriteIdleTimeout %v)", waited.Round(time.Millisecond), postgres.WriteIdleTimeout)
	var got string
	if err := b.View(ctx, func(tx store.Tx) error { got, err = tx.GetSetting("writer"); return err }); err != nil || got != "b" {
		t.Errorf("writer = %q, %v; want b", got, err)
	}
	// The cut-off server's write fails once its batch's bound runs out
	// (postgres.WriteTimeout), though its connection never ends: it is
	// told the database did not answer, not left waiting on its socket.
	select {
	case err := <-aDone:
		took := time.Since(aBegan)
		t.Logf("the cut-off server's write failed after %v: %v", took.Round(time.Millisecond), err)
		if err == nil || core.ErrorCode(err) != core.EUNAVAILABLE || !strings.Contains(err.Error(), "did not answer the write") {
			t.Errorf("the cut-off server's write: %v; want the database's silence (unavailable)", err)
		}
		if took > postgres.WriteTimeout+10*time.Second {
			t.Errorf("the cut-off server's write failed after %v; want within its bound of %v", took, postgres.WriteTimeout)
		}
	case <-time.After(postgres.WriteTimeout + time.Minute):
		f.Reset()
		<-aDone
		t.Error("the cut-off server's write still waited on its connection")
	}
	f.Reset()
	a.Close()
	// Nothing of the cut-off transaction committed: the key only it
	// wrote is absent.
	if err := b.View(ctx, func(tx store.Tx) error { got, err = tx.GetSetting("cut-off"); return err }); core.ErrorCode(err) != core.ENOTFOUND {
		t.Errorf("the cut-off server's write: setting %q, %v; want none (its transaction never committed)", got, err)
	}
}
