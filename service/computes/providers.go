package computes

import (
	"github.com/shoal-ml/shoal/domain/catalog"
	"github.com/shoal-ml/shoal/domain/node"
)

// ProviderFor returns the provider of a location, or nil.
func (s *Service) ProviderFor(location string) node.Provider {
	loc, err := s.catalog.Location(location)
	if err != nil {
		return nil
	}
	return s.Provider(loc)
}

// Provider returns a location's provider: its own (an ssh pool is one
// location's), else the one its provider name names (local), or nil.
func (s *Service) Provider(loc *catalog.Location) node.Provider {
	if p, ok := s.cfg.Providers[loc.Name]; ok {
		return p
	}
	return s.cfg.Providers[loc.Provider]
}
