// Package idle decides when a compute instance is idle and must shut down,
// by Azure Machine Learning's rules plus a few of Shoal's, and reads the
// Jupyter signals the decision needs.
//
// # What counts as activity
//
// Azure calls an instance inactive when it has no active Jupyter kernel or
// terminal session, no running job, no VS Code or SSH connection and no
// running custom application. Shoal adds traffic through the server's
// application proxy and an optional CPU floor (idle_cpu_percent_below).
// Evaluate sorts these signals in two kinds:
//
//   - Ongoing activity keeps the instance active for as long as it lasts,
//     so the idle clock is at 0 (IdleSince = now): a running job, an open
//     SSH session (a VS Code remote connection is one), a running custom
//     application, a Jupyter kernel whose execution_state is "busy", and
//     CPU use at or above the floor when the floor is set and the CPU use
//     is known.
//   - Past activity only moves the idle clock's start forward: a kernel's
//     or terminal's last_activity, the last SSH traffic and the last
//     request through the application proxy. The instance is idle since
//     the latest of them (or since the previous IdleSince, if later).
//
// A Jupyter kernel that is open but quiet does not count by its mere
// existence, nor by its connections: as with Jupyter's own culler
// (MappingKernelManager.cull_idle_timeout with cull_connected=True,
// cull_busy=False), only its last_activity and a busy state count. A
// forgotten browser tab keeps a connection open for days; counting it
// would keep the instance up for good. For the same reason a kernel stuck
// in "starting" (Jupyter Notebook 6 reports that until a client connects)
// is not ongoing activity. Terminals follow Jupyter's terminal culling:
// their last_activity (input or output) counts, an open terminal does not.
//
// CPU use that is unknown (no report yet) never counts as activity: an
// agent that cannot measure must not keep an instance up forever.
//
// Timestamps later than now (an agent's clock ahead of the server's) are
// taken as now, so a skewed clock cannot push the idle clock into the
// future.
//
// # Shutdown, warning, postponement
//
// With idle_time_before_shutdown_minutes M (Policy.Minutes, 0 = off) the
// instance shuts down at ShutdownAt = max(IdleSince + M, PostponedUntil).
// The warning is given once, WarnBefore ahead of that moment; a warning
// counts only for the deadline it announced, so when activity, a
// postponement or a longer setting moves the deadline, the next one is
// announced again. A pass that finds the deadline already passed (the
// server was down) shuts down without a warning it could no longer honour.
// With M = 0 the idle clock is still kept, for `show`, but nothing is
// decided.
//
// Everything but the Jupyter client is pure: the time comes in as an
// argument, so every rule is tested on a fake clock.
package idle
