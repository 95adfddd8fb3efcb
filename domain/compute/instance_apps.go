package compute

import (
	"fmt"
	"path"
	"strings"

	"github.com/shoal-ml/shoal/domain/asset"
	"github.com/shoal-ml/shoal/domain/catalog"
	"github.com/shoal-ml/shoal/domain/core"
)

// InstanceHomePath is the instance's home as its user and its
// applications' specs name it: Azure's /home/azureuser. On the host it is
// the instance node's own home folder.
const InstanceHomePath = "/home/" + InstanceAdminUsername

// validateAppImage checks a custom application's image against the
// location: a location that runs no containers refuses it, naming the
// field, rather than running the application some other way.
func validateAppImage(f string, a *CustomApplication, loc *catalog.Location) error {
	a.Image.Reference = strings.TrimSpace(a.Image.Reference)
	if a.Image.Type == "" {
		a.Image.Type = "docker"
	}
	if !strings.EqualFold(a.Image.Type, "docker") {
		return core.FieldErrorf(f+".image.type", "must be docker, got %q", a.Image.Type)
	}
	a.Image.Type = "docker"
	if err := asset.ValidateImageReference(f+".image.reference", a.Image.Reference); err != nil {
		return err
	}
	if loc.ContainerMode() == catalog.ContainersOff {
		return core.FieldErrorf(f+".image", "location %s runs no containers (containers: off in the server config) and cannot run the image %q; give a command that starts the application on the host instead (e.g. command: python3 -m http.server 8080), or use a location that runs containers", loc.Name, a.Image.Reference)
	}
	return nil
}

// validateBindMounts checks a custom application's bind mounts: each
// source lies inside the instance's home (/home/azureuser/...) or under a
// path the location allows (app_bind_mounts_allowed), with no ".." in it;
// each target is an absolute path of the container other than its root.
// Only an application with an image has a container to mount into.
func validateBindMounts(f string, a *CustomApplication, loc *catalog.Location) error {
	for j, m := range a.BindMounts {
		bf := fmt.Sprintf("%s.bind_mounts[%d]", f, j)
		if m == nil {
			return core.FieldErrorf(bf, "needs a source and a target path")
		}
		if a.Image == nil {
			return core.FieldErrorf(bf, "needs an application with an image: an application that runs as a command on the host has no container to mount into (its command sees the instance's home as it is)")
		}
		if err := checkMountPath(m.Source); err != nil {
			return core.FieldErrorf(bf+".source", "%q %v", m.Source, err)
		}
		if !AppBindMountAllowed(path.Clean(m.Source), loc.AppBindMountsAllowed) {
			allowed := "none"
			if len(loc.AppBindMountsAllowed) > 0 {
				allowed = strings.Join(loc.AppBindMountsAllowed, ", ")
			}
			return core.FieldErrorf(bf+".source", "%q is outside the instance's home (%s/...) and outside the paths location %s allows (app_bind_mounts_allowed: %s): an application reaches only the instance's own files", m.Source, InstanceHomePath, loc.Name, allowed)
		}
		m.Source = path.Clean(m.Source)
		if err := checkMountPath(m.Target); err != nil {
			return core.FieldErrorf(bf+".target", "%q %v", m.Target, err)
		}
		m.Target = path.Clean(m.Target)
		if m.Target == "/" {
			return core.FieldErrorf(bf+".target", "must not be the container's root")
		}
	}
	return nil
}

// checkMountPath refuses a path that is not absolute or that climbs with
// "..": what a mount names must be what it reaches.
func checkMountPath(p string) error {
	if !path.IsAbs(p) {
		return fmt.Errorf("must be an absolute path")
	}
	for _, e := range strings.Split(p, "/") {
		if e == ".." {
			return fmt.Errorf("must not contain '..'")
		}
	}
	if strings.ContainsRune(p, 0) || strings.Contains(p, ":") || strings.Contains(p, ",") {
		// The engine's mount syntax gives ':' and ',' meanings of their
		// own.
		return fmt.Errorf("must not contain ':', ',' or NUL")
	}
	return nil
}

// AppBindMountAllowed tells whether a clean absolute source path lies
// inside the instance's home or under one of allowed.
func AppBindMountAllowed(src string, allowed []string) bool {
	if within(src, InstanceHomePath) {
		return true
	}
	for _, a := range allowed {
		if within(src, path.Clean(a)) {
			return true
		}
	}
	return false
}

// within tells whether p is dir or below it (both clean).
func within(p, dir string) bool {
	return p == dir || dir == "/" || strings.HasPrefix(p, dir+"/")
}
