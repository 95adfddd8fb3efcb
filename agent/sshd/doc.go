// Package sshd is the SSH server a compute instance's agent embeds, so
// that users reach their instance with the real OpenSSH client as they
// would an Azure ML compute instance: `ssh` with or without a terminal,
// `scp` (SFTP or legacy), `sftp`, local port forwarding (`ssh -L`, `ssh
// -D`, which VS Code Remote-SSH needs) and remote forwarding (`ssh -R`).
//
// Only public-key authentication is offered, and only for one login
// (azureuser, Azure's admin_username for instances). The authorized keys
// are asked for at each login, so a key set or changed while the server
// runs takes effect at the next login.
//
// Sessions run as the agent's own OS user, in the instance's home
// directory: on Shoal the agent process is the instance's machine, so
// there is no user switching (and no root needed). The login name is
// only what the client must present; USER and LOGNAME carry it too.
//
// Every session program (shell, command) starts in a new OS session
// (setsid), hence in its own process group, so that the server can find
// all of its processes:
//   - when the program exits by itself, what it deliberately left running
//     (`nohup job > log &`) is left alone, as on a machine;
//   - when the channel closes while the program runs (the client went
//     away), the session is hung up as a terminal would be: SIGHUP to
//     every process of the session, and a moment later SIGKILL to those
//     that do not ignore SIGHUP (`nohup` ones survive, as on a machine);
//   - Server.Close (the instance stops) kills every process of every
//     session the server started, running or finished.
//
// Processes that left the session themselves (setsid, daemons such as a
// tmux server) are outside all this, as they would be with OpenSSH.
package sshd
