package pipelinejob

import (
	"strings"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job"
)

// maxIgnoredSettingBytes bounds the value of a setting Shoal keeps
// without reading it: a document is not a place to store data.
const maxIgnoredSettingBytes = 4096

// maxIgnoredSettings bounds how many unknown settings one pipeline keeps.
const maxIgnoredSettings = 32

// maxSettingNameLength bounds the name of a setting kept and ignored.
const maxSettingNameLength = 128

// IgnoredSettingsWarning says which of a pipeline's settings Shoal kept
// and ignored ("" when none): Azure accepts any key under settings
// (a misspelt default_datestore as well), so Shoal accepts them too, but
// never silently.
func IgnoredSettingsWarning(spec *job.PipelineSpec) string {
	if spec == nil || len(spec.Settings.Ignored) == 0 {
		return ""
	}
	names := core.SortedKeys(spec.Settings.Ignored)
	for i, n := range names {
		names[i] = "settings." + n
	}
	what := "is not a setting"
	if len(names) > 1 {
		what = "are not settings"
	}
	return strings.Join(names, ", ") + " " + what + " Shoal knows (known: " + strings.Join(knownSettings, ", ") +
		"): kept as written and ignored" + suggestSettings(spec)
}

// suggestSettings names the known setting a misspelt one is closest to.
func suggestSettings(spec *job.PipelineSpec) string {
	var out []string
	for _, n := range core.SortedKeys(spec.Settings.Ignored) {
		if s := core.DidYouMean(n, knownSettings); s != "" {
			out = append(out, "settings."+n+s)
		}
	}
	if len(out) == 0 {
		return ""
	}
	return "; " + strings.Join(out, "; ")
}
