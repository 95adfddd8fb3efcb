// Package container is a node's container engine as the agent needs it:
// what the engine is (Info), images (Pull, Build, Inspect, Images,
// RemoveImage), and containers run from a Spec (Run, Wait, Stop, Remove,
// List by label), behind one Runtime interface.
//
// One implementation, Engine, serves both Docker and podman: it speaks the
// Docker Engine API through Docker's official Go client, to Docker's
// socket or to the socket of a `podman system service` (StartPodman
// starts a private one when only podman is installed). docs/concepts/
// containers.md says why the API and not the CLIs.
//
// Errors a job should fail with rather than count as the node's loss are
// typed (ErrNotFound, ErrUnauthorized, ErrNoSpace, ErrInvalid) and carry
// the registry's or the engine's own words; ErrRuntimeMissing says the
// node has no usable engine at all.
package container
