// Package clientconfig reads and writes the CLI's configuration file,
// ~/.config/shoal/config.yaml: which server to call, with which token, the
// CA its HTTPS certificate comes from, and the default workspace.
// SHOAL_SERVER, SHOAL_TOKEN, SHOAL_CA_FILE (a PEM file) and SHOAL_WORKSPACE
// override the file.
package clientconfig

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"gopkg.in/yaml.v3"
)

// Config is the client configuration.
type Config struct {
	// Server is the base URL of the Shoal server.
	Server string `yaml:"server"`
	// Token is the API token sent as a bearer token.
	Token string `yaml:"token"`
	// CACert is the PEM of the CA the server's HTTPS certificate comes
	// from, when not a system root (a server started with --tls).
	CACert string `yaml:"ca_cert,omitempty"`
	// Workspace is the default workspace (default "default").
	Workspace string `yaml:"workspace,omitempty"`
	// WrittenByServer marks a file that `shoal server` wrote for the local
	// user; such a file is refreshed when a server starts with a new data
	// directory, while one written by `shoal login` is never touched.
	WrittenByServer bool `yaml:"written_by_server,omitempty"`
}

// DefaultPath returns $XDG_CONFIG_HOME/shoal/config.yaml (~/.config/shoal/config.yaml).
func DefaultPath() (string, error) {
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "shoal", "config.yaml"), nil
}

// Load reads the file at path; a missing file gives an empty config.
func Load(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return &Config{}, nil
	} else if err != nil {
		return nil, err
	}
	var c Config
	if err := yaml.Unmarshal(data, &c); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &c, nil
}

// Save writes c to path with mode 0600 (it holds a token), atomically.
func Save(path string, c *Config) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	data, err := yaml.Marshal(c)
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// ApplyEnv overrides fields from SHOAL_SERVER, SHOAL_TOKEN and SHOAL_WORKSPACE.
func (c *Config) ApplyEnv() {
	if v := os.Getenv("SHOAL_SERVER"); v != "" {
		c.Server = v
	}
	if v := os.Getenv("SHOAL_TOKEN"); v != "" {
		c.Token = v
	}
	if v := os.Getenv("SHOAL_CA_FILE"); v != "" {
		if b, err := os.ReadFile(v); err == nil {
			c.CACert = string(b)
		}
	}
	if v := os.Getenv("SHOAL_WORKSPACE"); v != "" {
		c.Workspace = v
	}
}
