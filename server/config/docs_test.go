package config_test

import (
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/server/config"
)

// yamlKeys returns every key a type reads from YAML, recursively, as
// "parent.key" paths (lists and maps of structs included).
func yamlKeys(t reflect.Type, prefix string, seen map[reflect.Type]bool, out map[string]string) {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Map {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || seen[t] {
		return
	}
	seen[t] = true
	defer delete(seen, t)
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if name == "-" || !f.IsExported() {
			continue
		}
		if name == "" {
			if f.Anonymous {
				yamlKeys(f.Type, prefix, seen, out)
			}
			continue
		}
		out[name] = prefix + name
		yamlKeys(f.Type, prefix+name+".", seen, out)
	}
}

// Every key of the server config is documented: on the server
// configuration page, or in the guide that page links for it (the keys of
// an ssh pool's hosts and of a Slurm partition live in their guides).
func TestEveryConfigKeyIsDocumented(t *testing.T) {
	var docs strings.Builder
	for _, pattern := range []string{"../../docs/reference/server-configuration.md", "../../docs/guides/*.md"} {
		files, err := filepath.Glob(pattern)
		if err != nil || len(files) == 0 {
			t.Fatalf("%s: %v (no files)", pattern, err)
		}
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			docs.Write(b)
		}
	}
	keys := map[string]string{}
	yamlKeys(reflect.TypeFor[config.Config](), "", map[reflect.Type]bool{}, keys)
	if len(keys) < 20 {
		t.Fatalf("only %d keys found in config.Config: the walk is broken", len(keys))
	}
	for key, path := range keys {
		if !regexp.MustCompile(`(^|[^a-z_])` + regexp.QuoteMeta(key) + `:`).MatchString(docs.String()) {
			t.Errorf("server config key %s (%s:) is in no example of docs/reference/server-configuration.md or docs/guides/", path, key)
		}
	}
}
