package service

// PublicURL is the server's URL as users reach it (the configured one):
// documents that name this server's endpoints are built from it, never
// from a request's Host header.
func (s *Services) PublicURL() string { return s.cfg.PublicURL }
