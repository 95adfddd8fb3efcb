package placement_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/shoal-ml/shoal/domain/catalog"
	"github.com/shoal-ml/shoal/domain/identity"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/internal/teststore"
	"github.com/shoal-ml/shoal/service"
	"github.com/shoal-ml/shoal/store"
	"github.com/shoal-ml/shoal/store/filestore"
)

// newServices returns the request services over st, with one local
// location of the fake provider and a files folder of the test's own:
// what every placement test submits its jobs through.
func newServices(tb testing.TB, st store.Store) *service.Services {
	tb.Helper()
	cat, err := catalog.NewCatalog([]*catalog.Location{{Name: "local", Provider: "fake", Quota: catalog.DefaultQuotaLimits()}}, catalog.BuiltinSizes(), "local")
	if err != nil {
		tb.Fatal(err)
	}
	files, err := filestore.Open(filepath.Join(tb.TempDir(), "files"))
	if err != nil {
		tb.Fatal(err)
	}
	return service.New(service.Config{Store: st, Catalog: cat, Files: files})
}

// asAdmin is ctx as the server's admin, who may submit anywhere.
func asAdmin(ctx context.Context) context.Context {
	return identity.WithPrincipal(ctx, &identity.Principal{ID: "admin", Name: "admin", Kind: identity.PrincipalAdmin, Admin: true})
}

// seedClusters adds, in workspace ws, a cluster of each name of at most
// maxNodes nodes, each with one idle node (<name>-n1) ready for work.
func seedClusters(tb testing.TB, st store.Store, maxNodes int, names ...string) {
	tb.Helper()
	err := st.Update(context.Background(), func(tx store.Tx) error {
		now := tx.Now()
		for _, name := range names {
			c := teststore.Cluster(tx, name)
			c.MaxInstances = &maxNodes
			if err := tx.InsertCompute(c); err != nil {
				return err
			}
			if err := tx.InsertNode(&node.Node{ID: name + "-n1", Workspace: "ws", Compute: name, Location: "local", State: node.NodeIdle,
				Size: "Standard_DS3_v2", VCPUs: 4, CreatedOn: now, LastHeartbeat: now, IdleSince: &now, Version: 1}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
}
