package arm

import "github.com/shoal-ml/shoal/arm/armcore"

// Azure's ISO 8601 durations, as armcore reads and writes them for every
// part of the facade.
var (
	parseDuration = armcore.ParseDuration
	formatSeconds = armcore.FormatSeconds
)
