// Package loop holds what every control loop asks of the request
// services, so that each loop's own interface (nodes.Services,
// instances.Services, …) names only what is particular to it, and the
// one way a loop isolates an item's failure (Backoff, Each): recorded on
// the item, retried after a doubling wait, logged once per retry, the
// pass going on with the others.
package loop

import (
	"log/slog"

	"github.com/shoal-ml/shoal/domain/catalog"
	"github.com/shoal-ml/shoal/store"
)

// Base is the store, catalog and logger a loop works with.
type Base interface {
	// Store is the (audited) store the loop reads and writes.
	Store() store.Store
	// Catalog is the sizes, locations and quotas offered.
	Catalog() *catalog.Catalog
	// Logger is where the loop logs what it could not do.
	Logger() *slog.Logger
}

// Notifier asks the server for a placement pass soon (after a change a
// queued job may be waiting for).
type Notifier interface {
	Notify()
}
