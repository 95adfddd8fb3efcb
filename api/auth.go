package api

import (
	"net/http"
	"strings"

	"github.com/shoal-ml/shoal"
)

// authenticate resolves the bearer token to a principal, or answers 401.
// It is the single place where credentials are checked.
func (s *Server) authenticate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := r.Header.Get("Authorization")
		scheme, token, ok := strings.Cut(h, " ")
		if !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(token) == "" {
			s.writeError(w, r, shoal.Errorf(shoal.EUNAUTHORIZED, "authentication required: send Authorization: Bearer <token> (see `shoal login` or <data-dir>/admin.token)"))
			return
		}
		p, err := s.svc.Authenticate(r.Context(), strings.TrimSpace(token))
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		next.ServeHTTP(w, r.WithContext(shoal.WithPrincipal(r.Context(), p)))
	})
}
