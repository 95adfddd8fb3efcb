package testk8s

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path"
	"runtime"
	"sort"
	"strings"
)

// The images every cluster has, imported into containerd before the
// first pod: pods name them with imagePullPolicy Never, since the test
// cluster reaches no registry.
const (
	// PauseImage is the pods' sandbox image: the static pause program.
	PauseImage = "shoal.test/pause:1"
	// BusyboxImage is Debian's static busybox, with every applet linked
	// into /bin (sh, echo, cat, sleep, wget, ...).
	BusyboxImage = "shoal.test/busybox:1"
)

// busyboxPath is Debian's busybox-static.
const busyboxPath = "/bin/busybox"

// ImageFile is one entry of an image's single layer: a regular file
// (Data), a directory (Dir) or a symbolic link (Link).
type ImageFile struct {
	// Path is absolute inside the image ("/bin/sh").
	Path string
	Mode int64
	Data []byte
	Dir  bool
	Link string
}

// ImageConfig is the part of an image's configuration tests set.
type ImageConfig struct {
	Entrypoint, Cmd, Env []string
	WorkingDir           string
	User                 string
}

// WriteImage writes an image of one layer holding files, named ref, as a
// `docker save` archive at dest: the format `ctr images import` (and
// Cluster.ImportImage) loads. No registry or container engine is needed.
func WriteImage(dest, ref string, cfg ImageConfig, files []ImageFile) error {
	var layer bytes.Buffer
	tw := tar.NewWriter(&layer)
	sort.Slice(files, func(i, j int) bool { return files[i].Path < files[j].Path })
	for _, f := range files {
		name := strings.TrimPrefix(path.Clean(f.Path), "/")
		if name == "" || name == "." || !strings.HasPrefix(f.Path, "/") {
			return fmt.Errorf("image file path %q: must be absolute and not the root", f.Path)
		}
		h := &tar.Header{Name: name, Mode: f.Mode, Uname: "root", Gname: "root", Format: tar.FormatPAX}
		switch {
		case f.Dir:
			h.Typeflag, h.Name = tar.TypeDir, name+"/"
			if h.Mode == 0 {
				h.Mode = 0o755
			}
		case f.Link != "":
			h.Typeflag, h.Linkname, h.Mode = tar.TypeSymlink, f.Link, 0o777
		default:
			h.Typeflag, h.Size = tar.TypeReg, int64(len(f.Data))
			if h.Mode == 0 {
				h.Mode = 0o644
			}
		}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		if h.Typeflag == tar.TypeReg {
			if _, err := tw.Write(f.Data); err != nil {
				return err
			}
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	layerSum := sha256.Sum256(layer.Bytes())
	layerID := hex.EncodeToString(layerSum[:])
	env := cfg.Env
	if len(env) == 0 {
		env = []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}
	}
	config, err := json.Marshal(map[string]any{
		"architecture": runtime.GOARCH, "os": "linux",
		"config": map[string]any{"Entrypoint": cfg.Entrypoint, "Cmd": cfg.Cmd, "Env": env, "WorkingDir": cfg.WorkingDir, "User": cfg.User},
		"rootfs": map[string]any{"type": "layers", "diff_ids": []string{"sha256:" + layerID}},
	})
	if err != nil {
		return err
	}
	configSum := sha256.Sum256(config)
	configName := hex.EncodeToString(configSum[:]) + ".json"
	manifest, err := json.Marshal([]map[string]any{{
		"Config": configName, "RepoTags": []string{ref}, "Layers": []string{layerID + "/layer.tar"},
	}})
	if err != nil {
		return err
	}
	out, err := os.Create(dest)
	if err != nil {
		return err
	}
	defer out.Close()
	aw := tar.NewWriter(out)
	for _, e := range []struct {
		name string
		data []byte
	}{{configName, config}, {layerID + "/layer.tar", layer.Bytes()}, {"manifest.json", manifest}} {
		if err := aw.WriteHeader(&tar.Header{Name: e.name, Mode: 0o644, Size: int64(len(e.data)), Typeflag: tar.TypeReg}); err != nil {
			return err
		}
		if _, err := aw.Write(e.data); err != nil {
			return err
		}
	}
	if err := aw.Close(); err != nil {
		return err
	}
	return out.Close()
}

// pauseImage writes the pause image's archive.
func pauseImage(dest string, bin Bin) error {
	data, err := os.ReadFile(bin.Path("pause"))
	if err != nil {
		return err
	}
	return WriteImage(dest, PauseImage, ImageConfig{Entrypoint: []string{"/pause"}},
		[]ImageFile{{Path: "/pause", Mode: 0o755, Data: data}})
}

// busyboxImage writes the busybox image's archive: the static busybox
// with its applets linked into /bin, a /tmp, and passwd and group files
// naming root and nobody (for pods run as a user).
func busyboxImage(dest string) error {
	data, err := os.ReadFile(busyboxPath)
	if err != nil {
		return fmt.Errorf("Debian's busybox-static: %w", err)
	}
	list, err := exec.Command(busyboxPath, "--list").Output()
	if err != nil {
		return fmt.Errorf("%s --list: %w", busyboxPath, err)
	}
	files := []ImageFile{
		{Path: "/bin", Dir: true}, {Path: "/tmp", Dir: true, Mode: 0o1777}, {Path: "/etc", Dir: true},
		{Path: "/bin/busybox", Mode: 0o755, Data: data},
		{Path: "/etc/passwd", Data: []byte("root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/sh\n")},
		{Path: "/etc/group", Data: []byte("root:x:0:\nnogroup:x:65534:\n")},
	}
	for _, applet := range strings.Fields(string(list)) {
		if applet != "busybox" {
			files = append(files, ImageFile{Path: "/bin/" + applet, Link: "busybox"})
		}
	}
	return WriteImage(dest, BusyboxImage, ImageConfig{Cmd: []string{"/bin/sh"}}, files)
}
