// Package arm speaks Azure Resource Manager's dialect of the
// Microsoft.MachineLearningServices API over Shoal's services, so that
// Azure's own SDKs work against a Shoal server: the paths under
// /subscriptions/{sub}/resourceGroups/{rg}/providers/Microsoft.MachineLearningServices,
// the camelCase envelope with the type-specific part in
// properties.properties, ISO 8601 durations, Azure's enum spellings and
// error codes. It translates only: every rule is the services' own.
// Subscription ids and resource groups are accepted and echoed in ids,
// never required to exist.
package arm
