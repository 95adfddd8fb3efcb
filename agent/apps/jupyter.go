package apps

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
)

// FindJupyter returns the Jupyter Notebook server on this host: Debian's
// /usr/bin/jupyter-notebook, or jupyter-notebook on the PATH.
func FindJupyter() (string, bool) {
	for _, p := range []string{"/usr/bin/jupyter-notebook"} {
		if _, err := os.Stat(p); err == nil {
			return p, true
		}
	}
	if p, err := exec.LookPath("jupyter-notebook"); err == nil {
		return p, true
	}
	return "", false
}

// JupyterApp is the notebook server of an instance: it listens on
// 127.0.0.1:port under baseURL (the server's proxy path, so that its links
// work through the proxy), serves home, and accepts only token — which
// the server's proxy sends; users authenticate to Shoal, not to Jupyter.
func JupyterApp(bin string, port int, baseURL, token, home string) App {
	state := filepath.Join(home, ".local", "share", "shoal-jupyter")
	app := App{
		Name: "jupyter",
		Command: []string{bin, "--no-browser", "--ip=127.0.0.1", "--port=" + strconv.Itoa(port), "--port-retries=0",
			"--NotebookApp.token=" + token, "--NotebookApp.password=",
			"--NotebookApp.base_url=" + baseURL, "--NotebookApp.notebook_dir=" + home,
			// The proxy is the origin browsers see; Jupyter checks
			// WebSocket origins against its own host otherwise.
			"--NotebookApp.allow_origin=*", "--NotebookApp.trust_xheaders=True"},
		Env: []string{"HOME=" + home, "JUPYTER_RUNTIME_DIR=" + filepath.Join(state, "runtime"),
			"JUPYTER_DATA_DIR=" + filepath.Join(state, "data"), "JUPYTER_CONFIG_DIR=" + filepath.Join(state, "config"),
			"IPYTHONDIR=" + filepath.Join(state, "ipython")},
		Port:         port,
		HealthPath:   baseURL + "api/status",
		HealthHeader: "Authorization: token " + token,
	}
	if os.Geteuid() == 0 {
		// The agent is the machine's user; on a host where it runs as
		// root, Jupyter must be told that this is intended.
		app.Command = append(app.Command, "--allow-root")
	}
	return app
}
