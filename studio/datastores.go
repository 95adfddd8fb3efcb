package studio

import (
	"github.com/shoal-ml/shoal/domain/identity"
	"github.com/shoal-ml/shoal/service/datastores"
)

// datastoresOf is the datastores service over the studio's store and
// secrets key; the pages read through it after the viewer's right to
// read datastores is checked, as the API's routes check it. Nothing it
// shows carries a credential (a Datastore's JSON and fields shown have
// none; the sealed value is cleared by the service).
func (s *Studio) datastoresOf() *datastores.Service {
	return datastores.New(datastores.Config{Store: s.cfg.Svc.Store(), SecretsKey: s.cfg.Svc.SecretsKey()})
}

// datastoresPage lists the workspace's datastores, the built-ins
// included.
func (s *Studio) datastoresPage(q *req) error {
	if err := s.allow(q, identity.ActDatastoresRead); err != nil {
		return err
	}
	list, err := s.datastoresOf().List(q.ctx, q.workspace)
	if err != nil {
		return err
	}
	return s.render(q, "datastores", "Datastores", "datastores", map[string]any{"Datastores": list})
}

// datastorePage shows one datastore: where it points and which kind of
// credential it keeps, never the credential.
func (s *Studio) datastorePage(q *req) error {
	if err := s.allow(q, identity.ActDatastoresRead); err != nil {
		return err
	}
	d, err := s.datastoresOf().Get(q.ctx, q.workspace, q.r.PathValue("name"))
	if err != nil {
		return err
	}
	return s.render(q, "datastore", "Datastore "+d.Name, "datastores", map[string]any{"D": d, "URL": d.BlobServiceURL()})
}
