// Package shoal is the domain of Shoal, self-hosted managed ML compute: the
// resources a user manages (workspaces, compute clusters, sizes, locations,
// quotas, events), their validation rules, the error type every layer speaks,
// and the interfaces that adapters (stores, HTTP, providers) implement.
//
// It imports only the standard library; adapters live in sub-packages and
// wiring lives in cmd/shoal and app. See ARCHITECTURE.md.
package core
