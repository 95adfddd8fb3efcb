package service

import (
	"log/slog"

	"github.com/shoal-ml/shoal/domain/money"
	"github.com/shoal-ml/shoal/store"
	"github.com/shoal-ml/shoal/store/live"
)

// What the control loops (package control) reach of the services: the
// store and settings they share, and the in-memory state the request
// handlers read (wait reasons, budget blocks, instances' idle
// bookkeeping, long-poll hubs). The loops live in their own package so
// that this one holds request handling only; service must not import
// control (TestServiceLinksNoControlLoop, deps_link_test.go).

// Store is the store every service and loop writes through (audited).
func (s *Services) Store() store.Store { return s.store }

// Config is the configuration s was built with, defaults filled in.
func (s *Services) Config() Config { return s.cfg }

// Logger is the logger of s.
func (s *Services) Logger() *slog.Logger { return s.log }

// Notify tells the server that something changed, so that it runs a
// placement pass soon.
func (s *Services) Notify() { s.notify() }

// Changed tells the server of a change confined to the compute of key
// (by compute.ComputeKey), so that it runs a placement pass over that
// compute's queue soon, not one over every queue.
func (s *Services) Changed(key string) { s.changed(key) }

// Live is what instances' agents last reported.
func (s *Services) Live() live.InstanceState { return s.live }

// WakeNodes wakes the long polls of the named nodes' agents, so that they
// sync at once.
func (s *Services) WakeNodes(ids ...string) { s.nodes.Wake(ids...) }

// WaitReasons is why each queued job waits, which the leader's passes
// write and every replica shows.
func (s *Services) WaitReasons() live.WaitReasons { return s.reasons }

// BudgetBlocks are the blocking budgets the last budget pass found
// reached, and whether a pass has run yet.
func (s *Services) BudgetBlocks() (money.BudgetBlocks, bool) { return s.budgets.Get() }

// SetBudgetBlocks records the blocking budgets a budget pass found
// reached, which placement (a report's hand-on included) reads.
func (s *Services) SetBudgetBlocks(b money.BudgetBlocks) { s.budgets.Set(b) }
