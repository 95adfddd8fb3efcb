package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/shoal-ml/shoal/cli/cmdutil"
	"github.com/shoal-ml/shoal/domain/asset"
	"github.com/shoal-ml/shoal/domain/batch"
	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/job/jobio"
	"github.com/shoal-ml/shoal/domain/job/paralleljob"
	"github.com/shoal-ml/shoal/domain/job/pipelinejob"
	"github.com/shoal-ml/shoal/domain/job/sweepjob"
	"github.com/shoal-ml/shoal/server/config"
)

// Every ```yaml block of the repository's Markdown is decoded by the
// decoder Shoal uses for what it is, and fails the test with its file and
// line when that decoder refuses it. What a block is comes from its
// content ($schema, else type:, else its keys); a block that is no whole
// document on purpose (a fragment to merge, an example of what is
// refused) says so in an HTML comment on the line before it:
//
//	<!-- not-a-document: why -->
//
// and one whose kind the content cannot tell says it the same way:
//
//	<!-- yaml: server-config -->
//
// (kinds: job, pipeline, sweep, component, environment, data, model,
// compute, server-config, kubernetes). Nothing is skipped silently: a block with neither is an
// error.

// yamlBlock is one fenced YAML block of a Markdown file.
type yamlBlock struct {
	file   string
	line   int    // the line of its first content line
	text   string // its content, the fence's indentation removed
	marker string // the HTML comment before the fence, "" if none
	writes string // the file a walkthrough writes it to (<!-- file: PATH -->)
}

// fileMarker names the file a guide's walkthrough writes a block to.
var fileMarker = regexp.MustCompile(`^\s*<!--\s*file:\s*(\S+)\s*-->\s*$`)

// docMarker matches the comment before a block: its word and its reason.
var docMarker = regexp.MustCompile(`^\s*<!--\s*(not-a-document|yaml)\s*:\s*(.*?)\s*-->\s*$`)

// yamlBlocks returns the ```yaml and ```yml blocks of a Markdown text.
func yamlBlocks(file, text string) []yamlBlock {
	var out []yamlBlock
	lines := strings.Split(text, "\n")
	for i := 0; i < len(lines); i++ {
		trimmed := strings.TrimLeft(lines[i], " ")
		if !strings.HasPrefix(trimmed, "```") && !strings.HasPrefix(trimmed, "~~~") {
			continue
		}
		indent := len(lines[i]) - len(trimmed)
		fence := trimmed[:3]
		lang, _, _ := strings.Cut(strings.TrimSpace(trimmed[3:]), " ")
		var body []string
		j := i + 1
		for ; j < len(lines); j++ {
			t := strings.TrimLeft(lines[j], " ")
			if strings.HasPrefix(t, fence) && strings.TrimSpace(strings.Trim(t, fence[:1])) == "" {
				break
			}
			l := lines[j]
			if len(l) >= indent && strings.TrimSpace(l[:indent]) == "" {
				l = l[indent:]
			}
			body = append(body, l)
		}
		if lang == "yaml" || lang == "yml" {
			b := yamlBlock{file: file, line: i + 2, text: strings.Join(body, "\n") + "\n"}
			for k := i - 1; k >= 0; k-- {
				if strings.TrimSpace(lines[k]) == "" {
					continue
				}
				if docMarker.MatchString(lines[k]) {
					b.marker = strings.TrimSpace(lines[k])
				}
				if m := fileMarker.FindStringSubmatch(lines[k]); m != nil {
					b.writes = filepath.Clean(m[1])
				}
				break
			}
			out = append(out, b)
		}
		i = j
	}
	return out
}

// serverConfigKeys are the top-level keys of the server config: a block
// whose keys are all among them is a server config (or a part of one,
// which decodes as one).
func serverConfigKeys() map[string]bool {
	keys := map[string]bool{}
	t := reflect.TypeFor[config.Config]()
	for i := range t.NumField() {
		if name, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ","); name != "" && name != "-" {
			keys[name] = true
		}
	}
	return keys
}

// yamlKind tells what a block is: its marker's kind, else from $schema,
// type: or its top-level keys.
func yamlKind(b yamlBlock, doc map[string]any) (string, error) {
	if m := docMarker.FindStringSubmatch(b.marker); m != nil && m[1] == "yaml" {
		return m[2], nil
	}
	schema, _ := doc["$schema"].(string)
	typ, _ := doc["type"].(string)
	typ = strings.ToLower(typ)
	switch {
	case strings.HasSuffix(schema, "/pipelineComponent.schema.json"):
		return "pipeline-component", nil
	case strings.HasSuffix(schema, "/pipelineJob.schema.json") || typ == "pipeline":
		return "pipeline", nil
	case strings.HasSuffix(schema, "/sweepJob.schema.json") || typ == "sweep":
		return "sweep", nil
	case strings.HasSuffix(schema, "/commandComponent.schema.json"):
		return "component", nil
	case strings.HasSuffix(schema, "/batchEndpoint.schema.json"):
		return "batch-endpoint", nil
	case strings.HasSuffix(schema, "/schedule.schema.json"):
		return "schedule", nil
	case strings.HasSuffix(schema, "BatchDeployment.schema.json") || strings.HasSuffix(schema, "/batchDeployment.schema.json"):
		return "batch-deployment", nil
	case strings.HasSuffix(schema, "/environment.schema.json"):
		return "environment", nil
	case strings.HasSuffix(schema, "/data.schema.json"):
		return "data", nil
	case strings.HasSuffix(schema, "/model.schema.json"):
		return "model", nil
	case strings.HasSuffix(schema, "/commandJob.schema.json") || doc["command"] != nil && (typ == "" || typ == "command"):
		return "job", nil
	case strings.HasSuffix(schema, "Compute.schema.json") || strings.HasSuffix(schema, "computeInstance.schema.json") ||
		typ == "amlcompute" || typ == "computeinstance" || typ == "kubernetes":
		return "compute", nil
	case doc["apiVersion"] != nil && doc["kind"] != nil:
		return "kubernetes", nil
	case typ == "azure_blob" || typ == "azure_data_lake_gen2" || typ == "s3" || typ == "nfs":
		return "datastore", nil
	}
	keys := serverConfigKeys()
	all := len(doc) > 0
	for k := range doc {
		all = all && keys[k]
	}
	if all {
		return "server-config", nil
	}
	return "", errors.New("cannot tell what this YAML is: give it a $schema or type:, or put <!-- yaml: KIND --> or <!-- not-a-document: why --> on the line before it")
}

// localPathStandIn stands for what the CLI uploads before it sends a
// document: an artifact ID.
var localPathStandIn = "sha256:" + strings.Repeat("0", 64)

// asSent rewrites a job or component document's local paths (code,
// inputs' paths, a local component file) as the CLI does before it sends
// it: the upload is replaced by a stand-in ID. What the CLI leaves (a URL,
// an azureml: data asset, a datastore URI) is sent as written, and the
// decoders check it.
func asSent(doc map[string]any, prefix string) error {
	local := func(p string) bool {
		return p != "" && !job.IsPipelineBinding(p) && jobio.PathKind(p) == jobio.Local
	}
	if code, ok := doc["code"].(string); ok && local(code) {
		doc["code"] = localPathStandIn
	}
	inputs, _ := doc["inputs"].(map[string]any)
	for _, v := range inputs {
		in, ok := v.(map[string]any)
		if !ok {
			continue
		}
		if p, _ := in["path"].(string); local(p) {
			in["path"] = localPathStandIn
		}
	}
	if trial, ok := doc["trial"].(map[string]any); ok {
		if err := asSent(trial, prefix+"trial."); err != nil {
			return err
		}
	}
	jobs, _ := doc["jobs"].(map[string]any)
	for name, v := range jobs {
		step, ok := v.(map[string]any)
		if !ok {
			continue
		}
		if err := asSent(step, prefix+"jobs."+name+"."); err != nil {
			return err
		}
		if comp, ok := step["component"].(map[string]any); ok {
			if err := asSent(comp, prefix+"jobs."+name+".component."); err != nil {
				return err
			}
		}
	}
	return nil
}

// decodeYAMLBlock decodes a block with the decoder of its kind.
func decodeYAMLBlock(b yamlBlock, components map[string]map[string]any) error {
	if m := docMarker.FindStringSubmatch(b.marker); m != nil && m[1] == "not-a-document" {
		if m[2] == "" {
			return errors.New("<!-- not-a-document: --> needs a reason")
		}
		return nil
	}
	data := []byte(b.text)
	if bytes.Contains(data, []byte("\napiVersion:")) || bytes.HasPrefix(data, []byte("apiVersion:")) {
		// Kubernetes manifests, often several documents: each must decode.
		dec := yaml.NewDecoder(bytes.NewReader(data))
		for {
			var v map[string]any
			if err := dec.Decode(&v); errors.Is(err, io.EOF) {
				return nil
			} else if err != nil {
				return err
			}
			if v["apiVersion"] == nil || v["kind"] == nil {
				return errors.New("a Kubernetes manifest without apiVersion and kind")
			}
		}
	}
	doc := map[string]any{}
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return fmt.Errorf("not valid YAML: %w", err)
	}
	kind, err := yamlKind(b, doc)
	if err != nil {
		return err
	}
	if kind == "server-config" {
		_, err := config.Parse(bytes.NewReader(data))
		return err
	}
	if kind == "kubernetes" {
		return nil // decoded above
	}
	if kind == "data" || kind == "model" {
		return decodeFileAssetBlock(kind, doc)
	}
	if kind == "component" || kind == "environment" {
		if v, ok := doc["version"]; ok && v != nil {
			doc["version"] = fmt.Sprint(v)
		}
	}
	if kind == "environment" {
		// As `shoal environment create -f` sends it: no $schema, a
		// local build context uploaded.
		delete(doc, "$schema")
		if b, ok := doc["build"].(map[string]any); ok {
			if p, _ := b["path"].(string); p != "" && !job.ValidateArtifactRef(p) {
				b["path"] = localPathStandIn
			}
		}
		js, err := cmdutil.ToJSON(doc)
		if err != nil {
			return err
		}
		var e asset.Environment
		dec := json.NewDecoder(bytes.NewReader(js))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&e); err != nil {
			return err
		}
		return asset.NormalizeEnvironment(&e)
	}
	if kind == "pipeline-component" {
		// Checked where a pipeline block of its page runs it.
		if b.writes == "" {
			return fmt.Errorf("a pipeline component block is marked <!-- file: PATH --> and run by a pipeline block of its page (component: PATH)")
		}
		return nil
	}
	if kind == "batch-deployment" {
		// As `shoal batch-deployment create -f` sends it: the local
		// code folder uploaded.
		if cc, ok := doc["code_configuration"].(map[string]any); ok {
			if p, _ := cc["code"].(string); p != "" && !job.ValidateArtifactRef(p) {
				cc["code"] = localPathStandIn
			}
		}
	}
	if kind == "pipeline" {
		if err := inlineDocComponents(doc, components, "", 0); err != nil {
			return err
		}
	}
	if err := asSent(doc, ""); err != nil {
		return err
	}
	js, err := cmdutil.ToJSON(doc)
	if err != nil {
		return err
	}
	switch kind {
	case "job":
		spec, err := job.DecodeJobSpec(js)
		if err != nil {
			return err
		}
		return job.NormalizeJobSpec(spec)
	case "pipeline":
		spec, err := pipelinejob.DecodePipelineSpec(js)
		if err != nil {
			return err
		}
		return pipelinejob.NormalizePipelineSpec(spec)
	case "sweep":
		spec, err := sweepjob.DecodeSweepSpec(js)
		if err != nil {
			return err
		}
		return sweepjob.NormalizeSweepSpec(spec)
	case "component":
		// A command or a parallel component, as the server reads them.
		c, err := paralleljob.DecodeComponent(js, "")
		if err != nil {
			return err
		}
		return paralleljob.NormalizeComponent(c, true)
	case "compute":
		_, err := compute.DecodeComputeSpec(js)
		return err
	case "datastore":
		_, err := asset.DecodeDatastore(js)
		return err
	case "batch-endpoint":
		_, err := batch.DecodeEndpoint(js)
		return err
	case "batch-deployment":
		_, err := batch.DecodeDeployment(js)
		return err
	case "schedule":
		return decodeScheduleDoc(js)
	}
	return fmt.Errorf("unknown kind %q in %s (kinds: job, pipeline, sweep, component, environment, data, model, compute, datastore, batch-endpoint, batch-deployment, schedule, server-config, kubernetes)", kind, b.marker)
}

// TestDocsYAML decodes every YAML block of the repository's Markdown.
func TestDocsYAML(t *testing.T) {
	checked := 0
	for _, rel := range markdownFiles(t, repoRoot) {
		text, err := os.ReadFile(filepath.Join(repoRoot, rel))
		if err != nil {
			t.Fatal(err)
		}
		blocks := yamlBlocks(rel, string(text))
		// A pipeline's local component file is the page's component
		// block marked as that file.
		components := map[string]map[string]any{}
		for _, b := range blocks {
			doc := map[string]any{}
			if yaml.Unmarshal([]byte(b.text), &doc) == nil && (strings.HasSuffix(fmt.Sprint(doc["$schema"]), "/commandComponent.schema.json") ||
				strings.HasSuffix(fmt.Sprint(doc["$schema"]), "/pipelineComponent.schema.json")) {
				if v, ok := doc["version"]; ok && v != nil {
					doc["version"] = fmt.Sprint(v)
				}
				if b.writes != "" {
					components[b.writes] = doc
				}
			}
		}
		for _, b := range blocks {
			checked++
			if err := decodeYAMLBlock(b, components); err != nil {
				t.Errorf("%s:%d: %v", b.file, b.line, err)
			}
		}
	}
	if checked < 15 {
		t.Fatalf("only %d YAML blocks found: the walk is broken", checked)
	}
}

// The conventions hold: a block nothing identifies is an error, a marker
// without a reason is one, and a marked fragment or kind is taken.
func TestDocsYAMLConventions(t *testing.T) {
	page := "intro\n\n```yaml\nfoo: 1\n```\n\n<!-- not-a-document: -->\n```yaml\nfoo: 1\n```\n\n" +
		"<!-- not-a-document: a fragment -->\n\n```yaml\n  - broken: [\n```\n\n<!-- yaml: server-config -->\n```yaml\nlisten: 127.0.0.1:1\n```\n\n" +
		"- an item:\n\n  ```yaml\n  command: echo hi\n  environment: {image: x}\n  compute: azureml:cpu\n  ```\n"
	blocks := yamlBlocks("page.md", page)
	if len(blocks) != 5 {
		t.Fatalf("%d blocks: %+v", len(blocks), blocks)
	}
	for i, wantErr := range []bool{true, true, false, false, false} {
		err := decodeYAMLBlock(blocks[i], nil)
		if (err != nil) != wantErr {
			t.Errorf("block %d (line %d): err %v, want an error: %v", i, blocks[i].line, err, wantErr)
		}
	}
	// A fenced block's indentation is removed and its line is its first.
	if blocks[4].text != "command: echo hi\nenvironment: {image: x}\ncompute: azureml:cpu\n" || blocks[4].line != 26 {
		t.Errorf("indented block: line %d, %q", blocks[4].line, blocks[4].text)
	}
}

// inlineDocComponents puts in doc's steps (prefix is doc's path) the
// component blocks of the page their component: or trial: files name,
// as the CLI inlines files, a pipeline component's own steps too.
func inlineDocComponents(doc map[string]any, components map[string]map[string]any, prefix string, depth int) error {
	if depth > 8 {
		return fmt.Errorf("%s: pipeline components nest too deep", prefix)
	}
	jobs, _ := doc["jobs"].(map[string]any)
	for name, v := range jobs {
		step, _ := v.(map[string]any)
		for _, key := range []string{"component", "trial"} {
			ref, _ := step[key].(string)
			if ref == "" || strings.HasPrefix(ref, "azureml:") {
				continue
			}
			comp, ok := components[filepath.Clean(strings.TrimPrefix(ref, "file:"))]
			if !ok {
				return fmt.Errorf("%sjobs.%s.%s: no component block of this page is marked <!-- file: %s -->", prefix, name, key, ref)
			}
			c := map[string]any{}
			for k, v := range comp {
				c[k] = v
			}
			if c["type"] == "pipeline" {
				if err := inlineDocComponents(c, components, prefix+"jobs."+name+"."+key+".", depth+1); err != nil {
					return err
				}
			}
			step[key] = c
		}
	}
	return nil
}
