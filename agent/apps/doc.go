// Package apps runs what a compute instance serves besides SSH: its setup
// scripts (RunScript), and its applications (Supervisor) — the Jupyter
// Notebook server, the built-in application when the host has Debian's
// jupyter-notebook (FindJupyter, JupyterApp), and custom applications,
// which the local provider runs as commands since it cannot run images.
//
// Every process runs as the agent's OS user (the instance's user is the
// machine's user: there is no switch of identity), with the instance's
// home as working directory, in a process group of its own, and with the
// environment the caller gives. That environment carries SHOAL_NODE_ID and
// SHOAL_NODE_DIR (see internal/procmark), which is how the host provider
// finds and stops an instance's processes even if the agent is gone; this
// package only passes them through.
//
// Each run of a script or an application also carries SHOAL_PROCESS_TREE,
// a value unique to that run. Processes that leave the run's process group
// (Jupyter starts every kernel and terminal in a session of its own) keep
// it, so that a timeout or StopAll finds and ends them too; nothing else
// depends on it. Linux only: it reads /proc.
package apps
