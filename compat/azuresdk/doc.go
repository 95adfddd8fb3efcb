// Package azuresdk tests Shoal against Azure's own Go SDK
// (armmachinelearning v4.0.0 with azcore), pointed at a real `shoal
// server --tls` through cloud.Configuration. It is a module of its own so
// that the SDK stays out of Shoal's dependencies; scripts/test runs it.
package azuresdk
