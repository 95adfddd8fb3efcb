package api

import (
	"net/http"
	"strconv"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/notify"
	"github.com/shoal-ml/shoal/service/webhooks"
)

// Webhooks (`shoal webhook`): Owners alone read or write them (the
// routes' actions, identity.ActWebhooks*), since a webhook says where the
// workspace's events go. The create and rotate answers are the only ones
// that carry a secret.

// SetWebhookPolicy applies the server's notifications config to webhook
// URLs: allowPrivate (allow_private_webhook_urls) accepts the loopback,
// link-local and unspecified addresses; allowHTTP http:// URLs. Call
// before serving.
func (s *Server) SetWebhookPolicy(allowPrivate, allowHTTP bool) {
	s.webhooks = newWebhooks(s, allowPrivate, allowHTTP)
}

func newWebhooks(s *Server, allowPrivate, allowHTTP bool) *webhooks.Service {
	return webhooks.New(webhooks.Config{Store: s.svc.Store(), SecretsKey: s.svc.SecretsKey(), Clock: s.svc,
		AllowPrivate: allowPrivate, AllowHTTP: allowHTTP})
}

func (s *Server) handleCreateWebhook(w http.ResponseWriter, r *http.Request) {
	var req webhooks.Create
	if err := decodeStrict(r.Body, &req); err != nil {
		s.writeError(w, r, err)
		return
	}
	out, err := s.webhooks.Create(r.Context(), r.PathValue("ws"), &req)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, out)
}

func (s *Server) handleListWebhooks(w http.ResponseWriter, r *http.Request) {
	list, err := s.webhooks.List(r.Context(), r.PathValue("ws"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, listBody[*notify.Webhook]{Value: list})
}

func (s *Server) handleGetWebhook(w http.ResponseWriter, r *http.Request) {
	hook, err := s.webhooks.Get(r.Context(), r.PathValue("ws"), r.PathValue("name"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, hook)
}

func (s *Server) handleDeleteWebhook(w http.ResponseWriter, r *http.Request) {
	if err := s.webhooks.Delete(r.Context(), r.PathValue("ws"), r.PathValue("name")); err != nil {
		s.writeError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) handleWebhookDeliveries(w http.ResponseWriter, r *http.Request) {
	limit := 0
	if v := r.URL.Query().Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			s.writeError(w, r, core.FieldErrorf("limit", "%q must be a whole number of 1 or more", core.Short(v)))
			return
		}
		limit = n
	}
	list, err := s.webhooks.ListDeliveries(r.Context(), r.PathValue("ws"), r.PathValue("name"), limit)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, listBody[*notify.Delivery]{Value: list})
}

func (s *Server) handleTestWebhook(w http.ResponseWriter, r *http.Request) {
	d, err := s.webhooks.Test(r.Context(), r.PathValue("ws"), r.PathValue("name"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusAccepted, d)
}

func (s *Server) handleRotateWebhookSecret(w http.ResponseWriter, r *http.Request) {
	out, err := s.webhooks.RotateSecret(r.Context(), r.PathValue("ws"), r.PathValue("name"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, out)
}
