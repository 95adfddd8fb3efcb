// Package stcheck holds what the store conformance suite's packages
// (storetest and its accesstest, assettest and workspacetest) share: the
// settable clock, a test case's shape, and the helpers that run a
// transaction or compare what a store read back.
package stcheck

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/store"
)

// Start is the time the suite's clocks start at. It has nanoseconds and a
// non-UTC zone, so that stores are seen to truncate to microseconds and
// convert to UTC.
var Start = time.Date(2025, time.March, 14, 15, 9, 26, 535897932, time.FixedZone("CET", 3600))

// Now is what Tx.Now must return when the clock reads c.
func Now(c time.Time) time.Time { return c.UTC().Truncate(time.Microsecond) }

// Update runs fn in an Update and fails the test on error.
func Update(t *testing.T, s store.Store, fn func(tx store.Tx) error) {
	t.Helper()
	if err := s.Update(t.Context(), fn); err != nil {
		t.Fatalf("Update: %v", err)
	}
}

// View runs fn in a View and fails the test on error.
func View(t *testing.T, s store.Store, fn func(tx store.Tx) error) {
	t.Helper()
	if err := s.View(t.Context(), fn); err != nil {
		t.Fatalf("View: %v", err)
	}
}

// WantCode fails the test unless err carries code.
func WantCode(t *testing.T, what string, err error, code string) {
	t.Helper()
	if got := core.ErrorCode(err); got != code {
		t.Errorf("%s: error code %q (err %v), want %q", what, got, err, code)
	}
}

// Equal fails the test unless got and want are deeply equal, showing both.
func Equal(t *testing.T, what string, got, want any) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s:\n got: %s\nwant: %s", what, Show(got), Show(want))
	}
}

// Show renders v for a failure message, including the fields JSON leaves
// out.
func Show(v any) string {
	var extra string
	switch c := v.(type) {
	case *compute.Compute:
		if c != nil {
			extra = fmt.Sprintf(" (workspace %q, version %d)", c.Workspace, c.Version)
		}
	case []*compute.Compute:
		for _, c := range c {
			extra += fmt.Sprintf(" (%q: workspace %q, version %d)", c.Name, c.Workspace, c.Version)
		}
	case *node.Node:
		extra = showNode(c)
	case []*node.Node:
		for _, n := range c {
			extra += showNode(n)
		}
	case *job.Job:
		extra = showJob(c)
	case []*job.Job:
		for _, j := range c {
			extra += showJob(j)
		}
	case *job.Attempt:
		if c != nil {
			extra = fmt.Sprintf(" (workspace %q)", c.Workspace)
		}
	case []*job.Attempt:
		for _, a := range c {
			extra += fmt.Sprintf(" (%q: workspace %q)", a.ID, a.Workspace)
		}
	}
	b, err := json.MarshalIndent(v, "      ", "  ")
	if err != nil {
		return fmt.Sprintf("%#v", v)
	}
	return string(b) + extra
}

// Ptr returns a pointer to a copy of v.
func Ptr[T any](v T) *T { return &v }

func showNode(n *node.Node) string {
	if n == nil {
		return ""
	}
	return fmt.Sprintf(" (%q: workspace %q, provider ref %q, join token hash %q expiring %v, credential hash %q, version %d)",
		n.ID, n.Workspace, n.ProviderRef, n.JoinTokenHash, n.JoinTokenExpires, n.CredentialHash, n.Version)
}

func showJob(j *job.Job) string {
	if j == nil {
		return ""
	}
	return fmt.Sprintf(" (%q: workspace %q, seq %d, spec hash %q, version %d)", j.Name, j.Workspace, j.Seq, j.SpecHash, j.Version)
}

// JSON renders v as JSON for a failure message.
func JSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// A Case is one test of the conformance suite: it gets a new, empty store
// and the clock the store takes its time from.
type Case struct {
	Name string
	Fn   func(t *testing.T, s store.Store, clock *Clock)
}
