package job

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"io"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/shoal-ml/shoal/domain/asset"
	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job/interactive"
	"github.com/shoal-ml/shoal/domain/job/jobio"
)

// Limits on job fields.
const (
	MaxJobNameLength        = 255
	MaxJobDisplayNameLength = 255

	MaxJobRetries              = 100
	MaxProcessCountPerInstance = 1024
)

var (
	JobNameRE = core.LazyRegexp(`^[A-Za-z0-9][A-Za-z0-9_-]*$`)
	// JobIONameRE is an input's or output's name (jobio.IONameRE).
	JobIONameRE = jobio.IONameRE
	envVarRE    = core.LazyRegexp(`^[A-Za-z_][A-Za-z0-9_]*$`)
	shmSizeRE   = core.LazyRegexp(`^(?i)([0-9]+(?:\.[0-9]+)?) ?(?:[kmgtp]i?)?b?$`)
	// jobRefRE matches a ${{...}} expression in a command.
	JobRefRE = core.LazyRegexp(`(?s)\$\{\{(.*?)\}\}`)
)

// reservedEnvPrefixes are the environment variable prefixes Shoal and the
// Azure runtime set on every node, and reservedEnvNames the AZUREML_
// names Shoal sets. Other AZUREML_ names are the job's: Azure's own
// examples set some (AZUREML_PARALLEL_EXAMPLE), and Shoal reads none.
var (
	reservedEnvPrefixes = []string{"SHOAL_", "AZ_BATCH_", "AZUREML_OUTPUT_", "AZUREML_INPUT_", "AZUREML_CR_", "AZUREML_ARM_"}
	reservedEnvNames    = []string{"AZUREML_RUN_ID", "AZUREML_DEV_URL_MFE", "AZUREML_MODEL_DIR"}
)

var (
	jobTiers = []string{"null", "spot", "basic", "standard", "premium"}
)

// ValidateJobName applies Azure's job name rule: 1 to 255 characters,
// letters, digits, '-' and '_', starting with a letter or a digit.
func ValidateJobName(name string) error {
	switch {
	case name == "":
		return core.FieldErrorf("name", "is required")
	case len(name) > MaxJobNameLength:
		return core.FieldErrorf("name", "must be at most %d characters long (it has %d)", MaxJobNameLength, len(name))
	case !core.IsLetter(name[0]) && !(name[0] >= '0' && name[0] <= '9'):
		return core.FieldErrorf("name", "%q must start with a letter or a digit", name)
	case !JobNameRE.MatchString(name):
		return core.FieldErrorf("name", "%q may contain only letters, digits, '-' and '_'", name)
	}
	return nil
}

// NormalizeJobSpec applies defaults to a command job spec, puts
// enumerations in their canonical spelling and checks every rule that does
// not need the store: type command, a compute name (azureml: and resource
// ID prefixes removed; none is ServerlessCompute), ${{inputs.x}} / ${{outputs.y}} references that name
// declared inputs and outputs, and the shape of every field. An empty name
// is left empty: the service generates one (GenerateJobName).
func NormalizeJobSpec(spec *JobSpec) error {
	if spec == nil {
		return core.Errorf(core.EINVALID, "the job document is empty")
	}
	t := strings.ToLower(strings.TrimSpace(spec.Type))
	if t == "" {
		t = JobTypeCommand
	}
	if t != JobTypeCommand {
		return errOnlyCommandJobs(spec.Type)
	}
	spec.Type = t
	if spec.Name != "" {
		if err := ValidateJobName(spec.Name); err != nil {
			return err
		}
	}
	if n := utf8.RuneCountInString(spec.DisplayName); n > MaxJobDisplayNameLength {
		return core.FieldErrorf("display_name", "must be at most %d characters long (it has %d)", MaxJobDisplayNameLength, n)
	}
	if err := core.NoControl("display_name", spec.DisplayName); err != nil {
		return err
	}
	if e := spec.ExperimentName; e != "" {
		if len(e) > MaxJobNameLength || !JobNameRE.MatchString(e) {
			return core.FieldErrorf("experiment_name", "%q must be 1 to %d letters, digits, '-' and '_', starting with a letter or a digit", core.Short(e), MaxJobNameLength)
		}
	}
	if n := utf8.RuneCountInString(spec.Description); n > core.MaxDescriptionLength {
		return core.FieldErrorf("description", "must be at most %d characters long (it has %d)", core.MaxDescriptionLength, n)
	}
	if err := core.ValidateTags(spec.Tags); err != nil {
		return err
	}
	if strings.TrimSpace(spec.Command) == "" {
		return core.FieldErrorf("command", "is required: the shell command to run, e.g. python train.py --data ${{inputs.data}}")
	}
	if strings.ContainsRune(spec.Command, 0) {
		return core.FieldErrorf("command", "must not contain NUL characters")
	}
	if spec.Code != "" {
		if err := core.ValidatePath("code", spec.Code); err != nil {
			return err
		}
	}
	if err := checkCodeAsset(spec.Code, spec.CodeAsset); err != nil {
		return err
	}
	if err := normalizeJobEnvironment(spec); err != nil {
		return err
	}
	for _, k := range core.SortedKeys(spec.EnvironmentVariables) {
		if err := ValidateEnvVar(k, spec.EnvironmentVariables[k]); err != nil {
			return err
		}
	}
	name, err := NormalizeJobCompute(spec.Compute)
	if err != nil {
		return err
	}
	spec.Compute = name
	if err := jobio.NormalizeInputs(spec.Inputs); err != nil {
		return err
	}
	if err := jobio.NormalizeOutputs(spec.Outputs); err != nil {
		return err
	}
	inputs := make(map[string]string, len(spec.Inputs))
	for k := range spec.Inputs {
		inputs[k] = ""
	}
	outputs := make(map[string]string, len(spec.Outputs))
	for k := range spec.Outputs {
		outputs[k] = ""
	}
	if _, err := ExpandCommand(spec.Command, inputs, outputs); err != nil {
		return err
	}
	if r := spec.Resources; r != nil {
		switch {
		case r.InstanceCount < 0:
			return core.FieldErrorf("resources.instance_count", "must be 1 or more, got %d", r.InstanceCount)
		case r.InstanceCount == 0:
			r.InstanceCount = 1
		case r.InstanceCount > compute.MaxClusterNodes:
			return core.FieldErrorf("resources.instance_count", "must be at most %d, got %d", compute.MaxClusterNodes, r.InstanceCount)
		}
		if err := core.NoControl("resources.instance_type", r.InstanceType); err != nil {
			return err
		}
		r.ShmSize = strings.TrimSpace(r.ShmSize)
		if r.ShmSize != "" {
			m := shmSizeRE.FindStringSubmatch(r.ShmSize)
			if f, err := strconv.ParseFloat(jobAt(m, 1), 64); err != nil || f <= 0 {
				return core.FieldErrorf("resources.shm_size", "%q must be a size greater than 0 such as 2g, 512m or 8GB", core.Short(r.ShmSize))
			}
		}
	}
	if err := normalizeDistribution(spec.Distribution, spec.InstanceCount()); err != nil {
		return err
	}
	if err := NormalizeJobIdentity("identity", spec.Identity); err != nil {
		return err
	}
	if err := interactive.NormalizeJobServices("services", spec.Services); err != nil {
		return err
	}
	if l := spec.Limits; l != nil {
		if l.Timeout < 0 || l.Timeout > compute.MaxSeconds {
			return core.FieldErrorf("limits.timeout", "must be between 1 and %d seconds, got %d", int(compute.MaxSeconds), l.Timeout)
		}
	}
	if q := spec.QueueSettings; q != nil {
		p := strings.ToLower(strings.TrimSpace(q.Priority))
		switch p {
		case "":
			p = PriorityMedium
		case PriorityLow, PriorityMedium, PriorityHigh:
		default:
			return core.FieldErrorf("queue_settings.priority", "unknown priority %q; use low, medium or high", core.Short(q.Priority))
		}
		q.Priority = p
		tier := strings.ToLower(strings.TrimSpace(q.JobTier))
		if tier != "" && !JobContains(jobTiers, tier) {
			return core.FieldErrorf("queue_settings.job_tier", "unknown job tier %q; use null, spot, basic, standard or premium", core.Short(q.JobTier))
		}
		q.JobTier = tier
	}
	if r := spec.Retries; r != nil && (*r < 0 || *r > MaxJobRetries) {
		return core.FieldErrorf("retries", "must be between 0 and %d, got %d", MaxJobRetries, *r)
	}
	return nil
}

func jobAt(m []string, i int) string {
	if i < len(m) {
		return m[i]
	}
	return ""
}

// JobContains reports whether list holds s.
func JobContains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// ValidateArtifactRef reports whether s is an uploaded artifact ID:
// "sha256:" and 64 lower-case hexadecimal digits (jobio.IsArtifactRef).
func ValidateArtifactRef(s string) bool { return jobio.IsArtifactRef(s) }

func normalizeJobEnvironment(spec *JobSpec) error {
	env := spec.Environment
	switch e := env.(type) {
	case nil:
		return nil
	case string:
		if strings.TrimSpace(e) == "" {
			spec.Environment = nil
			return nil
		}
		if err := core.ValidatePath("environment", e); err != nil {
			return err
		}
		_, err := asset.ParseEnvironmentRef(e)
		return err
	case map[string]any:
	default:
		// A Go caller's own type: bring it to the JSON shape.
		b, err := json.Marshal(env)
		if err != nil {
			return core.FieldErrorf("environment", "must be an environment reference or a mapping")
		}
		var v any
		if err := JobUnmarshalAny(b, &v); err != nil {
			return core.FieldErrorf("environment", "must be an environment reference or a mapping")
		}
		switch v.(type) {
		case string, map[string]any:
			spec.Environment = v
			return normalizeJobEnvironment(spec)
		}
		return core.FieldErrorf("environment", "must be an environment reference (azureml:<name>:<version> or azureml:<name>@latest) or a mapping with image, conda_file or build")
	}
	m := env.(map[string]any)
	var image string
	if v, ok := m["image"]; ok {
		s, isString := v.(string)
		if !isString || strings.TrimSpace(s) == "" {
			return core.FieldErrorf("environment.image", "must be a Docker image reference such as mcr.microsoft.com/azureml/openmpi4.1.0-ubuntu20.04")
		}
		image = strings.TrimSpace(s)
		m["image"] = image
	}
	var build *asset.EnvironmentBuild
	if v, ok := m["build"]; ok {
		b, isMap := v.(map[string]any)
		if !isMap {
			return core.FieldErrorf("environment.build", "must be a mapping with path (the Docker build context)")
		}
		p, isString := b["path"].(string)
		if !isString {
			return core.FieldErrorf("environment.build.path", "is required: the Docker build context")
		}
		build = &asset.EnvironmentBuild{Path: p}
		if d, ok := b["dockerfile_path"]; ok {
			if build.DockerfilePath, isString = d.(string); !isString {
				return core.FieldErrorf("environment.build.dockerfile_path", "must be a path inside the build context, such as Dockerfile")
			}
		}
	}
	conda, err := asset.CondaFileText("environment.conda_file", m["conda_file"])
	if err != nil {
		return err
	}
	if err := asset.ValidateEnvironmentParts("environment.", image, build, conda); err != nil {
		return err
	}
	if build != nil {
		m["build"].(map[string]any)["dockerfile_path"] = build.DockerfilePath
	}
	return nil
}

// ValidateEnvVar checks one environment variable a job sets: its name
// (letters, digits and _, not starting with a digit) and its value.
func ValidateEnvVar(name, value string) error {
	field := JobKeyPath("environment_variables", name)
	if !envVarRE.MatchString(name) {
		return core.FieldErrorf(field, "%q is not a valid variable name: use letters, digits and '_', not starting with a digit", core.Short(name))
	}
	for _, p := range reservedEnvPrefixes {
		if strings.HasPrefix(name, p) || slices.Contains(reservedEnvNames, name) {
			return core.FieldErrorf(field, "%s is reserved: names starting with SHOAL_, AZ_BATCH_, AZUREML_OUTPUT_, AZUREML_INPUT_, AZUREML_CR_ or AZUREML_ARM_, and %s, are set by the system", name, strings.Join(reservedEnvNames, ", "))
		}
	}
	if strings.ContainsRune(value, 0) {
		return core.FieldErrorf(field, "the value must not contain NUL characters")
	}
	return nil
}

// NormalizeJobCompute returns the compute name a job's compute field
// names: "azureml:cpu-cluster", "cpu-cluster" and an ARM resource ID
// ".../computes/cpu-cluster" all name cpu-cluster; no compute, "serverless"
// and "azureml:serverless" are ServerlessCompute.
func NormalizeJobCompute(c string) (string, error) {
	name := strings.TrimSpace(c)
	if len(name) >= 8 && strings.EqualFold(name[:8], "azureml:") {
		name = strings.TrimSpace(name[8:])
	}
	if strings.HasPrefix(strings.ToLower(name), "/subscriptions/") {
		i := strings.LastIndex(strings.ToLower(name), "/computes/")
		if i < 0 {
			return "", core.FieldErrorf("compute", "%q is not a compute resource ID (.../workspaces/<workspace>/computes/<name>)", core.Short(c))
		}
		name = strings.TrimSuffix(name[i+len("/computes/"):], "/")
		if name == "" {
			return "", core.FieldErrorf("compute", "%q ends without a compute name; the name after /computes/ is required", core.Short(c))
		}
	}
	if name == "" || strings.EqualFold(name, ServerlessCompute) {
		// No compute is Azure's serverless compute, as is the reserved
		// name: the service chooses the pool at submit.
		return ServerlessCompute, nil
	}
	if strings.EqualFold(name, "local") {
		return "", core.FieldErrorf("compute", "local runs are not supported; submit the job to a compute cluster (compute: azureml:<cluster-name>)")
	}
	if err := compute.ValidateComputeName(name); err != nil {
		return "", core.FieldErrorf("compute", "%s", strings.TrimPrefix(core.ErrorMessage(err), "name: "))
	}
	return name, nil
}

// ValidateJobIOName checks an input's or output's name: letters, digits
// and _, starting with a letter or _, at most MaxJobNameLength
// (jobio.ValidateIOName).
func ValidateJobIOName(field, name string) error { return jobio.ValidateIOName(field, name) }

// ExpandCommand substitutes every ${{inputs.x}} and ${{outputs.y}} in a
// command (spaces inside the braces are allowed: ${{ inputs.x }}) with the
// values given, verbatim and unquoted, as Azure ML does. A reference to a
// name the maps lack, or to a namespace other than inputs and outputs, is
// an EINVALID error on `command`.
func ExpandCommand(command string, inputs map[string]string, outputs map[string]string) (string, error) {
	locs := JobRefRE.FindAllStringSubmatchIndex(command, -1)
	if len(locs) == 0 {
		return command, nil
	}
	var b strings.Builder
	last := 0
	for _, loc := range locs {
		ref := command[loc[0]:loc[1]]
		expr := strings.TrimSpace(command[loc[2]:loc[3]])
		ns, name, ok := strings.Cut(expr, ".")
		ns, name = strings.TrimSpace(ns), strings.TrimSpace(name)
		var values map[string]string
		switch {
		case ns == "inputs":
			values = inputs
		case ns == "outputs":
			values = outputs
		case !ok:
			return "", core.FieldErrorf("command", "%s is not a valid reference; use ${{inputs.<name>}} or ${{outputs.<name>}}", core.Short(ref))
		default:
			return "", core.FieldErrorf("command", "%s refers to %q, which is not supported; only ${{inputs.<name>}} and ${{outputs.<name>}} can be used", core.Short(ref), core.Short(ns))
		}
		if !JobIONameRE.MatchString(name) {
			return "", core.FieldErrorf("command", "%s is not a valid reference: %q is not an %s name", core.Short(ref), core.Short(name), strings.TrimSuffix(ns, "s"))
		}
		v, found := values[name]
		if !found {
			return "", core.FieldErrorf("command", "%s refers to %s %q, which is not declared under %s", core.Short(ref), strings.TrimSuffix(ns, "s"), name, ns)
		}
		b.WriteString(command[last:loc[0]])
		b.WriteString(v)
		last = loc[1]
	}
	b.WriteString(command[last:])
	return b.String(), nil
}

// Words of generated job names, in the style of Azure ML's
// (keen_shark_3v8k2qm1xz).
var (
	jobNameAdjectives = []string{
		"affable", "amiable", "amused", "ashy", "bold", "brave", "bright", "busy", "calm", "careful",
		"clever", "cool", "crimson", "cyan", "dreamy", "eager", "epic", "frank", "friendly", "gentle",
		"gifted", "good", "great", "happy", "helpful", "honest", "jolly", "joyful", "keen", "kind",
		"lemon", "lively", "loyal", "lucid", "lucky", "magenta", "mighty", "modest", "neat", "nice",
		"olive", "patient", "plucky", "polite", "proud", "quiet", "quirky", "red", "shiny", "serene",
		"sharp", "shy", "silly", "sincere", "sleepy", "stoic", "sunny", "sweet", "tender", "tidy",
		"upbeat", "willing", "witty", "zen",
	}
	jobNameNouns = []string{
		"answer", "apple", "arch", "bear", "beetle", "brick", "calypso", "car", "carrot", "cat",
		"cheetah", "cloud", "coconut", "cup", "dog", "eagle", "engine", "fig", "fox", "garden",
		"glove", "grape", "hamster", "heart", "island", "jackal", "kettle", "kitten", "lamp", "leaf",
		"lemon", "lime", "lizard", "lobster", "mango", "monkey", "napkin", "nail", "nest", "night",
		"office", "owl", "pasta", "pear", "pencil", "pizza", "plum", "potato", "rabbit", "rail",
		"river", "rocket", "salt", "seal", "shark", "snail", "spoon", "stem", "tiger", "tomato",
		"train", "turtle", "whale", "yak",
	}
)

const base36 = "0123456789abcdefghijklmnopqrstuvwxyz"

// GenerateJobName returns a job name in Azure ML's style: an adjective, a
// noun and 10 lower-case base-36 characters joined by '_', such as
// keen_shark_3v8k2qm1xz. Randomness comes from random (crypto/rand when nil
// or when random runs dry).
func GenerateJobName(random io.Reader) string {
	var buf [8 * 12]byte
	n := 0
	if random != nil {
		n, _ = io.ReadFull(random, buf[:])
	}
	if n < len(buf) {
		_, _ = rand.Read(buf[n:])
	}
	pick := func(i, size int) int {
		return int(binary.BigEndian.Uint64(buf[8*i:]) % uint64(size))
	}
	var b strings.Builder
	b.WriteString(jobNameAdjectives[pick(0, len(jobNameAdjectives))])
	b.WriteByte('_')
	b.WriteString(jobNameNouns[pick(1, len(jobNameNouns))])
	b.WriteByte('_')
	for i := 2; i < 12; i++ {
		b.WriteByte(base36[pick(i, len(base36))])
	}
	return b.String()
}
