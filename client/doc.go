// Package client is Shoal's Go client: Client for users' programs and the
// CLI, AgentClient for a node's agent. It holds the native API's wire
// types and the one table between error codes and HTTP statuses, which
// the server in api/ shares, and links only the root package, the
// standard library and tlsconf (deps_link_test.go at the root keeps it
// so), so that the agent and the CLI link it without linking the server.
package client
