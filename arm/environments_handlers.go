package arm

import (
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/shoal-ml/shoal"
)

// listView reads listViewType (ActiveOnly, the default; ArchivedOnly;
// All): whether to ask the service for archived versions, and whether an
// item of that archived state is shown.
func listView(r *http.Request) (includeArchived bool, show func(archived bool) bool, err error) {
	switch v := r.URL.Query().Get("listViewType"); strings.ToLower(v) {
	case "", "activeonly":
		return false, func(a bool) bool { return !a }, nil
	case "archivedonly":
		return true, func(a bool) bool { return a }, nil
	case "all":
		return true, func(bool) bool { return true }, nil
	default:
		return false, nil, shoal.FieldErrorf("listViewType", "%q is not ActiveOnly, ArchivedOnly or All", v)
	}
}

// ListEnvironmentContainers is GET …/environments: a container per
// registered name, by name, in pages with a nextLink.
func (h Handlers) ListEnvironmentContainers(w http.ResponseWriter, r *http.Request) {
	_, show, err := listView(r)
	if err != nil {
		WriteError(w, err)
		return
	}
	// Every version, archived too: a container is archived only when all
	// its versions are.
	all, err := h.Envs.List(r.Context(), shoal.AssetFilter{Workspace: r.PathValue("ws"), Archived: true})
	if err != nil {
		WriteError(w, err)
		return
	}
	var containers []*EnvironmentContainer
	var keys []string
	for i := 0; i < len(all); {
		j := i + 1
		for j < len(all) && strings.EqualFold(all[j].Name, all[i].Name) {
			j++
		}
		c, err := ToEnvironmentContainer(scopeOf(r), all[i:j])
		if err != nil {
			WriteError(w, err)
			return
		}
		if show(*c.Properties.IsArchived) {
			containers, keys = append(containers, c), append(keys, strings.ToLower(c.Name))
		}
		i = j
	}
	lo, hi, next, err := pageKeys(h.Svc.PublicURL(), r, keys, PageSize, url.Values{"listViewType": r.URL.Query()["listViewType"]})
	if err != nil {
		WriteError(w, err)
		return
	}
	writeList(w, containers[lo:hi], next)
}

// containerVersions returns every version of the environment in the
// path, archived ones included; ENOTFOUND when it has none.
func (h Handlers) containerVersions(r *http.Request) ([]*shoal.Environment, error) {
	ws, name := r.PathValue("ws"), r.PathValue("name")
	list, err := h.Envs.List(r.Context(), shoal.AssetFilter{Workspace: ws, Name: name, Archived: true})
	if err == nil && len(list) == 0 {
		err = shoal.Errorf(shoal.ENOTFOUND, "environment %q not found in workspace %q", name, ws)
	}
	return list, err
}

// GetEnvironmentContainer is GET …/environments/{name}.
func (h Handlers) GetEnvironmentContainer(w http.ResponseWriter, r *http.Request) {
	list, err := h.containerVersions(r)
	if err != nil {
		WriteError(w, err)
		return
	}
	c, err := ToEnvironmentContainer(scopeOf(r), list)
	if err != nil {
		WriteError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, c)
}

// PutEnvironmentContainer is PUT …/environments/{name}: it archives or
// restores every version (properties.isArchived), as the SDKs' archive
// of a whole environment does. Shoal has no container without a version:
// a new name is created with its first version.
func (h Handlers) PutEnvironmentContainer(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		WriteError(w, err)
		return
	}
	archived, err := FromEnvironmentContainer(body)
	if err != nil {
		WriteError(w, err)
		return
	}
	list, err := h.containerVersions(r)
	if shoal.ErrorCode(err) == shoal.ENOTFOUND {
		err = shoal.FieldErrorf("name", "environment %q has no version yet: Shoal creates an environment with its first version (PUT …/environments/%s/versions/1)", r.PathValue("name"), r.PathValue("name"))
	}
	if err != nil {
		WriteError(w, err)
		return
	}
	if c, _ := ToEnvironmentContainer(scopeOf(r), list); archived != nil && *archived != *c.Properties.IsArchived {
		if list, err = h.Envs.Archive(r.Context(), r.PathValue("ws"), r.PathValue("name"), "", *archived); err != nil {
			WriteError(w, err)
			return
		}
	}
	c, err := ToEnvironmentContainer(scopeOf(r), list)
	if err != nil {
		WriteError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, c)
}

// errNoDelete answers a DELETE of an environment or a version: Azure ML
// archives environments instead of deleting them (az ml and azure-ai-ml
// have had no delete since CLI v2), and Shoal keeps every version a job
// may have named.
func errNoDelete(r *http.Request) error {
	return shoal.Errorf(shoal.EINVALID, "environments are not deleted: archive %s instead (PUT it with properties.isArchived true, as ml_client.environments.archive does, or `shoal environment archive --name %s`); an archived version leaves lists and @latest",
		r.PathValue("name"), r.PathValue("name"))
}

// DeleteEnvironment is DELETE …/environments/{name} and
// …/environments/{name}/versions/{version}: refused (errNoDelete), after
// checking that what it names exists.
func (h Handlers) DeleteEnvironment(w http.ResponseWriter, r *http.Request) {
	var err error
	if v := r.PathValue("version"); v != "" {
		_, err = h.Envs.Get(r.Context(), r.PathValue("ws"), r.PathValue("name"), v, "")
	} else {
		_, err = h.containerVersions(r)
	}
	if err == nil {
		err = errNoDelete(r)
	}
	WriteError(w, err)
}

// orderBy reads $orderBy of a version list: CreatedAtDesc (the default,
// the store's order) or CreatedAtAsc, the values Azure's SDKs send.
func orderBy(r *http.Request) (asc bool, err error) {
	switch v := r.URL.Query().Get("$orderBy"); strings.ToLower(strings.ReplaceAll(v, " ", "")) {
	case "", "createdatdesc", "createdtimedesc":
		return false, nil
	case "createdatasc", "createdtimeasc":
		return true, nil
	default:
		return false, shoal.FieldErrorf("$orderBy", "%q is not CreatedAtDesc or CreatedAtAsc", v)
	}
}

// ListEnvironmentVersions is GET …/environments/{name}/versions: the
// versions newest first ($orderBy CreatedAtAsc: oldest first), at most
// $top of them, in pages with a nextLink.
func (h Handlers) ListEnvironmentVersions(w http.ResponseWriter, r *http.Request) {
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
			WriteError(w, shoal.FieldErrorf("$top", "%q must be a whole number of 1 or more", s))
			return
		}
		size = min(size, top)
	}
	list, err := h.Envs.List(r.Context(), shoal.AssetFilter{Workspace: r.PathValue("ws"), Name: r.PathValue("name"), Archived: archivedToo})
	if err != nil {
		WriteError(w, err)
		return
	}
	list = slices.DeleteFunc(list, func(e *shoal.Environment) bool { return !show(e.Archived) })
	if asc {
		slices.Reverse(list)
	}
	keys := make([]string, len(list))
	for i, e := range list {
		keys[i] = e.Version
	}
	carry := url.Values{"listViewType": q["listViewType"], "$orderBy": q["$orderBy"]}
	if top > 0 {
		// $top is what the whole list may return: a next page (which
		// follows a full one) may return what this one left.
		carry.Set("$top", strconv.Itoa(top-size))
	}
	lo, hi, next, err := pageKeys(h.Svc.PublicURL(), r, keys, size, carry)
	if err != nil {
		WriteError(w, err)
		return
	}
	if top == size {
		next = ""
	}
	out := make([]*EnvironmentVersion, 0, hi-lo)
	for _, e := range list[lo:hi] {
		out = append(out, ToEnvironmentVersion(scopeOf(r), e))
	}
	writeList(w, out, next)
}

// GetEnvironmentVersion is GET …/environments/{name}/versions/{version}.
func (h Handlers) GetEnvironmentVersion(w http.ResponseWriter, r *http.Request) {
	e, err := h.Envs.Get(r.Context(), r.PathValue("ws"), r.PathValue("name"), r.PathValue("version"), "")
	if err != nil {
		WriteError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, ToEnvironmentVersion(scopeOf(r), e))
}

// PutEnvironmentVersion is PUT …/environments/{name}/versions/{version}:
// it registers the version (201), or finds it registered with the same
// definition (200) and archives or restores it as properties.isArchived
// says; a version registered with another definition is 409, since a
// version never changes.
func (h Handlers) PutEnvironmentVersion(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		WriteError(w, err)
		return
	}
	ws, name, version := r.PathValue("ws"), r.PathValue("name"), r.PathValue("version")
	e, archived, err := FromEnvironmentVersion(ws, name, version, body)
	if err != nil {
		WriteError(w, err)
		return
	}
	out, created, err := h.Envs.Create(r.Context(), e)
	if err != nil {
		WriteError(w, armEnvironmentError(err, name, version))
		return
	}
	if archived != nil && *archived != out.Archived {
		list, err := h.Envs.Archive(r.Context(), ws, out.Name, out.Version, *archived)
		if err != nil {
			WriteError(w, err)
			return
		}
		out = list[0]
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	writeJSON(w, status, ToEnvironmentVersion(scopeOf(r), out))
}

// writeList writes an ARM list: value, and nextLink while more follow.
func writeList[T any](w http.ResponseWriter, value []T, next string) {
	if value == nil {
		value = []T{}
	}
	body := map[string]any{"value": value}
	if next != "" {
		body["nextLink"] = next
	}
	writeJSON(w, http.StatusOK, body)
}
