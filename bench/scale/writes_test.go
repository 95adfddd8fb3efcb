package main

import (
	"testing"
	"time"
)

func TestWriteLine(t *testing.T) {
	t0 := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	before := parseWrites([]byte("# HELP shoal_store_write_transactions_total x\nshoal_store_write_transactions_total 100\nshoal_store_write_updates_total 150\nshoal_store_write_busy_seconds_total 1\n"))
	after := parseWrites([]byte("shoal_store_write_transactions_total 300\nshoal_store_write_updates_total 550\nshoal_store_write_busy_seconds_total 2.5\n"))
	before.at, after.at = t0, t0.Add(10*time.Second)
	if got, want := writeLine(before, after), "write path: 20 transactions/s, 2.0 Updates each, busy 15 % of the time"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if got := writeLine(after, after); got != "write path: no write transactions observed" {
		t.Errorf("no writes: %q", got)
	}
}
