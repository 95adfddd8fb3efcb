package compute

import (
	"fmt"
	"slices"
	"strings"

	"github.com/shoal-ml/shoal/domain/asset"
	"github.com/shoal-ml/shoal/domain/core"
)

// MaxPrepullImages bounds a cluster's prepull_images: each is pulled by
// every node that joins before it takes work, so a long list delays
// every scale-up.
const MaxPrepullImages = 8

// PrepullOrder is what a joining node pulls before it takes work (its
// cluster's prepull_images, environment references resolved to images),
// with the logins of the registries those images come from.
type PrepullOrder struct {
	Images     []string             `json:"images"`
	Registries []RegistryCredential `json:"registries,omitempty"`
}

// PrepullReport is the agent's word that its pre-pulls ended: the node
// takes work from then on, whatever failed (a job whose image failed to
// pull fails its own pull with the registry's words).
type PrepullReport struct {
	Pulled []string         `json:"pulled,omitempty"`
	Failed []PrepullFailure `json:"failed,omitempty"`
	// Seconds is how long the pulls took together.
	Seconds float64 `json:"seconds,omitempty"`
}

// PrepullFailure is one image the node could not pull, in the engine's
// or the registry's words.
type PrepullFailure struct {
	Image string `json:"image"`
	Error string `json:"error"`
}

// isEnvironmentRef reports whether a prepull entry names an environment
// (azureml:…, or a workspace's ARM resource ID) rather than an image.
func isEnvironmentRef(s string) bool {
	l := strings.ToLower(strings.TrimSpace(s))
	return strings.HasPrefix(l, "azureml:") || strings.HasPrefix(l, "/subscriptions/")
}

// ValidatePrepullImages checks a cluster's prepull_images (a Shoal
// extension: Azure has none): at most MaxPrepullImages entries, each an
// image reference or an environment reference, none twice.
func ValidatePrepullImages(list []string) error {
	if len(list) > MaxPrepullImages {
		return core.FieldErrorf("prepull_images", "has %d entries; at most %d (each is pulled by every node that joins, before it takes work)", len(list), MaxPrepullImages)
	}
	seen := map[string]bool{}
	for i, s := range list {
		field := fmt.Sprintf("prepull_images[%d]", i)
		if isEnvironmentRef(s) {
			if _, err := asset.ParseEnvironmentRef(s); err != nil {
				return core.FieldErrorf(field, "%s", strings.TrimPrefix(core.ErrorMessage(err), "environment: "))
			}
		} else if err := asset.ValidateImageReference(field, s); err != nil {
			return err
		}
		if seen[s] {
			return core.FieldErrorf(field, "%q is listed twice", core.Short(s))
		}
		seen[s] = true
	}
	return nil
}

// ResolvePrepullImages turns a cluster's prepull_images into the images
// a node pulls: an image as written, an environment reference through
// the workspace's registered environments and curated (as a job's
// environment resolves), an environment with a conda_file by its base
// image. An environment built from a context (the node builds it when a
// job needs it) or one that names nothing is an error naming its entry.
func ResolvePrepullImages(tx asset.AssetReader, workspace string, list []string, curated asset.CuratedEnvironments) ([]string, error) {
	var out []string
	for i, s := range list {
		field := fmt.Sprintf("prepull_images[%d]", i)
		if !isEnvironmentRef(s) {
			out = append(out, s)
			continue
		}
		env, err := asset.ResolveJobEnvironment(tx, workspace, s, curated)
		if err != nil {
			if e, ok := err.(*core.Error); ok {
				return nil, &core.Error{Code: e.Code, Field: field, Message: field + ": " + strings.TrimPrefix(e.Message, "environment: ")}
			}
			return nil, err
		}
		if env.Image == "" {
			return nil, core.FieldErrorf(field, "%q (%s) is built from a context, which a node builds when a job needs it; prepull_images names images (or environments with an image)", core.Short(s), env.Source)
		}
		if !slices.Contains(out, env.Image) {
			out = append(out, env.Image)
		}
	}
	return out, nil
}

// RegistryCredential is a registry's login, handed to a node with a task
// only for the pull of that task's image: never stored on the node,
// never logged.
type RegistryCredential struct {
	// Registry is the registry's host[:port], as an image reference
	// names it ("localhost:5000", "myregistry.azurecr.io").
	Registry string `json:"registry"`
	Username string `json:"username"`
	Password string `json:"password"`
	// Insecure: the registry is reached over plain HTTP (listed so by
	// the operator; never assumed).
	Insecure bool `json:"insecure,omitempty"`
}

// String hides the password, so that a credential printed by mistake
// leaks nothing.
func (c RegistryCredential) String() string {
	return "registry " + c.Registry + " as " + c.Username
}

// GoString hides the password from %#v as well.
func (c RegistryCredential) GoString() string { return c.String() }
