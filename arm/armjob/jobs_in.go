package armjob

import (
	"context"
	"encoding/json"
	"github.com/shoal-ml/shoal/arm/armcore"
	"sort"
	"strings"

	"github.com/shoal-ml/shoal/domain/core"
)

// JobBase is Azure's JobBase resource: what azure-ai-ml PUTs to
// …/jobs/{id} and reads back.
type JobBase struct {
	ID         string                     `json:"id,omitempty"`
	Name       string                     `json:"name,omitempty"`
	Type       string                     `json:"type,omitempty"`
	SystemData *armcore.SystemData        `json:"systemData,omitempty"`
	Properties map[string]json.RawMessage `json:"properties"`
}

// obj is one JSON object of a REST body, read key by key, with the path
// of its fields for errors.
type obj struct {
	path string
	m    map[string]json.RawMessage
}

// newObj reads raw (null or absent: empty) as the object at path.
func newObj(path string, raw json.RawMessage) (obj, error) {
	o := obj{path: path, m: map[string]json.RawMessage{}}
	if len(raw) == 0 || string(raw) == "null" {
		return o, nil
	}
	if err := json.Unmarshal(raw, &o.m); err != nil {
		return o, core.FieldErrorf(path, "must be an object")
	}
	if o.m == nil {
		o.m = map[string]json.RawMessage{}
	}
	return o, nil
}

func (o obj) field(k string) string {
	if o.path == "" {
		return k
	}
	return o.path + "." + k
}

// key finds the first of names present and not null (azure-ai-ml writes a
// pipeline step's keys in either spelling: job_input_type or
// jobInputType).
func (o obj) key(names ...string) (string, json.RawMessage) {
	for _, n := range names {
		if v, ok := o.m[n]; ok && string(v) != "null" {
			return n, v
		}
	}
	return names[0], nil
}

// str reads a string under any of names ("" when absent).
func (o obj) str(names ...string) (string, error) {
	k, v := o.key(names...)
	if v == nil {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		return "", core.FieldErrorf(o.field(k), "must be a string")
	}
	return s, nil
}

// raw returns the value under any of names as it is (nil when absent).
func (o obj) raw(names ...string) json.RawMessage {
	_, v := o.key(names...)
	return v
}

// sub reads the object under any of names.
func (o obj) sub(names ...string) (obj, error) {
	k, v := o.key(names...)
	return newObj(o.field(k), v)
}

// has says whether any of names is present and not null.
func (o obj) has(names ...string) bool { _, v := o.key(names...); return v != nil }

// strMap reads a map of strings under any of names (nil when absent).
func (o obj) strMap(names ...string) (map[string]string, error) {
	k, v := o.key(names...)
	if v == nil {
		return nil, nil
	}
	var m map[string]string
	if err := json.Unmarshal(v, &m); err != nil {
		return nil, core.FieldErrorf(o.field(k), "must be an object of strings")
	}
	return m, nil
}

// checkKeys refuses a key of o that is not in known, naming it: what
// Shoal cannot keep is refused, never dropped.
func (o obj) checkKeys(what string, known ...string) error {
	var unknown []string
	for k := range o.m {
		found := false
		for _, n := range known {
			if n == k {
				found = true
				break
			}
		}
		if !found {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	sort.Strings(unknown)
	return core.FieldErrorf(o.field(unknown[0]), "is not a field of %s that Shoal knows", what)
}

// doc is the job document being built (the JSON of a job's YAML).
type doc map[string]any

// setStr sets k to s when s is not empty.
func (d doc) setStr(k, s string) {
	if s != "" {
		d[k] = s
	}
}

// jobTranslator turns a REST body of workspace ws into a job document.
type jobTranslator struct {
	ctx   context.Context
	ws    string
	codes CodeResolver
}

// readOnlyJobKeys are the keys of a job's properties that Azure answers
// and azure-ai-ml sends back when it PUTs what it read: accepted and not
// kept (Shoal sets them itself).
var readOnlyJobKeys = []string{"status", "services", "parameters", "isArchived", "properties",
	"componentId", "schedule"}

// commonJobKeys are the keys every job type Shoal runs shares.
var commonJobKeys = []string{"jobType", "displayName", "experimentName", "description", "tags", "computeId", "identity", "notificationSetting"}

// unsupportedJobTypes are Azure's job types Shoal does not run, with what
// to use instead.
var unsupportedJobTypes = map[string]string{
	"automl":     "AutoML jobs are not run by Shoal: run your own training as a sweep job (ml_client.jobs.create_or_update(command(...).sweep(...))) or a command job",
	"spark":      "Spark jobs are not run by Shoal: run the script as a command job (PySpark in local mode works inside a command job's environment)",
	"finetuning": "fine-tuning jobs are not run by Shoal: run the fine-tuning script as a command job with the model as an input",
	"labeling":   "labeling jobs are not run by Shoal",
	"base":       "a job needs a jobType: Command, Pipeline or Sweep",
}

// JobDocument turns Azure's JobBase body of a PUT …/jobs/{name} in
// workspace ws into the job document (the JSON of a job's YAML) that
// Shoal's one submit path decodes. Read-only keys the SDK sends back are
// accepted; a job kind Shoal does not run, a key it cannot keep, or a
// compute or asset of another workspace is refused naming the field.
// codes resolves codeId (nil: a job naming code is refused).
func JobDocument(ctx context.Context, ws, name string, body []byte, codes CodeResolver) ([]byte, error) {
	var r JobBase
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, core.FieldErrorf("body", "not a JobBase resource: %v", err)
	}
	if r.Properties == nil {
		return nil, core.FieldErrorf("properties", "is required")
	}
	p := obj{path: "properties", m: r.Properties}
	t := jobTranslator{ctx: ctx, ws: ws, codes: codes}
	typ, err := p.str("jobType")
	if err != nil {
		return nil, err
	}
	var d doc
	switch strings.ToLower(typ) {
	case "command":
		d, err = t.command(p)
	case "sweep":
		d, err = t.sweep(p)
	case "pipeline":
		d, err = t.pipeline(p)
	case "":
		return nil, core.FieldErrorf("properties.jobType", "is required: Command, Pipeline or Sweep")
	default:
		if why, ok := unsupportedJobTypes[strings.ToLower(typ)]; ok {
			return nil, core.FieldErrorf("properties.jobType", "%q: %s", typ, why)
		}
		return nil, core.FieldErrorf("properties.jobType", "%q is not a job type: Shoal runs Command, Pipeline and Sweep jobs", core.Short(typ))
	}
	if err != nil {
		return nil, err
	}
	if a := p.raw("isArchived"); a != nil && string(a) == "true" {
		return nil, core.FieldErrorf("properties.isArchived", "Shoal does not archive jobs: a job stays in the list once it has ended")
	}
	d["name"] = name
	return json.Marshal(d)
}

// common reads what every job type shares into d.
func (t jobTranslator) common(p obj, d doc) error {
	for _, k := range []struct{ rest, yaml string }{{"displayName", "display_name"}, {"experimentName", "experiment_name"}, {"description", "description"}} {
		s, err := p.str(k.rest)
		if err != nil {
			return err
		}
		d.setStr(k.yaml, s)
	}
	tags, err := p.strMap("tags")
	if err != nil {
		return err
	}
	if len(tags) > 0 {
		d["tags"] = tags
	}
	if id, err := p.str("computeId"); err != nil {
		return err
	} else if id != "" {
		c, err := computeRef("properties.computeId", t.ws, id)
		if err != nil {
			return err
		}
		d["compute"] = c
	}
	if _, err := p.strMap("properties"); err != nil {
		return err
	}
	if p.has("identity") {
		id, err := identityDoc(p)
		if err != nil {
			return err
		}
		d["identity"] = id
	}
	if p.has("notificationSetting") {
		ns, err := notificationSettingDoc(p)
		if err != nil {
			return err
		}
		d["notification_setting"] = ns
	}
	return nil
}

// identityDoc turns identity {identityType: AMLToken|UserIdentity|Managed}
// into the YAML's {type: aml_token|user_identity|managed}.
func identityDoc(p obj) (map[string]any, error) {
	o, err := p.sub("identity")
	if err != nil {
		return nil, err
	}
	typ, err := o.str("identityType", "identity_type", "type")
	if err != nil {
		return nil, err
	}
	out := map[string]any{}
	switch strings.ToLower(typ) {
	case "amltoken", "aml_token":
		out["type"] = "aml_token"
	case "useridentity", "user_identity":
		out["type"] = "user_identity"
	case "managed", "managedidentity", "managed_identity":
		out["type"] = "managed"
		for _, k := range []struct{ rest, yaml string }{{"clientId", "client_id"}, {"objectId", "object_id"}, {"resourceId", "resource_id"}} {
			if s, err := o.str(k.rest, k.yaml); err != nil {
				return nil, err
			} else if s != "" {
				out[k.yaml] = s
			}
		}
	default:
		return nil, core.FieldErrorf(o.field("identityType"), "%q is not AMLToken, UserIdentity or Managed", core.Short(typ))
	}
	return out, nil
}

// trialLike reads the parts of a command job that a sweep's trial shares
// (command, codeId, environmentId, environmentVariables, distribution,
// resources) from o into d.
func (t jobTranslator) trialLike(o obj, d doc) error {
	cmd, err := o.str("command")
	if err != nil {
		return err
	}
	d.setStr("command", cmd)
	if code, err := o.str("codeId", "code_id", "code"); err != nil {
		return err
	} else if code != "" {
		if t.codes == nil {
			return core.Errorf(core.ENOTIMPLEMENTED, "%s: this server does not keep Azure code assets yet; submit a job with code with `shoal job create -f job.yml`, which uploads ./src itself", o.field("codeId"))
		}
		a, err := t.codes.CodeArtifact(t.ctx, t.ws, code)
		if err != nil {
			if f := core.ErrorField(err); f == "" {
				return &core.Error{Code: core.ErrorCode(err), Field: o.field("codeId"), Message: o.field("codeId") + ": " + core.ErrorMessage(err)}
			}
			return err
		}
		d["code"] = a
	}
	if env, err := o.str("environmentId", "environment_id", "environment"); err != nil {
		return err
	} else if env != "" {
		ref, err := assetRef(o.field("environmentId"), t.ws, "environments", env)
		if err != nil {
			return err
		}
		d["environment"] = ref
	}
	vars, err := o.strMap("environmentVariables", "environment_variables")
	if err != nil {
		return err
	}
	if len(vars) > 0 {
		d["environment_variables"] = vars
	}
	if o.has("distribution") {
		dist, err := distributionDoc(o)
		if err != nil {
			return err
		}
		d["distribution"] = dist
	}
	if o.has("resources") {
		res, err := resourcesDoc(o)
		if err != nil {
			return err
		}
		if len(res) > 0 {
			d["resources"] = res
		}
	}
	return nil
}

// distributionDoc turns distribution {distributionType, processCountPerInstance,
// workerCount, parameterServerCount} into the YAML's.
func distributionDoc(p obj) (map[string]any, error) {
	o, err := p.sub("distribution")
	if err != nil {
		return nil, err
	}
	typ, err := o.str("distributionType", "distribution_type", "type")
	if err != nil {
		return nil, err
	}
	out := map[string]any{}
	switch strings.ToLower(typ) {
	case "pytorch", "mpi", "tensorflow":
		out["type"] = strings.ToLower(typ)
	default:
		return nil, core.FieldErrorf(o.field("distributionType"), "%q is not PyTorch, TensorFlow or Mpi", core.Short(typ))
	}
	for _, k := range []struct{ rest, snake string }{
		{"processCountPerInstance", "process_count_per_instance"}, {"workerCount", "worker_count"}, {"parameterServerCount", "parameter_server_count"},
	} {
		if v := o.raw(k.rest, k.snake); v != nil {
			out[k.snake] = v
		}
	}
	return out, nil
}

// resourcesDoc turns resources {instanceCount, instanceType, shmSize,
// properties} into the YAML's (empty properties dropped: the SDK always
// sends {}).
func resourcesDoc(p obj) (map[string]any, error) {
	o, err := p.sub("resources")
	if err != nil {
		return nil, err
	}
	out := map[string]any{}
	for _, k := range []struct{ rest, snake string }{{"instanceCount", "instance_count"}, {"instanceType", "instance_type"}, {"shmSize", "shm_size"}} {
		if v := o.raw(k.rest, k.snake); v != nil {
			out[k.snake] = v
		}
	}
	if props, err := o.sub("properties"); err != nil {
		return nil, err
	} else if len(props.m) > 0 {
		out["properties"] = props.m
	}
	return out, nil
}

// inputModes are Azure's REST input and output modes and the YAML's.
var inputModes = map[string]string{
	"readonlymount": "ro_mount", "readwritemount": "rw_mount", "download": "download", "direct": "direct",
	"evalmount": "eval_mount", "evaldownload": "eval_download", "upload": "upload",
}

// modeDoc turns a REST mode into the YAML's; a YAML spelling passes.
func modeDoc(field, m string) (string, error) {
	if m == "" {
		return "", nil
	}
	if y, ok := inputModes[strings.ToLower(m)]; ok {
		return y, nil
	}
	for _, y := range inputModes {
		if strings.EqualFold(m, y) {
			return y, nil
		}
	}
	return "", core.FieldErrorf(field, "%q is not ReadOnlyMount, ReadWriteMount, Download, Direct, EvalMount, EvalDownload or Upload", core.Short(m))
}

// inputsDoc turns inputs {name: {jobInputType: literal, value} |
// {jobInputType: uri_folder…, uri, mode}} into the YAML's.
func (t jobTranslator) inputsDoc(p obj) (map[string]any, error) {
	o, err := p.sub("inputs")
	if err != nil {
		return nil, err
	}
	out := map[string]any{}
	for name := range o.m {
		in, err := o.sub(name)
		if err != nil {
			return nil, err
		}
		typ, err := in.str("jobInputType", "job_input_type", "type")
		if err != nil {
			return nil, err
		}
		if strings.EqualFold(typ, "literal") {
			v := in.raw("value")
			if v == nil {
				return nil, core.FieldErrorf(in.field("value"), "is required for a literal input")
			}
			out[name] = map[string]any{"value": v}
			continue
		}
		if typ == "" {
			return nil, core.FieldErrorf(in.field("jobInputType"), "is required")
		}
		uri, err := in.str("uri", "path")
		if err != nil {
			return nil, err
		}
		if ref, ok := parseARMID(uri); ok {
			coll := "data"
			if strings.HasSuffix(strings.ToLower(typ), "_model") {
				coll = "models"
			}
			if uri, err = assetRef(in.field("uri"), t.ws, coll, "azureml:"+strings.TrimPrefix(uri, "azureml:")); err != nil {
				return nil, err
			}
			_ = ref
		}
		m, err := in.str("mode")
		if err != nil {
			return nil, err
		}
		mode, err := modeDoc(in.field("mode"), m)
		if err != nil {
			return nil, err
		}
		y := map[string]any{"type": typ, "path": uri}
		if mode != "" {
			y["mode"] = mode
		}
		out[name] = y
	}
	return out, nil
}

// outputsDoc turns outputs {name: {jobOutputType, uri, mode, assetName,
// assetVersion}} into the YAML's.
func outputsDoc(p obj) (map[string]any, error) {
	o, err := p.sub("outputs")
	if err != nil {
		return nil, err
	}
	out := map[string]any{}
	for name := range o.m {
		v, err := o.sub(name)
		if err != nil {
			return nil, err
		}
		y := map[string]any{}
		for _, k := range []struct {
			yaml string
			rest []string
		}{
			{"type", []string{"jobOutputType", "job_output_type", "type"}}, {"path", []string{"uri", "path"}},
			{"name", []string{"assetName", "asset_name", "name"}}, {"version", []string{"assetVersion", "asset_version", "version"}},
		} {
			s, err := v.str(k.rest...)
			if err != nil {
				return nil, err
			}
			if s != "" {
				y[k.yaml] = s
			}
		}
		m, err := v.str("mode")
		if err != nil {
			return nil, err
		}
		if y["mode"], err = modeDoc(v.field("mode"), m); err != nil {
			return nil, err
		} else if y["mode"] == "" {
			delete(y, "mode")
		}
		out[name] = y
	}
	return out, nil
}

// inOut sets d's inputs and outputs from p.
func (t jobTranslator) inOut(p obj, d doc) error {
	if p.has("inputs") {
		in, err := t.inputsDoc(p)
		if err != nil {
			return err
		}
		if len(in) > 0 {
			d["inputs"] = in
		}
	}
	if p.has("outputs") {
		out, err := outputsDoc(p)
		if err != nil {
			return err
		}
		if len(out) > 0 {
			d["outputs"] = out
		}
	}
	return nil
}

// queueSettingsDoc turns queueSettings {jobTier, priority} into the YAML's.
func queueSettingsDoc(p obj, d doc) error {
	if !p.has("queueSettings") {
		return nil
	}
	o, err := p.sub("queueSettings")
	if err != nil {
		return err
	}
	q := map[string]any{}
	if s, err := o.str("jobTier"); err != nil {
		return err
	} else if s != "" {
		q["job_tier"] = strings.ToLower(s)
	}
	if v := o.raw("priority"); v != nil {
		q["priority"] = v
	}
	d["queue_settings"] = q
	return nil
}

// command turns a CommandJob's properties into a command job document.
func (t jobTranslator) command(p obj) (doc, error) {
	if err := p.checkKeys("a CommandJob", append(append([]string{"command", "codeId", "environmentId", "environmentVariables",
		"inputs", "outputs", "resources", "distribution", "limits", "queueSettings"}, commonJobKeys...), readOnlyJobKeys...)...); err != nil {
		return nil, err
	}
	d := doc{"type": "command"}
	if err := t.common(p, d); err != nil {
		return nil, err
	}
	if err := t.trialLike(p, d); err != nil {
		return nil, err
	}
	labelCode(p, d)
	if err := t.inOut(p, d); err != nil {
		return nil, err
	}
	if err := queueSettingsDoc(p, d); err != nil {
		return nil, err
	}
	if p.has("limits") {
		l, err := p.sub("limits")
		if err != nil {
			return nil, err
		}
		if v := l.raw("timeout"); v != nil {
			d["limits"] = map[string]any{"timeout": v}
		}
	}
	if err := servicesDoc(p, d); err != nil {
		return nil, err
	}
	return d, nil
}

// servicesDoc turns a command job's services {name: {jobServiceType,
// port, properties}} into the YAML's {name: {type, port, properties}};
// the services Azure answers by itself (Studio, Tracking), which the SDK
// sends back, are not the job's to ask for and are left out.
func servicesDoc(p obj, d doc) error {
	if !p.has("services") {
		return nil
	}
	o, err := p.sub("services")
	if err != nil {
		return err
	}
	out := map[string]any{}
	for name := range o.m {
		s, err := o.sub(name)
		if err != nil {
			return err
		}
		typ, err := s.str("jobServiceType", "job_service_type", "type")
		if err != nil {
			return err
		}
		if strings.EqualFold(typ, "Studio") || strings.EqualFold(typ, "Tracking") {
			continue
		}
		y := map[string]any{}
		if typ != "" {
			y["type"] = serviceTypeDoc(typ)
		}
		if v := s.raw("port"); v != nil {
			y["port"] = v
		}
		if v := s.raw("properties"); v != nil && string(v) != "{}" {
			y["properties"] = v
		}
		if err := serviceNodesDoc(s, name, y); err != nil {
			return err
		}
		out[name] = y
	}
	if len(out) > 0 {
		d["services"] = out
	}
	return nil
}

// serviceTypeDoc is the YAML's name of a REST job service type
// (JupyterLab: jupyter_lab).
func serviceTypeDoc(t string) string {
	switch strings.ToLower(t) {
	case "jupyterlab", "jupyter_lab":
		return "jupyter_lab"
	case "ssh":
		return "ssh"
	case "tensorboard", "tensor_board":
		return "tensor_board"
	case "vscode", "vs_code":
		return "vs_code"
	}
	return t
}
