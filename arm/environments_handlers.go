package arm

import (
	"net/http"
	"strings"

	"github.com/shoal-ml/shoal/arm/armasset"
	"github.com/shoal-ml/shoal/domain/asset"
	"github.com/shoal-ml/shoal/domain/core"
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
		return false, nil, core.FieldErrorf("listViewType", "%q is not ActiveOnly, ArchivedOnly or All", v)
	}
}

// Environments are the ARM routes of registered environments.
func (h Handlers) Environments() AssetRoutes {
	return newAssetRoutes(h, h.Envs, "an", "environment",
		func(scope Scope, e *asset.Environment) any { return armasset.ToEnvironmentVersion(scope, e) },
		armasset.FromEnvironmentVersion, armasset.EnvironmentVersionError)
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
		return false, core.FieldErrorf("$orderBy", "%q is not CreatedAtDesc or CreatedAtAsc", v)
	}
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
