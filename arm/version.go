package arm

import (
	"regexp"
	"strconv"

	"github.com/shoal-ml/shoal"
)

var apiVersionRE = regexp.MustCompile(`^(\d{4})-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])(-preview)?$`)

// CheckAPIVersion accepts the api-versions of the stable and preview
// specifications from 2021 on (the Go SDK sends 2024-04-01, azure-ai-ml
// 1.4 sends 2022-10-01-preview) and refuses anything else as Azure does.
func CheckAPIVersion(v string) error {
	m := apiVersionRE.FindStringSubmatch(v)
	if m != nil {
		if year, _ := strconv.Atoi(m[1]); year >= 2021 {
			return nil
		}
	}
	msg := "The api-version '" + v + "' is invalid. The supported versions are the Microsoft.MachineLearningServices versions from 2021-01-01 on, e.g. '2024-04-01' or '2022-10-01-preview'."
	if v == "" {
		msg = "The api-version query parameter (?api-version=) is required for all requests."
	}
	return &shoal.Error{Code: codeInvalidAPIVersion, Field: "api-version", Message: msg}
}

// codeInvalidAPIVersion marks an api-version error (Azure's code).
const codeInvalidAPIVersion = "InvalidApiVersionParameter"
