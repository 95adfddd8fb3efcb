package api

import (
	"net"

	"github.com/shoal-ml/shoal/api/agentapi"
)

// Parking is the listener that parks agents' syncs off net/http
// (agentapi.Parking); named here too because the server's owner
// (app/main.go) builds its listener with the server.
type Parking = agentapi.Parking

// NewParking wraps ln (agentapi.NewParking); Close closes ln.
func NewParking(ln net.Listener) *Parking { return agentapi.NewParking(ln) }

// SetParking makes the server park agents' syncs on p (see Parking).
func (s *Server) SetParking(p *Parking) { s.agent.SetParking(p) }
