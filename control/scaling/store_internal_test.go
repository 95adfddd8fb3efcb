package scaling

import (
	"testing"

	"github.com/shoal-ml/shoal/internal/teststore"
	"github.com/shoal-ml/shoal/store/sqlite"
	"github.com/shoal-ml/shoal/store/storetest"
)

// openTestStore opens a SQLite store in a temp dir on a test clock, with
// the workspace "ws" in it, closed when the test ends.
func openTestStore(t *testing.T) (*sqlite.DB, *storetest.Clock) {
	t.Helper()
	return teststore.Open(t)
}
