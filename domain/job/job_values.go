package job

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job/jobio"
)

// The values of a job spec shared by decoding (job_decode.go),
// normalisation (job_validate.go) and components: literal inputs and
// their text live with the inputs in package jobio; these forward to
// them so that the kinds' decoders keep their names.

// errOnlyCommandJobs refuses a type other than command where a command
// job is decoded: a pipeline's or sweep's document belongs to their own
// decoders, any other type is one Shoal does not run.
func errOnlyCommandJobs(t string) error {
	switch strings.ToLower(strings.TrimSpace(t)) {
	case JobTypePipeline, JobTypeSweep:
		return core.FieldErrorf("type", "%q jobs are not supported: only command jobs are supported (type: command)", t)
	}
	return UnsupportedJobType("type", t)
}

// JobUnmarshalAny decodes raw keeping numbers as json.Number.
func JobUnmarshalAny(raw json.RawMessage, v *any) error { return jobio.UnmarshalAny(raw, v) }

// JobKeyPath joins a field and a user-chosen key, shortening a long key.
func JobKeyPath(field, key string) string { return jobio.KeyPath(field, key) }

// ConvertJobLiteral turns the value of a typed literal input ({type:
// integer, default: 5}) into the literal stored in JobInput.Value, or
// checks an untyped literal when typ is "" (jobio.ConvertLiteral).
func ConvertJobLiteral(field, typ string, v any) (any, error) {
	return jobio.ConvertLiteral(field, typ, v)
}

// FormatInputValue returns the text a literal input stands for in a
// command (jobio.FormatValue).
func FormatInputValue(v any) string { return jobio.FormatValue(v) }

func shortValue(v any) string {
	if s, ok := v.(string); ok {
		if len(s) > 40 {
			s = s[:40] + "..."
		}
		return strconv.Quote(s)
	}
	s := fmt.Sprint(v)
	if len(s) > 40 {
		s = s[:40] + "..."
	}
	return s
}
