// Package catalog is where capacity is: locations (a provider's pool, its
// quota, GPUs and container mode, a kubernetes location's instance
// types), VM sizes (Azure's built-in table and those a config adds),
// hosts and their container runtimes, and the Catalog that resolves a
// name or an Azure region alias to them and says why a size cannot be
// used somewhere.
//
// It is a kind below domain/compute: a compute names its location and
// size, and the catalog knows nothing of computes (the compute types a
// size supports are strings here; domain/compute's tests hold them to
// compute.ComputeType*).
package catalog
