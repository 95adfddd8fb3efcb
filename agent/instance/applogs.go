package instance

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/shoal-ml/shoal/domain/node"
)

// appLogFlushTimeout bounds the last upload of an application's log when
// the instance stops.
const appLogFlushTimeout = 5 * time.Second

// appLogShipping uploads the logs of an instance's custom applications
// (app-logs/<name>.log) to the server as they grow, as the setup log is,
// so that `shoal compute logs --app NAME` shows them.
type appLogShipping struct {
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// shipAppLogs starts a shipper per custom application of t. Each begins
// where the application's log ends now: what earlier starts wrote was
// shipped then. Call it before the applications start, so that nothing
// they write falls before the starting offset.
func (rt *Runtime) shipAppLogs(t *node.InstanceTask, logDir string) *appLogShipping {
	if len(t.Apps) == 0 {
		return nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &appLogShipping{cancel: cancel}
	for _, app := range t.Apps {
		name := app.Name
		l := &setupLogShipper{c: rt.n.Client, path: filepath.Join(logDir, name+".log"),
			write: func(ctx context.Context, off int64, data []byte) error {
				return rt.n.Client.WriteAppLog(ctx, name, off, data)
			}}
		if st, err := os.Stat(l.path); err == nil {
			l.offset = st.Size()
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			l.loop(ctx)
			// What the application wrote before it stopped: a short
			// try, since the instance is stopping.
			fctx, cancel := context.WithTimeout(context.Background(), appLogFlushTimeout)
			defer cancel()
			l.flush(fctx)
		}()
	}
	return s
}

// stop ships what is left and stops the shippers.
func (s *appLogShipping) stop() {
	if s == nil {
		return
	}
	s.cancel()
	s.wg.Wait()
}
