package armcompute

import (
	"encoding/json"
	"regexp"
	"strconv"
	"strings"

	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/core"
)

// SetupScripts is the REST shape of an instance's setup scripts:
// {"scripts": {"creationScript": {...}, "startupScript": {...}}}.
type SetupScripts struct {
	Scripts *struct {
		CreationScript *ScriptReference `json:"creationScript,omitempty"`
		StartupScript  *ScriptReference `json:"startupScript,omitempty"`
	} `json:"scripts,omitempty"`
}

// ScriptReference is one setup script. azure-ai-ml sends a script's path
// as scriptData (scriptSource "workspaceStorage") and a command as
// scriptArguments, and the timeout as "<minutes>m"; "inline" scripts carry
// the command in scriptData.
type ScriptReference struct {
	ScriptSource    string `json:"scriptSource,omitempty"`
	ScriptData      string `json:"scriptData,omitempty"`
	ScriptArguments string `json:"scriptArguments,omitempty"`
	Timeout         string `json:"timeout,omitempty"`
}

// timeoutRE reads a script timeout: "5m", "PT5M" or a bare number of minutes.
var timeoutRE = regexp.MustCompile(`^(?i)(?:PT)?(\d+)M?$`)

// setupScriptsFrom reads the REST setup scripts into Shoal's; the rules
// (a path or a command, 1 to 1440 minutes) are checked with the rest of
// the spec, by the same validation as YAML's.
func setupScriptsFrom(raw json.RawMessage) (*compute.SetupScripts, error) {
	var in SetupScripts
	if err := json.Unmarshal(raw, &in); err != nil {
		return nil, core.FieldErrorf("properties.properties.setupScripts", "%v", err)
	}
	if in.Scripts == nil {
		return nil, nil
	}
	out := &compute.SetupScripts{}
	for _, x := range []struct {
		field string
		in    *ScriptReference
		out   **compute.SetupScript
	}{
		{"properties.properties.setupScripts.scripts.creationScript", in.Scripts.CreationScript, &out.CreationScript},
		{"properties.properties.setupScripts.scripts.startupScript", in.Scripts.StartupScript, &out.StartupScript},
	} {
		r := x.in
		if r == nil {
			continue
		}
		sc := &compute.SetupScript{}
		switch strings.ToLower(r.ScriptSource) {
		case "inline":
			sc.Command = strings.TrimSpace(strings.TrimSpace(r.ScriptData) + " " + r.ScriptArguments)
		case "workspacestorage", "":
			sc.Path, sc.Command = r.ScriptData, r.ScriptArguments
		default:
			return nil, core.FieldErrorf(x.field+".scriptSource", "%q is not workspaceStorage or inline", r.ScriptSource)
		}
		// azure-ai-ml sends "Nonem" when no timeout was given.
		if t := strings.TrimSpace(r.Timeout); t != "" && !strings.EqualFold(t, "Nonem") {
			m := timeoutRE.FindStringSubmatch(t)
			if m == nil {
				return nil, core.FieldErrorf(x.field+".timeout", "%q is not a number of minutes such as 5m", r.Timeout)
			}
			n, err := strconv.Atoi(m[1])
			if err != nil {
				return nil, core.FieldErrorf(x.field+".timeout", "%q is not a number of minutes such as 5m", r.Timeout)
			}
			sc.TimeoutMinutes = &n
		}
		*x.out = sc
	}
	return out, nil
}

// setupScriptsTo writes Shoal's setup scripts in the REST shape, as
// azure-ai-ml reads them back.
func setupScriptsTo(s *compute.SetupScripts) json.RawMessage {
	if s == nil || (s.CreationScript == nil && s.StartupScript == nil) {
		return nil
	}
	ref := func(sc *compute.SetupScript) *ScriptReference {
		if sc == nil {
			return nil
		}
		r := &ScriptReference{ScriptSource: "workspaceStorage", ScriptData: sc.Path, ScriptArguments: sc.Command}
		if sc.TimeoutMinutes != nil {
			r.Timeout = strconv.Itoa(*sc.TimeoutMinutes) + "m"
		}
		return r
	}
	var out SetupScripts
	out.Scripts = &struct {
		CreationScript *ScriptReference `json:"creationScript,omitempty"`
		StartupScript  *ScriptReference `json:"startupScript,omitempty"`
	}{ref(s.CreationScript), ref(s.StartupScript)}
	b, _ := json.Marshal(out)
	return b
}
