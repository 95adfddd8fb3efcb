package arm

import (
	"slices"
	"strings"

	"github.com/shoal-ml/shoal/domain/core"
)

// apiVersions are the published api-versions of Microsoft.MachineLearningServices'
// Resource Manager specification from 2021 on, stable and preview, as Azure's
// REST API specifications list them. The compute, usage, size and quota shapes
// Shoal serves are the same across them (the Go SDK v4.0.0 sends 2024-04-01,
// azure-ai-ml 1.4 sends 2022-10-01-preview and 2022-05-01, az ml 2.x sends
// 2023-02-01-preview and later previews). A version not on the list is refused,
// as Azure refuses it, rather than answered in shapes it never had.
var apiVersions = []string{
	"2021-01-01", "2021-03-01-preview", "2021-04-01", "2021-07-01",
	"2022-01-01-preview", "2022-02-01-preview", "2022-05-01", "2022-06-01-preview",
	"2022-10-01", "2022-10-01-preview", "2022-12-01-preview",
	"2023-02-01-preview", "2023-04-01", "2023-04-01-preview", "2023-06-01-preview",
	"2023-08-01-preview", "2023-10-01",
	"2024-01-01-preview", "2024-04-01", "2024-04-01-preview", "2024-07-01-preview",
	"2024-10-01", "2024-10-01-preview",
	"2025-01-01-preview", "2025-04-01", "2025-04-01-preview", "2025-06-01",
	"2025-07-01-preview", "2025-09-01", "2025-10-01-preview", "2025-12-01",
	"2026-01-15-preview", "2026-03-01", "2026-03-15-preview", "2026-05-01",
}

// APIVersions returns the api-versions the facade accepts, oldest first.
func APIVersions() []string { return slices.Clone(apiVersions) }

// CheckAPIVersion accepts the published api-versions of the stable and
// preview specifications from 2021 on and refuses anything else with
// Azure's InvalidApiVersionParameter.
func CheckAPIVersion(v string) error {
	if slices.Contains(apiVersions, v) {
		return nil
	}
	msg := "The api-version '" + v + "' is invalid. The supported versions are '" + strings.Join(apiVersions, ",") + "'."
	if v == "" {
		msg = "The api-version query parameter (?api-version=) is required for all requests."
	}
	return &core.Error{Code: codeInvalidAPIVersion, Field: "api-version", Message: msg}
}

// codeInvalidAPIVersion marks an api-version error (Azure's code).
const codeInvalidAPIVersion = "InvalidApiVersionParameter"
