package api

import (
	"math"
	"net/http"

	"github.com/shoal-ml/shoal/domain/catalog"
)

// sizeView is a size with Azure's estimated_vm_prices block.
type sizeView struct {
	*catalog.Size
	EstimatedVMPrices vmPricesView `json:"estimated_vm_prices"`
}

type vmPricesView struct {
	BillingCurrency string        `json:"billing_currency"`
	UnitOfMeasure   string        `json:"unit_of_measure"`
	Values          []vmPriceView `json:"values"`
}

type vmPriceView struct {
	RetailPrice float64 `json:"retail_price"`
	OSType      string  `json:"os_type"`
	VMTier      string  `json:"vm_tier"`
}

func newSizeView(s *catalog.Size) sizeView {
	v := sizeView{Size: s, EstimatedVMPrices: vmPricesView{BillingCurrency: "USD", UnitOfMeasure: "OneHour"}}
	v.EstimatedVMPrices.Values = []vmPriceView{{RetailPrice: round4(s.PricePerHour), OSType: "Linux", VMTier: "Standard"}}
	if s.LowPriorityCapable {
		v.EstimatedVMPrices.Values = append(v.EstimatedVMPrices.Values, vmPriceView{RetailPrice: round4(s.LowPriorityPricePerHour), OSType: "Linux", VMTier: "LowPriority"})
	}
	return v
}

func round4(f float64) float64 { return math.Round(f*10000) / 10000 }

func (s *Server) handleListLocations(w http.ResponseWriter, r *http.Request) {
	list, err := s.svc.ListLocations(r.Context())
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, listBody[*catalog.LocationDetail]{Value: list})
}

func (s *Server) handleGetLocation(w http.ResponseWriter, r *http.Request) {
	d, err := s.svc.FindLocation(r.Context(), r.PathValue("loc"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, d)
}

func (s *Server) handleListSizes(w http.ResponseWriter, r *http.Request) {
	loc, err := s.svc.Catalog().Location(r.PathValue("loc"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	var out []sizeView
	for _, sz := range s.svc.Catalog().SizesAt(loc) {
		if sz.GPUs > 0 && !loc.GPUs.Available {
			continue
		}
		out = append(out, newSizeView(sz))
	}
	writeJSON(w, http.StatusOK, listBody[sizeView]{Value: out})
}

func (s *Server) handleListUsages(w http.ResponseWriter, r *http.Request) {
	usages, err := s.svc.ListUsages(r.Context(), r.PathValue("loc"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, listBody[any]{Value: anySlice(usages)})
}

func anySlice[T any](in []T) []any {
	out := make([]any, len(in))
	for i, v := range in {
		out[i] = v
	}
	return out
}
