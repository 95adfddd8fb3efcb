package api

import (
	"io"
	"net/http"
	"strings"

	"github.com/shoal-ml/shoal/domain/asset"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/identity"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/job/paralleljob"
)

// assetHandlers serve the native routes of one kind of versioned asset
// (environments, components), written once: create by POST to the
// collection or PUT to a version, list, show by version or label, archive
// and restore.
type assetHandlers[T asset.Asset] struct {
	s   *Server
	svc asset.AssetService[T]
	// decode reads a create request's body, refusing an unknown key by
	// name; it is the one thing the kinds read differently (a component's
	// document keeps its numbers as written).
	decode func(body io.Reader) (T, error)
}

// assetHandlersName is how Route.HandlerName names assetHandlers' methods
// (the runtime's name carries the type arguments).
const assetHandlersName = "github.com/shoal-ml/shoal/api.assetHandlers"

// assetRoutes are the native routes of a kind whose collection is
// /api/v1/workspaces/{ws}/<collection>, guarded by read and write.
func assetRoutes[T asset.Asset](collection, read, write string, h assetHandlers[T]) []Route {
	base := "/api/v1/workspaces/{ws}/" + collection
	return []Route{
		{Pattern: "POST " + base, Action: write, handler: h.create, name: assetHandlersName + ".create"},
		{Pattern: "GET " + base, Action: read, handler: h.list, name: assetHandlersName + ".list"},
		{Pattern: "PUT " + base + "/{name}/versions/{version}", Action: write, handler: h.create, name: assetHandlersName + ".create"},
		{Pattern: "GET " + base + "/{name}/versions/{version}", Action: read, handler: h.get, name: assetHandlersName + ".get"},
		{Pattern: "GET " + base + "/{name}/labels/{label}", Action: read, handler: h.get, name: assetHandlersName + ".get"},
		{Pattern: "POST " + base + "/{name}/archive", Action: write, handler: h.archive, name: assetHandlersName + ".archive"},
		{Pattern: "POST " + base + "/{name}/restore", Action: write, handler: h.archive, name: assetHandlersName + ".archive"},
	}
}

// assetRoutes are the routes of every kind of versioned asset.
func (s *Server) assetRoutes() []Route {
	envs := assetHandlers[*asset.Environment]{s: s, svc: s.envs, decode: func(body io.Reader) (*asset.Environment, error) {
		var e asset.Environment
		if err := decodeStrict(body, &e); err != nil {
			return nil, err
		}
		return &e, nil
	}}
	comps := assetHandlers[*job.Component]{s: s, svc: s.comps, decode: func(body io.Reader) (*job.Component, error) {
		raw, err := io.ReadAll(body)
		if err != nil {
			return nil, err
		}
		if err := refuseServerLabels(raw, ""); err != nil {
			return nil, err
		}
		// A command or a parallel component (type: parallel).
		return paralleljob.DecodeComponent(raw, "")
	}}
	routes := append(assetRoutes("environments", identity.ActEnvironmentsRead, identity.ActEnvironmentsWrite, envs),
		assetRoutes("components", identity.ActComponentsRead, identity.ActComponentsWrite, comps)...)
	return append(routes, s.dataAssetRoutes()...)
}

// create registers a version: POST to the collection (name in the body,
// version from the body or the next one) or PUT to
// .../{name}/versions/{version}, whose path wins over the body's. The
// body is the asset's document as JSON (the YAML's keys), decoded
// strictly: an unknown key is refused naming it.
func (h assetHandlers[T]) create(w http.ResponseWriter, r *http.Request) {
	a, err := h.decode(r.Body)
	if err != nil {
		h.s.writeError(w, r, err)
		return
	}
	m := a.AssetMeta()
	for _, p := range []struct {
		field, path string
		value       *string
	}{{"name", r.PathValue("name"), &m.Name}, {"version", r.PathValue("version"), &m.Version}} {
		if p.path == "" {
			continue
		}
		if *p.value != "" && *p.value != p.path {
			h.s.writeError(w, r, core.FieldErrorf(p.field, "%q differs from the %s in the URL (%q)", *p.value, p.field, p.path))
			return
		}
		*p.value = p.path
	}
	m.Workspace = r.PathValue("ws")
	a.SetAssetMeta(m)
	out, created, err := h.svc.Create(r.Context(), a)
	if err != nil {
		h.s.writeError(w, r, err)
		return
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	writeJSON(w, status, out)
}

func (h assetHandlers[T]) list(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f := asset.AssetFilter{Workspace: r.PathValue("ws"), Name: q.Get("name"), Archived: q.Get("archived") == "true"}
	list, err := h.svc.List(r.Context(), f)
	if err != nil {
		h.s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, listBody[T]{Value: list})
}

func (h assetHandlers[T]) get(w http.ResponseWriter, r *http.Request) {
	a, err := h.svc.Get(r.Context(), r.PathValue("ws"), r.PathValue("name"), r.PathValue("version"), r.PathValue("label"))
	if err != nil {
		h.s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, a)
}

// archive archives (…/archive) or restores (…/restore) the version of
// ?version=, or every version without it.
func (h assetHandlers[T]) archive(w http.ResponseWriter, r *http.Request) {
	archived := strings.HasSuffix(r.URL.Path, "/archive")
	list, err := h.svc.Archive(r.Context(), r.PathValue("ws"), r.PathValue("name"), r.URL.Query().Get("version"), archived)
	if err != nil {
		h.s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, listBody[T]{Value: list})
}
