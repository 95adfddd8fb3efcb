package arm

import (
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/shoal-ml/shoal/arm/armasset"
	"github.com/shoal-ml/shoal/domain/asset"
	"github.com/shoal-ml/shoal/domain/core"
)

// assetARM is Azure's container and version routes of one kind of
// versioned asset (…/environments, components, data, models), written
// once: what differs between kinds is how a version reads and shows as
// Azure's resource, given here.
type assetARM[T asset.Asset] struct {
	svc asset.AssetService[T]
	// publicURL is the server's public URL, for nextLinks.
	publicURL func() string
	// noun is the kind's name ("environment"), a it with its article,
	// collection its ARM collection ("environments") and containerType
	// its container's resource type.
	noun, a, collection, containerType string
	// containerResource is the container's resource with its article
	// ("an EnvironmentContainer"), for errors.
	containerResource string
	// toVersion shows a version as Azure's resource.
	toVersion func(scope Scope, a T) any
	// fromVersion reads a version's PUT body (name and version from the
	// path) and whether it asks the version archived (nil: it does not
	// say).
	fromVersion func(workspace, name, version string, body []byte) (T, *bool, error)
	// versionError renames a refused version's field to its ARM name.
	versionError func(err error, name, version string) error
	// containerProps, when set, adds what a kind's container shows of its
	// newest version (a DataContainer's dataType).
	containerProps func(newest T, p *armasset.EnvironmentContainerProperties)
}

// newAssetRoutes are the ARM routes of a kind of versioned asset over
// svc: its noun ("environment") with its article ("an"), and how its
// version shows (to), reads (from) and names its refused fields
// (versionError). Its collection is the noun's plural, its container
// Azure's <Noun>Container.
func newAssetRoutes[T asset.Asset](h Handlers, svc asset.AssetService[T], article, noun string, to func(Scope, T) any,
	from func(workspace, name, version string, body []byte) (T, *bool, error), versionError func(err error, name, version string) error) AssetRoutes {
	return newAssetARM(h, svc, article, noun, to, from, versionError).routes()
}

// newAssetARM is newAssetRoutes' kind, for a kind to change before it
// takes its routes (a collection that is not its noun's plural).
func newAssetARM[T asset.Asset](h Handlers, svc asset.AssetService[T], article, noun string, to func(Scope, T) any,
	from func(workspace, name, version string, body []byte) (T, *bool, error), versionError func(err error, name, version string) error) assetARM[T] {
	collection := noun + "s"
	return assetARM[T]{
		svc: svc, publicURL: func() string { return h.Svc.PublicURL() },
		noun: noun, a: article + " " + noun, collection: collection,
		containerType:     "Microsoft.MachineLearningServices/workspaces/" + collection,
		containerResource: article + " " + strings.ToUpper(noun[:1]) + noun[1:] + "Container",
		toVersion:         to, fromVersion: from, versionError: versionError,
	}
}

// AssetRoutes are the handlers of one kind's ARM routes, for the route
// table (package api) to put under …/{collection}.
type AssetRoutes struct {
	// ListContainers is GET …/{collection}.
	ListContainers http.HandlerFunc
	// GetContainer is GET …/{collection}/{name}.
	GetContainer http.HandlerFunc
	// PutContainer is PUT …/{collection}/{name}.
	PutContainer http.HandlerFunc
	// Delete is DELETE …/{collection}/{name} and of a version: refused.
	Delete http.HandlerFunc
	// ListVersions is GET …/{collection}/{name}/versions.
	ListVersions http.HandlerFunc
	// GetVersion is GET …/{collection}/{name}/versions/{version}.
	GetVersion http.HandlerFunc
	// PutVersion is PUT …/{collection}/{name}/versions/{version}.
	PutVersion http.HandlerFunc
}

// routes returns the kind's handlers.
func (h assetARM[T]) routes() AssetRoutes {
	return AssetRoutes{
		ListContainers: h.listContainers, GetContainer: h.getContainer, PutContainer: h.putContainer, Delete: h.delete,
		ListVersions: h.listVersions, GetVersion: h.getVersion, PutVersion: h.putVersion,
	}
}

// toContainer is an asset as Azure shows its container, from all its
// versions (armasset.ToContainer).
func (h assetARM[T]) toContainer(scope Scope, versions []T) (*armasset.EnvironmentContainer, error) {
	return armasset.ToContainer(scope, h.a, h.collection, h.containerType, versions, h.containerProps)
}

// listContainers is GET …/{collection}: a container per
// registered name, by name, in pages with a nextLink.
func (h assetARM[T]) listContainers(w http.ResponseWriter, r *http.Request) {
	_, show, err := listView(r)
	if err != nil {
		WriteError(w, err)
		return
	}
	// Every version, archived too: a container is archived only when all
	// its versions are.
	all, err := h.svc.List(r.Context(), asset.AssetFilter{Workspace: r.PathValue("ws"), Archived: true})
	if err != nil {
		WriteError(w, err)
		return
	}
	var containers []*armasset.EnvironmentContainer
	var keys []string
	for i := 0; i < len(all); {
		j := i + 1
		for j < len(all) && strings.EqualFold(all[j].AssetMeta().Name, all[i].AssetMeta().Name) {
			j++
		}
		c, err := h.toContainer(scopeOf(r), all[i:j])
		if err != nil {
			WriteError(w, err)
			return
		}
		if show(*c.Properties.IsArchived) && !armasset.IsAnonymousName(c.Name) {
			containers, keys = append(containers, c), append(keys, strings.ToLower(c.Name))
		}
		i = j
	}
	lo, hi, next, err := pageKeys(h.publicURL(), r, keys, PageSize, url.Values{"listViewType": r.URL.Query()["listViewType"]})
	if err != nil {
		WriteError(w, err)
		return
	}
	writeList(w, containers[lo:hi], next)
}

// containerVersions returns every version of the asset in the
// path, archived ones included; ENOTFOUND when it has none.
func (h assetARM[T]) containerVersions(r *http.Request) ([]T, error) {
	ws, name := r.PathValue("ws"), r.PathValue("name")
	list, err := h.svc.List(r.Context(), asset.AssetFilter{Workspace: ws, Name: name, Archived: true})
	if err == nil && len(list) == 0 {
		err = core.Errorf(core.ENOTFOUND, "%s %q not found in workspace %q", h.noun, name, ws)
	}
	return list, err
}

// getContainer is GET …/{collection}/{name}.
func (h assetARM[T]) getContainer(w http.ResponseWriter, r *http.Request) {
	list, err := h.containerVersions(r)
	if err != nil {
		WriteError(w, err)
		return
	}
	c, err := h.toContainer(scopeOf(r), list)
	if err != nil {
		WriteError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, c)
}

// putContainer is PUT …/{collection}/{name}: it archives or
// restores every version (properties.isArchived), as the SDKs' archive
// of a whole asset does. Shoal has no container without a version:
// a new name is created with its first version.
func (h assetARM[T]) putContainer(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		WriteError(w, err)
		return
	}
	archived, err := armasset.FromContainer(h.noun, h.containerResource, body)
	if err != nil {
		WriteError(w, err)
		return
	}
	list, err := h.containerVersions(r)
	if core.ErrorCode(err) == core.ENOTFOUND {
		err = core.FieldErrorf("name", "%s %q has no version yet: Shoal creates %s with its first version (PUT …/%s/%s/versions/1)", h.noun, r.PathValue("name"), h.a, h.collection, r.PathValue("name"))
	}
	if err != nil {
		WriteError(w, err)
		return
	}
	if c, _ := h.toContainer(scopeOf(r), list); archived != nil && *archived != *c.Properties.IsArchived {
		if list, err = h.svc.Archive(r.Context(), r.PathValue("ws"), r.PathValue("name"), "", *archived); err != nil {
			WriteError(w, err)
			return
		}
	}
	c, err := h.toContainer(scopeOf(r), list)
	if err != nil {
		WriteError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, c)
}

// errNoDelete answers a DELETE of an asset or a version: Azure ML
// archives assets instead of deleting them (az ml and azure-ai-ml
// have had no delete since CLI v2), and Shoal keeps every version a job
// may have named.
func (h assetARM[T]) errNoDelete(r *http.Request) error {
	return core.Errorf(core.EINVALID, "%s are not deleted: archive %s instead (PUT it with properties.isArchived true, as ml_client.%s.archive does, or `shoal %s archive --name %s`); an archived version leaves lists and @latest",
		h.collection, r.PathValue("name"), h.collection, h.noun, r.PathValue("name"))
}

// delete is DELETE …/{collection}/{name} and
// …/{collection}/{name}/versions/{version}: refused (errNoDelete), after
// checking that what it names exists.
func (h assetARM[T]) delete(w http.ResponseWriter, r *http.Request) {
	var err error
	if v := r.PathValue("version"); v != "" {
		_, err = h.svc.Get(r.Context(), r.PathValue("ws"), r.PathValue("name"), v, "")
	} else {
		_, err = h.containerVersions(r)
	}
	if err == nil {
		err = h.errNoDelete(r)
	}
	WriteError(w, err)
}

// listVersions is GET …/{collection}/{name}/versions: the
// versions newest first ($orderBy CreatedAtAsc: oldest first), at most
// $top of them, in pages with a nextLink.
func (h assetARM[T]) listVersions(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	archivedToo, show, err := listView(r)
	if err != nil {
		WriteError(w, err)
		return
	}
	asc, err := orderBy(r)
	if err != nil {
		WriteError(w, err)
		return
	}
	size, top := PageSize, 0
	if s := q.Get("$top"); s != "" {
		if top, err = strconv.Atoi(s); err != nil || top < 1 {
			WriteError(w, core.FieldErrorf("$top", "%q must be a whole number of 1 or more", s))
			return
		}
		size = min(size, top)
	}
	list, err := h.svc.List(r.Context(), asset.AssetFilter{Workspace: r.PathValue("ws"), Name: r.PathValue("name"), Archived: archivedToo})
	if err != nil {
		WriteError(w, err)
		return
	}
	list = slices.DeleteFunc(list, func(a T) bool { return !show(a.AssetMeta().Archived) })
	if asc {
		slices.Reverse(list)
	}
	keys := make([]string, len(list))
	for i, a := range list {
		keys[i] = a.AssetMeta().Version
	}
	carry := url.Values{"listViewType": q["listViewType"], "$orderBy": q["$orderBy"]}
	if top > 0 {
		// $top is what the whole list may return: a next page (which
		// follows a full one) may return what this one left.
		carry.Set("$top", strconv.Itoa(top-size))
	}
	lo, hi, next, err := pageKeys(h.publicURL(), r, keys, size, carry)
	if err != nil {
		WriteError(w, err)
		return
	}
	if top == size {
		next = ""
	}
	out := make([]any, 0, hi-lo)
	for _, a := range list[lo:hi] {
		out = append(out, h.toVersion(scopeOf(r), a))
	}
	writeList(w, out, next)
}

// getVersion is GET …/{collection}/{name}/versions/{version}.
func (h assetARM[T]) getVersion(w http.ResponseWriter, r *http.Request) {
	a, err := h.svc.Get(r.Context(), r.PathValue("ws"), r.PathValue("name"), r.PathValue("version"), "")
	if err != nil {
		WriteError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, h.toVersion(scopeOf(r), a))
}

// putVersion is PUT …/{collection}/{name}/versions/{version}:
// it registers the version (201), or finds it registered with the same
// definition (200) and archives or restores it as properties.isArchived
// says; a version registered with another definition is 409, since a
// version never changes.
func (h assetARM[T]) putVersion(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		WriteError(w, err)
		return
	}
	ws, name, version := r.PathValue("ws"), r.PathValue("name"), r.PathValue("version")
	a, archived, err := h.fromVersion(ws, name, version, body)
	if err != nil {
		WriteError(w, err)
		return
	}
	out, created, err := h.svc.Create(r.Context(), a)
	if err != nil {
		WriteError(w, h.versionError(err, name, version))
		return
	}
	if m := out.AssetMeta(); archived != nil && *archived != m.Archived {
		list, err := h.svc.Archive(r.Context(), ws, m.Name, m.Version, *archived)
		if err != nil {
			WriteError(w, err)
			return
		}
		out = list[0]
	}
	status := createdStatus(created)
	writeJSON(w, status, h.toVersion(scopeOf(r), out))
}
