package arm

import (
	"encoding/base64"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strings"

	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/core"
)

// PageSize is how many computes one page of a list holds; the SDKs follow
// nextLink for the rest.
const PageSize = 25

// page returns the computes after the $skip continuation token (a
// position by name, so that computes created or deleted between pages
// neither repeat nor vanish) and, when more follow, the absolute nextLink
// that continues from the page's last one.
func page(base string, r *http.Request, list []*compute.Compute) ([]*compute.Compute, string, error) {
	sort.SliceStable(list, func(i, j int) bool { return strings.ToLower(list[i].Name) < strings.ToLower(list[j].Name) })
	if tok := r.URL.Query().Get("$skip"); tok != "" {
		after, err := base64.RawURLEncoding.DecodeString(tok)
		if err != nil {
			return nil, "", core.FieldErrorf("$skip", "%q is not a continuation token from a nextLink", tok)
		}
		i := sort.Search(len(list), func(i int) bool { return strings.ToLower(list[i].Name) > string(after) })
		list = list[i:]
	}
	if len(list) <= PageSize {
		return list, "", nil
	}
	list = list[:PageSize]
	q := url.Values{}
	q.Set("api-version", r.URL.Query().Get("api-version"))
	q.Set("$skip", base64.RawURLEncoding.EncodeToString([]byte(strings.ToLower(list[len(list)-1].Name))))
	next := serverURL(base, r)
	next.Path = strings.TrimSuffix(next.Path, "/") + r.URL.Path
	next.RawQuery = q.Encode()
	return list, next.String(), nil
}

// pageKeys pages a list already in its order, given each item's key
// (unique in the list): the items from lo to hi follow the item whose key
// the $skip continuation token holds, at most size of them, and next is
// the absolute nextLink while more follow, carrying the list's own query
// (carry) besides api-version and $skip. Registered environments and
// their versions are never deleted, so the token's item is always found;
// one that is not is refused rather than restarted.
func pageKeys(base string, r *http.Request, keys []string, size int, carry url.Values) (lo, hi int, next string, err error) {
	if tok := r.URL.Query().Get("$skip"); tok != "" {
		after, err := base64.RawURLEncoding.DecodeString(tok)
		i := slices.Index(keys, string(after))
		if err != nil || i < 0 {
			return 0, 0, "", core.FieldErrorf("$skip", "%q is not a continuation token from a nextLink of this list", tok)
		}
		lo = i + 1
	}
	hi = min(len(keys), lo+size)
	if hi == len(keys) {
		return lo, hi, "", nil
	}
	q := url.Values{}
	for k, v := range carry {
		if len(v) > 0 && v[0] != "" {
			q.Set(k, v[0])
		}
	}
	q.Set("api-version", r.URL.Query().Get("api-version"))
	q.Set("$skip", base64.RawURLEncoding.EncodeToString([]byte(keys[hi-1])))
	u := serverURL(base, r)
	u.Path = strings.TrimSuffix(u.Path, "/") + r.URL.Path
	u.RawQuery = q.Encode()
	return lo, hi, u.String(), nil
}
