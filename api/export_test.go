package api

// SetSyncSlots gives the server a sync queue of n slots and returns its
// hooks: take a slot as a sync would, release one, count the syncs
// waiting for one.
func (s *Server) SetSyncSlots(n int) (take func() bool, release func(), queued func() int) {
	return s.agent.SetSyncSlots(n)
}
