package jobio

import (
	"github.com/shoal-ml/shoal/domain/asset"
	"github.com/shoal-ml/shoal/domain/core"
)

// MaxNameLength bounds an input's or output's name.
const MaxNameLength = 255

// IONameRE is an input's or output's name: letters, digits and _,
// starting with a letter or _ (it is written in ${{inputs.<name>}}).
var IONameRE = core.LazyRegexp(`^[A-Za-z_][A-Za-z0-9_]*$`)

// ValidateIOName checks an input's or output's name; field is "inputs"
// or "outputs" (with any prefix).
func ValidateIOName(field, name string) error {
	if len(name) > MaxNameLength || !IONameRE.MatchString(name) {
		return core.FieldErrorf(field, "name %q must be 1 to %d letters, digits and '_', starting with a letter or '_'", core.Short(name), MaxNameLength)
	}
	return nil
}

// checkAssetName checks the name and version an output registers under,
// by the rules of a registered asset's (environments', components',
// data assets' and models' alike).
func checkAssetName(field string, o *Output) error {
	if o.Name != "" {
		if len(o.Name) > asset.MaxEnvironmentNameLength || !asset.EnvironmentNameRE.MatchString(o.Name) {
			return core.FieldErrorf(field+".name", "%q must be 1 to %d letters, digits, '-', '_' and '.', starting with a letter or digit: the name of the data asset or model the output is registered as", core.Short(o.Name), asset.MaxEnvironmentNameLength)
		}
	}
	if o.Version != "" {
		if o.Name == "" {
			return core.FieldErrorf(field+".version", "needs name: an output is registered as name:version")
		}
		if len(o.Version) > asset.MaxEnvironmentVersionLength || !asset.EnvironmentVersionRE.MatchString(o.Version) {
			return core.FieldErrorf(field+".version", "%q must be 1 to %d letters, digits, '-', '_' and '.', starting with a letter or digit (e.g. 1, 2, 1.0.3)", core.Short(o.Version), asset.MaxEnvironmentVersionLength)
		}
	}
	return nil
}
