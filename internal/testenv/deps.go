package testenv

// The dependencies several packages' tests share, each named once with
// where it comes from; a dependency of one package's tests is named by
// its helper there (internal/testpg, internal/testslurm,
// internal/testhosts).

// Jupyter is Debian's Jupyter Notebook server and python3-ipykernel's
// kernel spec: the notebook of compute instances. It returns the
// server's path.
func Jupyter(t T) string {
	t.Helper()
	const bin = "/usr/bin/jupyter-notebook"
	Files(t, "Debian's Jupyter Notebook", "apt-get install jupyter-notebook python3-ipykernel",
		bin, "/usr/share/jupyter/kernels/python3/kernel.json")
	return bin
}

// OpenSSH is a program of the OpenSSH client (ssh, ssh-keygen, scp,
// sftp), as users reach instances with it; it returns its path.
func OpenSSH(t T, name string) string {
	t.Helper()
	return Command(t, name, "the OpenSSH client's "+name, "apt-get install openssh-client")
}

// Python3 is Debian's python3 (custom applications, reference scripts):
// by path, since the python3 on the PATH may be another one.
func Python3(t T) string {
	t.Helper()
	const bin = "/usr/bin/python3"
	Files(t, "Debian's python3", "apt-get install python3", bin)
	return bin
}

// Chromium is Debian's Chromium, which the studio's browser tests drive
// headless through chromedp; it returns its path.
func Chromium(t T) string {
	t.Helper()
	const bin = "/usr/bin/chromium"
	Files(t, "Debian's Chromium (the studio's browser tests)", "apt-get install chromium", bin)
	return bin
}

// AzureML is Azure's own Python SDK (azure-ai-ml, azure-identity) from
// Debian's python3-azure, run against Shoal.
func AzureML(t T) {
	t.Helper()
	Files(t, "Azure's Python SDK (azure-ai-ml)", "apt-get install python3-azure",
		"/usr/lib/python3/dist-packages/azure/ai/ml")
}

// Containers are what the container tests need, all from Debian: podman
// with runc (crun refuses to start containers under hybrid cgroups),
// mmdebstrap to build the base image, and docker-registry for a private
// registry. Root too: podman runs rootful, as the agent does.
func Containers(t T) {
	t.Helper()
	Root(t, "runs podman rootful, as the agent does")
	const hint = "apt-get install podman runc mmdebstrap docker-registry"
	Command(t, "podman", "podman (containers)", hint)
	Command(t, "runc", "runc (podman's OCI runtime here: crun refuses hybrid cgroups)", hint)
	Command(t, "mmdebstrap", "mmdebstrap (builds the test base image from Debian packages)", hint)
	Command(t, "docker-registry", "Debian's docker-registry (a private registry)", hint)
}

// Prometheus is Debian's Prometheus server and its promtool, which check
// and test docs/operations/alerts.yml and scrape a real server; it
// returns their paths.
func Prometheus(t T) (server, promtool string) {
	t.Helper()
	server, promtool = "/usr/bin/prometheus", "/usr/bin/promtool"
	Files(t, "Debian's Prometheus and promtool (the shipped alert rules)", "apt-get install prometheus", server, promtool)
	return server, promtool
}
