package service

import (
	"log/slog"

	"github.com/shoal-ml/shoal"
	"github.com/shoal-ml/shoal/live"
	"github.com/shoal-ml/shoal/scheduler"
)

// What the control loops (package control) reach of the services: the
// store and settings they share, and the in-memory state the request
// handlers read (wait reasons, budget blocks, instances' idle
// bookkeeping, long-poll hubs). The loops live in their own package so
// that this one holds request handling only; service must not import
// control (TestServiceLinksNoControlLoop, deps_link_test.go).

// Store is the store every service and loop writes through (audited).
func (s *Services) Store() shoal.Store { return s.store }

// Config is the configuration s was built with, defaults filled in.
func (s *Services) Config() Config { return s.cfg }

// Logger is the logger of s.
func (s *Services) Logger() *slog.Logger { return s.log }

// Notify tells the server that something changed, so that it runs a
// placement pass soon.
func (s *Services) Notify() { s.notify() }

// Live is what instances' agents last reported.
func (s *Services) Live() live.InstanceState { return s.live }

// WakeNodes wakes the long polls of the named nodes' agents, so that they
// sync at once.
func (s *Services) WakeNodes(ids ...string) { s.nodes.wake(ids...) }

// ReplaceReasons sets the wait reasons of every queued job, as a whole
// queue pass found them.
func (s *Services) ReplaceReasons(r map[string]scheduler.Reason) { s.reasons.replace(r) }

// SetReasonCode updates the code of one job's wait reason; it reports
// whether the job had a reason to update.
func (s *Services) SetReasonCode(id, code string) bool { return s.reasons.setCode(id, code) }

// BudgetBlocks are the blocking budgets the last budget pass found
// reached, and whether a pass has run yet.
func (s *Services) BudgetBlocks() (shoal.BudgetBlocks, bool) { return s.budgets.get() }

// SetBudgetBlocks records the blocking budgets a budget pass found
// reached, which placement (a report's hand-on included) reads.
func (s *Services) SetBudgetBlocks(b shoal.BudgetBlocks) { s.budgets.set(b) }
