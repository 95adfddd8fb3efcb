package asset

import (
	"strings"

	"github.com/shoal-ml/shoal/domain/core"
)

// The image reference grammar of the distribution project
// (github.com/distribution/reference, which Docker and podman use):
//
//	reference       := name [ ":" tag ] [ "@" digest ]
//	name            := [domain '/'] remote-name
//	domain          := host [':' port-number]
//	host            := domain-name | IPv4address | \[ IPv6address \]
//	domain-name     := domain-component ['.' domain-component]*
//	domain-component := /([a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])/
//	remote-name     := path-component ['/' path-component]*
//	path-component  := alpha-numeric [separator alpha-numeric]*
//	alpha-numeric   := /[a-z0-9]+/
//	separator       := /[_.]|__|[-]+/
//	tag             := /[\w][\w.-]{0,127}/
//	digest          := algorithm ":" /[0-9a-fA-F]{32,}/
//
// It is written out here rather than imported because the root package
// links only the standard library.
const (
	imageAlnum     = `[a-z0-9]+`
	imageSeparator = `(?:[._]|__|[-]+)`
	imagePathComp  = imageAlnum + `(?:` + imageSeparator + imageAlnum + `)*`
	imageDomainC   = `(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])`
	imageDomain    = `(?:` + imageDomainC + `(?:\.` + imageDomainC + `)*|\[[a-fA-F0-9:]+\])(?::[0-9]+)?`
	imageTag       = `[\w][\w.-]{0,127}`
	imageDigest    = `[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}`
)

var (
	imageDomainRE = core.LazyRegexp(`^` + imageDomain + `$`)
	imagePathRE   = core.LazyRegexp(`^` + imagePathComp + `$`)
	imageTagRE    = core.LazyRegexp(`^` + imageTag + `$`)
	imageDigestRE = core.LazyRegexp(`^` + imageDigest + `$`)
)

// maxImageNameLength bounds an image's name (domain and path), as the
// distribution grammar does.
const maxImageNameLength = 255

// ValidateImageReference checks s against the image reference grammar
// Docker and podman use (registry.example.com:5000/team/train:3,
// python:3.11, ubuntu@sha256:<hex>). The error names field and the rule
// broken.
func ValidateImageReference(field, s string) error {
	const rule = "an image reference is [registry-host[:port]/]path[:tag][@digest], e.g. mcr.microsoft.com/azureml/openmpi4.1.0-ubuntu20.04:latest"
	if strings.TrimSpace(s) == "" {
		return core.FieldErrorf(field, "is required: %s", rule)
	}
	if strings.ContainsFunc(s, func(r rune) bool { return r <= ' ' || r > '~' }) {
		return core.FieldErrorf(field, "%q must not contain spaces, control or non-ASCII characters; %s", core.Short(s), rule)
	}
	name, digest, hasDigest := strings.Cut(s, "@")
	if hasDigest && !imageDigestRE.MatchString(digest) {
		return core.FieldErrorf(field, "%q has an invalid digest %q: a digest is algorithm:hex with at least 32 hex digits, e.g. sha256:<64 hex digits>", core.Short(s), core.Short(digest))
	}
	// A tag follows the last ':' after the last '/' (a ':' before it is a
	// registry's port).
	tag := ""
	if i := strings.LastIndex(name, ":"); i > strings.LastIndex(name, "/") {
		name, tag = name[:i], name[i+1:]
		if !imageTagRE.MatchString(tag) {
			return core.FieldErrorf(field, "%q has an invalid tag %q: a tag is 1 to 128 letters, digits, '_', '.' and '-', not starting with '.' or '-'", core.Short(s), core.Short(tag))
		}
	}
	if len(name) > maxImageNameLength {
		return core.FieldErrorf(field, "%q is too long: an image name (registry and path) is at most %d characters", core.Short(s), maxImageNameLength)
	}
	path := name
	// The first component is a registry host when it looks like one: it
	// has a '.' or a ':' or is localhost (as Docker decides).
	if first, rest, ok := strings.Cut(name, "/"); ok && (strings.ContainsAny(first, ".:[") || first == "localhost") {
		if !imageDomainRE.MatchString(first) {
			return core.FieldErrorf(field, "%q has an invalid registry %q: a registry is a host name or IP address with an optional :port", core.Short(s), core.Short(first))
		}
		path = rest
	}
	for _, comp := range strings.Split(path, "/") {
		if !imagePathRE.MatchString(comp) {
			why := "lower-case letters and digits, separated by '.', '_', '__' or '-'"
			if strings.ToLower(comp) != comp {
				why = "lower-case only: " + why
			}
			return core.FieldErrorf(field, "%q has an invalid path component %q: each is %s", core.Short(s), core.Short(comp), why)
		}
	}
	return nil
}
