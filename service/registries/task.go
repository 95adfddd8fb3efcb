package registries

import (
	"slices"
	"strings"

	"github.com/shoal-ml/shoal/domain/asset"
	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/internal/sealing"
	"github.com/shoal-ml/shoal/store"
)

// ForTask returns what a task of the workspace needs of its registries:
// the push registry's repository for images built on the node (PushTo,
// "" when the workspace has none) and the logins of the registries images
// come from and of the push registry (see ForImages).
func ForTask(tx store.Tx, key *sealing.Key, workspace string, images ...string) (pushTo string, creds []compute.RegistryCredential, err error) {
	regs, err := tx.ListRegistries(workspace)
	if err != nil {
		return "", nil, err
	}
	for _, r := range regs {
		if r.Push {
			pushTo = r.PushRepository()
			images = append(images, pushTo)
			break
		}
	}
	creds, err = ForImages(tx, key, workspace, images...)
	return pushTo, creds, err
}

// ForImages returns the logins, passwords opened, of the workspace's
// registries that images come from: what a node needs for the pull of a
// task's images and nothing more, so a job never carries the login of a
// registry it does not use. A login whose password cannot be opened (a
// server without the key that sealed it) is left out, and the pull then
// fails with the registry's refusal, which says what is wrong.
func ForImages(tx store.Tx, key *sealing.Key, workspace string, images ...string) ([]compute.RegistryCredential, error) {
	var servers []string
	for _, img := range images {
		if img == "" {
			continue
		}
		if s := asset.ImageRegistry(img); !slices.Contains(servers, s) {
			servers = append(servers, s)
		}
	}
	if len(servers) == 0 {
		return nil, nil
	}
	regs, err := tx.ListRegistries(workspace)
	if err != nil {
		return nil, err
	}
	var out []compute.RegistryCredential
	for _, r := range regs {
		if !slices.Contains(servers, strings.ToLower(r.Server)) {
			continue
		}
		c := compute.RegistryCredential{Registry: r.Server, Username: r.Username, Insecure: r.Insecure}
		if r.SealedPassword != "" {
			if key == nil {
				continue
			}
			pw, err := key.Open(r.SealedPassword, asset.RegistrySealContext(r.Workspace, r.Server))
			if err != nil {
				continue
			}
			c.Password = string(pw)
		}
		out = append(out, c)
	}
	return out, nil
}
