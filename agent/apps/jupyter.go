package apps

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// JupyterAppName is the name of the built-in application.
const JupyterAppName = "jupyter"

// debianJupyter is where Debian's jupyter-notebook package puts the server.
const debianJupyter = "/usr/bin/jupyter-notebook"

// FindJupyter returns the Jupyter Notebook server of this host: Debian's
// /usr/bin/jupyter-notebook (package jupyter-notebook, Notebook 6), else
// jupyter-notebook on the PATH, else the jupyter-notebook beside a
// `jupyter` on the PATH (what `jupyter notebook` would run). JupyterApp
// speaks Notebook 6's options; Notebook 7 is another server and is not
// supported.
func FindJupyter() (path string, ok bool) {
	if st, err := os.Stat(debianJupyter); err == nil && !st.IsDir() {
		return debianJupyter, true
	}
	if p, err := exec.LookPath("jupyter-notebook"); err == nil {
		return p, true
	}
	if p, err := exec.LookPath("jupyter"); err == nil {
		if real, err := filepath.EvalSymlinks(p); err == nil {
			p = real
		}
		nb := filepath.Join(filepath.Dir(p), "jupyter-notebook")
		if st, err := os.Stat(nb); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			return nb, true
		}
	}
	return "", false
}

// JupyterApp is the notebook server of an instance, run from bin (as
// FindJupyter found it). It listens on 127.0.0.1:port only, serves home
// under baseURL (the path of the server's proxy, so that the links it
// makes work through the proxy), and accepts only token, which the proxy
// sends on every request as "Authorization: token <token>": users
// authenticate to Shoal, never to Jupyter, and no password is set.
//
// Jupyter's own cross-site defences stay on. A token-authenticated request
// skips its XSRF and Origin checks by design, and every request from the
// proxy is one, so neither disable_check_xsrf nor allow_origin='*' is
// needed; a request reaching the port without the token is checked (and
// refused). The proxy sends Host 127.0.0.1:port, which passes Jupyter's
// Host check, and X-Forwarded-* headers, which trust_xheaders makes
// Jupyter log and use.
//
// Jupyter's files live where a user expects them in the home (~/.jupyter,
// ~/.local/share/jupyter, ~/.ipython), set explicitly so that the agent's
// own environment cannot move them: a kernel a setup script installs with
// `python3 -m ipykernel install --user` is then found. On a host where the
// agent runs as root, --allow-root says that this is intended.
//
// Port 0 picks a free port now (Jupyter takes its port from its options,
// not from $PORT).
func JupyterApp(bin string, port int, baseURL, token, home string) App {
	if port == 0 {
		port, _ = FreePort() // when none is free, Jupyter could not listen either
	}
	baseURL = "/" + strings.Trim(baseURL, "/") + "/"
	if baseURL == "//" {
		baseURL = "/"
	}
	argv := []string{bin}
	if filepath.Base(bin) == "jupyter" {
		argv = append(argv, "notebook")
	}
	argv = append(argv,
		"--no-browser",
		"--ip=127.0.0.1",
		"--port="+strconv.Itoa(port),
		"--port-retries=0", // fail rather than serve where the proxy does not look
		"--NotebookApp.password=",
		"--NotebookApp.base_url="+baseURL,
		"--NotebookApp.notebook_dir="+home,
		"--NotebookApp.trust_xheaders=True",
	)
	if os.Geteuid() == 0 {
		argv = append(argv, "--allow-root")
	}
	data := filepath.Join(home, ".local", "share", "jupyter")
	return App{
		Name:    JupyterAppName,
		Command: argv,
		Env: []string{
			// The token goes in the environment, which only its own
			// account can read: every user of the host can read a
			// process's arguments.
			"JUPYTER_TOKEN=" + token,
			"HOME=" + home,
			"JUPYTER_CONFIG_DIR=" + filepath.Join(home, ".jupyter"),
			"JUPYTER_DATA_DIR=" + data,
			"JUPYTER_RUNTIME_DIR=" + filepath.Join(data, "runtime"),
			"IPYTHONDIR=" + filepath.Join(home, ".ipython"),
		},
		Port:         port,
		HealthPath:   baseURL + "api/status",
		HealthHeader: "Authorization: token " + token,
	}
}
