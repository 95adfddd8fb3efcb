// Package config reads the server's YAML configuration file and turns it,
// together with the built-in defaults, into the catalog of locations and
// sizes the server uses. Every key is optional: with no file at all the
// server has one location, `local`, that also answers to Azure's region names.
package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/shoal-ml/shoal/domain/asset"
	"github.com/shoal-ml/shoal/domain/catalog"
	"gopkg.in/yaml.v3"
)

// DefaultListen is the address the server listens on by default.
const DefaultListen = "127.0.0.1:7420"

// Config is the server configuration file.
type Config struct {
	// Listen is the HTTP listen address (flag --listen overrides it).
	Listen string `yaml:"listen"`
	// AppsListen is the address of the second listener, which serves
	// instances' applications (Jupyter, custom ones) on an origin of their
	// own, so that their pages' scripts cannot read the studio or call the
	// API as the viewer (flag --apps-listen overrides it). Default: the
	// host of Listen with a port the system picks ("<host>:0"). It serves
	// HTTPS when the API does, with the same certificate.
	AppsListen string `yaml:"apps_listen"`
	// DataDir holds the database, the files and the server's keys (flag
	// --data-dir overrides it); mode 0700, its files 0600.
	DataDir string `yaml:"data_dir"`
	// NodesDir holds the work dirs of the local provider's nodes (flag
	// --nodes-dir overrides it). Default: <data_dir>/nodes when the server
	// does not run as root; as root, where work that runs as other
	// accounts can reach its folders and nothing of the server's:
	// /var/lib/shoal-nodes/<data dir's name>-<hash>.
	NodesDir string `yaml:"nodes_dir"`
	// Store is where Shoal keeps its state: sqlite:///path/to/shoal.db or
	// postgres://user:password@host:5432/database (flag --store overrides
	// it). Default: SQLite in the data dir.
	Store string `yaml:"store"`
	// SecretsKeyFile holds the key that encrypts the workload token signing
	// keys in the store (32 random bytes, base64, mode 0600). It is created
	// on first start when missing. Servers sharing a PostgreSQL store must
	// each be given the same file. Default <data-dir>/keys/workload.key.
	SecretsKeyFile string `yaml:"secrets_key_file"`
	// LeaderLease is the lease of the server that runs the controllers
	// when several share a PostgreSQL store; its work moves to another
	// within about LeaderLease * 4/3 of its loss. Default 6s.
	LeaderLease Duration `yaml:"leader_lease"`
	// DefaultLocation is the location of new workspaces. Default: the first location.
	DefaultLocation string `yaml:"default_location"`
	// AzureRegionAliases makes every Azure region name that no location
	// claims an alias of the default location, so Azure YAML runs unchanged.
	// Default true.
	AzureRegionAliases *bool `yaml:"azure_region_aliases"`
	// Locations are the pools of capacity. Default: one `local` location.
	Locations []LocationConfig `yaml:"locations"`
	// Sizes add to (or replace, by name) the built-in Azure VM sizes.
	Sizes []SizeConfig `yaml:"sizes"`
	// NodeLease is how long a node's lease lasts without a heartbeat, and
	// NodeLeaseGrace the grace after it; their sum bounds how long a lost
	// node goes unnoticed. Defaults 10s and 10s.
	NodeLease      Duration `yaml:"node_lease"`
	NodeLeaseGrace Duration `yaml:"node_lease_grace"`
	// MaxHeartbeatsPerSecond is the agents' syncs a second a lease is
	// sized for: a fleet larger than node_lease/3 × it is given a longer
	// lease, so that its syncs stay at this rate (and a lost node is
	// noticed later). Nil is the default, 1,000 (decide/nodelease).
	MaxHeartbeatsPerSecond *float64 `yaml:"max_heartbeats_per_second"`
	// KillGrace is the time between SIGTERM and SIGKILL when a job is
	// stopped (timeout, cancel, preemption). Default 10s.
	KillGrace Duration `yaml:"kill_grace"`
	// NodeDirRetention is how long the local provider keeps a released
	// cluster node's folder (its agent.log, what its jobs left) before
	// removing it; nil means an hour, 0 removes it at release. An
	// instance's folder is its home, kept until the instance is deleted.
	NodeDirRetention *Duration `yaml:"node_dir_retention"`
	// GPUSampleInterval is how often a node with GPUs records their
	// utilisation in the events of the job it runs. Default 1m.
	GPUSampleInterval Duration `yaml:"gpu_sample_interval"`
	// AgentOrphanTimeout is how long a node's agent with nothing running
	// waits for an absent server before it exits (the results it holds
	// stay in its work dir). Default 15m.
	AgentOrphanTimeout Duration `yaml:"agent_orphan_timeout"`
	// Instances is the policy on compute instances.
	Instances InstancesConfig `yaml:"instances"`
	// Notifications: mail, webhooks' URL policy and the watchers'
	// thresholds (NotificationPolicy checks it).
	Notifications NotificationsConfig `yaml:"notifications"`
	// AdvertiseURL is the URL agents use to reach the server; default the
	// listen address.
	AdvertiseURL string `yaml:"advertise_url"`
	// MetricsPublic serves /metrics without authentication (for a
	// Prometheus that scrapes without a token); default false.
	MetricsPublic bool `yaml:"metrics_public"`
	// OIDC, when set, lets people sign in to the studio with an OpenID
	// Connect provider (users are linked with `shoal user create
	// --oidc-issuer --oidc-subject`).
	OIDC *OIDCConfig `yaml:"oidc"`
	// CuratedEnvironments maps Azure's curated environment names to
	// images the operator provides, so that jobs written for Azure
	// (environment: azureml:AzureML-sklearn-1.0-ubuntu20.04-py38-cpu@latest,
	// azureml://registries/azureml/environments/sklearn-1.5/labels/latest)
	// run unchanged: a key is a name (every version) or name:version, a
	// value an image reference. A job naming an unmapped curated name is
	// refused at submit with the lines to add here.
	CuratedEnvironments map[string]string `yaml:"curated_environments"`
}

// OIDCConfig names the studio's OpenID Connect provider.
type OIDCConfig struct {
	Issuer       string `yaml:"issuer"`
	ClientID     string `yaml:"client_id"`
	ClientSecret string `yaml:"client_secret"`
	// RedirectURL is the callback registered with the provider; default
	// <advertise URL>/signin/oidc/callback.
	RedirectURL string `yaml:"redirect_url"`
	// DisplayName names the provider on the sign-in page (default "OIDC").
	DisplayName string `yaml:"display_name"`
}

// Validate checks the OIDC settings.
func (o *OIDCConfig) Validate() error {
	if o.Issuer == "" {
		return fmt.Errorf("oidc.issuer: is required (the provider's issuer URL)")
	}
	if o.ClientID == "" {
		return fmt.Errorf("oidc.client_id: is required")
	}
	return nil
}

// LocationConfig configures one location.
type LocationConfig struct {
	Name     string   `yaml:"name"`
	Provider string   `yaml:"provider"`
	Aliases  []string `yaml:"aliases"`
	// EmulatedGPUs declares GPUs for testing on a host without them: GPU
	// sizes are accepted and their jobs see the GPU count but no device.
	EmulatedGPUs bool `yaml:"emulated_gpus"`
	// ProvisioningDelay mimics a cloud's node start-up time (e.g. "3m").
	ProvisioningDelay Duration `yaml:"provisioning_delay"`
	// Sizes restricts the sizes offered here; empty offers all.
	Sizes []string `yaml:"sizes"`
	// PreemptionRatePerHour preempts low-priority nodes at random at this
	// average rate per node-hour, to rehearse preemption (0: never).
	PreemptionRatePerHour float64     `yaml:"preemption_rate_per_hour"`
	Quota                 QuotaConfig `yaml:"quota"`
	// Containers says whether the location's hosts run jobs' ranks in
	// containers: required (every job names an image), optional (the
	// default: image jobs in containers, the rest on the host) or off.
	Containers string `yaml:"containers"`
	// InstanceImage is the image a compute instance of this location runs
	// in (one container per instance) on a host with a container runtime,
	// unless containers is off; empty: instances run as host processes.
	// images/instance/Containerfile builds the default one.
	InstanceImage string `yaml:"instance_image"`
	// AppBindMountsAllowed are host paths under which an instance's
	// custom application may bind-mount a source beyond the instance's
	// own home (absolute; a path and everything below it).
	AppBindMountsAllowed []string `yaml:"app_bind_mounts_allowed"`
	// Hosts and KnownHosts back a location with provider: ssh — a static
	// pool of machines reached over SSH, whose keys known_hosts lists.
	Hosts      []SSHHostConfig `yaml:"hosts"`
	KnownHosts string          `yaml:"known_hosts"`
	// Slurm backs a location with provider: slurm — nodes are pilot jobs
	// on an existing Slurm cluster.
	Slurm *SlurmConfig `yaml:"slurm"`
	// Kubernetes backs a location with provider: kubernetes — nodes are
	// pods in a namespace of an existing cluster.
	Kubernetes *KubernetesConfig `yaml:"kubernetes"`
}

// SlurmConfig is where and how an slurm location submits its pilot jobs.
type SlurmConfig struct {
	// Partition and Account are sbatch's --partition and --account.
	Partition string `yaml:"partition"`
	Account   string `yaml:"account"`
	// TimeLimit is each pilot's --time ("1-00:00:00"); empty for the
	// partition's default.
	TimeLimit string `yaml:"time_limit"`
	// Conf is the slurm.conf the commands use (SLURM_CONF); empty for
	// Slurm's default.
	Conf string `yaml:"conf"`
	// AgentBinary is the shoal binary's path as the compute nodes see it;
	// default the server's own (a shared filesystem).
	AgentBinary string `yaml:"agent_binary"`
	// WorkDir holds the pilots' work dirs as the compute nodes see it;
	// default ~/.shoal/slurm.
	WorkDir string `yaml:"work_dir"`
	// SbatchArgs are passed to sbatch as they are (["--qos=low"]).
	SbatchArgs []string `yaml:"sbatch_args"`
}

// SSHHostConfig is a machine of an ssh location's pool.
type SSHHostConfig struct {
	Address      string  `yaml:"address"`
	Port         int     `yaml:"port"`
	User         string  `yaml:"user"`
	IdentityFile string  `yaml:"identity_file"`
	VCPUs        int     `yaml:"vcpus"`
	MemoryGB     float64 `yaml:"memory_gb"`
	// GPUs is a number, or "auto" to ask the host's nvidia-smi.
	GPUs     GPUCount          `yaml:"gpus"`
	GPUModel string            `yaml:"gpu_model"`
	Labels   map[string]string `yaml:"labels"`
	// RemoteDir holds the shoal binary and the nodes' work dirs on the
	// host; default ~/.shoal.
	RemoteDir string `yaml:"remote_dir"`
	// PowerOnCommand and PowerOffCommand run on the server to power the
	// host on before its first node and off after its last.
	PowerOnCommand  string `yaml:"power_on_command"`
	PowerOffCommand string `yaml:"power_off_command"`
}

// GPUCount is a host's GPUs: a number, or "auto" (Auto) to detect them
// with nvidia-smi.
type GPUCount struct {
	N    int
	Auto bool
}

// UnmarshalYAML reads 8 or "auto".
func (g *GPUCount) UnmarshalYAML(n *yaml.Node) error {
	var v int
	if err := n.Decode(&v); err == nil {
		if v < 0 {
			return fmt.Errorf("line %d: gpus must be 0 or more, or auto", n.Line)
		}
		*g = GPUCount{N: v}
		return nil
	}
	var s string
	if err := n.Decode(&s); err != nil || s != "auto" {
		return fmt.Errorf("line %d: gpus must be a number or auto (detect with nvidia-smi)", n.Line)
	}
	*g = GPUCount{Auto: true}
	return nil
}

// QuotaConfig sets a location's vCPU limits; absent keys keep the defaults
// and -1 means unlimited.
type QuotaConfig struct {
	TotalDedicatedVCPUs         *int           `yaml:"total_dedicated_vcpus"`
	LowPriorityVCPUs            *int           `yaml:"low_priority_vcpus"`
	DefaultFamilyDedicatedVCPUs *int           `yaml:"default_family_dedicated_vcpus"`
	DedicatedVCPUsPerFamily     map[string]int `yaml:"dedicated_vcpus_per_family"`
}

// SizeConfig defines a VM size, e.g. a lab's own machine type.
type SizeConfig struct {
	Name                    string   `yaml:"name"`
	Family                  string   `yaml:"family"`
	VCPUs                   int      `yaml:"vcpus"`
	MemoryGB                float64  `yaml:"memory_gb"`
	GPUs                    int      `yaml:"gpus"`
	GPUModel                string   `yaml:"gpu_model"`
	LowPriorityCapable      *bool    `yaml:"low_priority_capable"`
	SupportedComputeTypes   []string `yaml:"supported_compute_types"`
	PricePerHour            float64  `yaml:"price_per_hour"`
	LowPriorityPricePerHour float64  `yaml:"low_priority_price_per_hour"`
}

// Duration is a time.Duration written as "90s", "3m" or a number of seconds.
type Duration time.Duration

// UnmarshalYAML reads "3m" or 180.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	var secs int64
	if err := n.Decode(&secs); err == nil {
		if secs < 0 || secs > int64(math.MaxInt64/time.Second) {
			return fmt.Errorf("line %d: %d is not a duration such as 90s or 3m (0 or more seconds)", n.Line, secs)
		}
		*d = Duration(time.Duration(secs) * time.Second)
		return nil
	}
	var s string
	if err := n.Decode(&s); err != nil {
		return fmt.Errorf("line %d: a duration such as 90s or 3m is required", n.Line)
	}
	v, err := time.ParseDuration(s)
	if err != nil || v < 0 {
		return fmt.Errorf("line %d: %q is not a duration such as 90s or 3m", n.Line, s)
	}
	*d = Duration(v)
	return nil
}

// Load reads the config file at path; an empty path gives the defaults.
func Load(path string) (*Config, error) {
	if path == "" {
		return &Config{}, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	defer f.Close()
	cfg, err := Parse(f)
	if err != nil {
		return nil, fmt.Errorf("config %s: %w", path, err)
	}
	return cfg, nil
}

// Parse decodes a config document strictly: unknown keys are errors.
func Parse(r io.Reader) (*Config, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	cfg := &Config{}
	if len(bytes.TrimSpace(data)) == 0 {
		return cfg, nil
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(cfg); err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	if err := asset.ValidateCuratedEnvironments(cfg.CuratedEnvironments); err != nil {
		return nil, err
	}
	if r := cfg.MaxHeartbeatsPerSecond; r != nil && (!(*r > 0) || math.IsInf(*r, 0)) {
		return nil, fmt.Errorf("max_heartbeats_per_second: must be a positive, finite number of syncs a second (the default is 1000), not %v", *r)
	}
	return cfg, nil
}

// HeartbeatRate is max_heartbeats_per_second, or 0 (the services'
// default) when the config sets none.
func (c *Config) HeartbeatRate() float64 {
	if c.MaxHeartbeatsPerSecond == nil {
		return 0
	}
	return *c.MaxHeartbeatsPerSecond
}

// GPUDetector reports the GPUs a provider finds on its hosts; it lets the
// catalog say why a location has none.
type GPUDetector func(provider string) (count int, detail string)

// Catalog builds the catalog from the built-in sizes and this config.
func (c *Config) Catalog(detect GPUDetector) (*catalog.Catalog, error) {
	sizes := catalog.BuiltinSizes()
	for i, sc := range c.Sizes {
		s, err := sc.size()
		if err != nil {
			return nil, fmt.Errorf("sizes[%d]: %w", i, err)
		}
		sizes = append(sizes, s)
	}
	locCfgs := c.Locations
	if len(locCfgs) == 0 {
		locCfgs = []LocationConfig{{Name: "local", Provider: "local"}}
	}
	var locs []*catalog.Location
	for i, lc := range locCfgs {
		l, err := lc.location(detect)
		if err != nil {
			return nil, fmt.Errorf("locations[%d]: %w", i, err)
		}
		if l.Kubernetes != nil {
			sizes = append(sizes, lc.Kubernetes.instanceTypeSizes(l)...)
		}
		locs = append(locs, l)
	}
	def := c.DefaultLocation
	if def == "" {
		def = locs[0].Name
	}
	if c.AzureRegionAliases == nil || *c.AzureRegionAliases {
		addRegionAliases(locs, def)
	}
	return catalog.NewCatalog(locs, sizes, def)
}

// addRegionAliases gives the default location every Azure region name that
// no location uses already.
func addRegionAliases(locs []*catalog.Location, def string) {
	used := map[string]bool{}
	var target *catalog.Location
	for _, l := range locs {
		used[strings.ToLower(l.Name)] = true
		for _, a := range l.Aliases {
			used[strings.ToLower(a)] = true
			if strings.EqualFold(a, def) && target == nil {
				target = l // default_location may name a location by an alias
			}
		}
		if strings.EqualFold(l.Name, def) {
			target = l
		}
	}
	if target == nil {
		return
	}
	for _, r := range catalog.AzureRegionNames() {
		if !used[r] {
			target.Aliases = append(target.Aliases, r)
		}
	}
}

// locationNameRE is what a location's name may be.
var locationNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`)

func (lc LocationConfig) location(detect GPUDetector) (*catalog.Location, error) {
	if lc.Name == "" {
		return nil, errors.New("name is required")
	}
	if !locationNameRE.MatchString(lc.Name) {
		// Names are looked up trimmed and case-insensitively, in URLs and
		// YAML: a name with spaces or punctuation could never be found.
		return nil, fmt.Errorf("name %q: a location name is 1 to 64 letters, digits, '-', '_' or '.', starting with a letter or digit", lc.Name)
	}
	for i, a := range lc.Aliases {
		if !locationNameRE.MatchString(a) {
			return nil, fmt.Errorf("aliases[%d] %q: an alias is 1 to 64 letters, digits, '-', '_' or '.', starting with a letter or digit", i, a)
		}
	}
	if lc.Provider == "" {
		lc.Provider = "local"
	}
	if lc.Provider != "ssh" && (len(lc.Hosts) > 0 || lc.KnownHosts != "") {
		return nil, errors.New("hosts and known_hosts belong to provider: ssh")
	}
	if lc.Provider != "slurm" && lc.Slurm != nil {
		return nil, errors.New("slurm settings belong to provider: slurm")
	}
	if lc.Provider != "kubernetes" && lc.Kubernetes != nil {
		return nil, errors.New("kubernetes settings belong to provider: kubernetes")
	}
	switch lc.Provider {
	case "local", "static":
	case "kubernetes":
		if err := lc.Kubernetes.check(); err != nil {
			return nil, err
		}
	case "slurm":
		if lc.Slurm == nil {
			lc.Slurm = &SlurmConfig{} // the cluster's default partition
		}
	case "ssh":
		if len(lc.Hosts) == 0 || lc.KnownHosts == "" {
			return nil, errors.New("provider ssh needs hosts (address, user, identity_file, vcpus) and known_hosts")
		}
		for i, h := range lc.Hosts {
			if h.Address == "" || h.User == "" || h.IdentityFile == "" || h.VCPUs <= 0 {
				return nil, fmt.Errorf("hosts[%d]: address, user, identity_file and vcpus are required", i)
			}
		}
	default:
		return nil, fmt.Errorf("provider %q is not one of local, ssh, slurm, kubernetes, static", lc.Provider)
	}
	q := catalog.DefaultQuotaLimits()
	if v := lc.Quota.TotalDedicatedVCPUs; v != nil {
		q.TotalDedicatedVCPUs = *v
	}
	if v := lc.Quota.LowPriorityVCPUs; v != nil {
		q.LowPriorityVCPUs = *v
	}
	if v := lc.Quota.DefaultFamilyDedicatedVCPUs; v != nil {
		q.DefaultFamilyDedicatedVCPUs = *v
	}
	q.DedicatedVCPUsPerFamily = lc.Quota.DedicatedVCPUsPerFamily
	l := &catalog.Location{
		Name: lc.Name, Provider: lc.Provider, Aliases: append([]string(nil), lc.Aliases...),
		Quota: q, ProvisioningDelay: time.Duration(lc.ProvisioningDelay), Sizes: lc.Sizes,
		PreemptionRatePerHour: lc.PreemptionRatePerHour, InstanceImage: lc.InstanceImage,
	}
	if lc.Provider == "kubernetes" {
		k, err := lc.Kubernetes.location()
		if err != nil {
			return nil, err
		}
		l.Kubernetes = k
	}
	if lc.PreemptionRatePerHour < 0 {
		return nil, fmt.Errorf("preemption_rate_per_hour must be 0 or more")
	}
	switch lc.Containers {
	case "":
		l.Containers = catalog.ContainersOptional
	case catalog.ContainersRequired, catalog.ContainersOptional, catalog.ContainersOff:
		l.Containers = lc.Containers
	default:
		return nil, fmt.Errorf("containers %q: must be one of required, optional (the default), off", lc.Containers)
	}
	allowed, err := bindMountsAllowed(lc.AppBindMountsAllowed)
	if err != nil {
		return nil, err
	}
	l.AppBindMountsAllowed = allowed
	if lc.Kubernetes != nil {
		// Each node is a pod of one image; gangs are admitted whole.
		l.NodeImage = lc.Kubernetes.NodeImage
		l.GangTimeout, l.GangBackoff = lc.Kubernetes.gang()
	}
	switch {
	case lc.EmulatedGPUs:
		l.GPUs = catalog.GPUCapability{Available: true, Emulated: true, Detail: "GPUs are emulated for testing (emulated_gpus: true)"}
	case lc.Provider == "slurm":
		l.GPUs = catalog.GPUCapability{Available: true, Detail: "GPU sizes ask Slurm for --gres=gpu:N; Slurm refuses a pilot its partition cannot hold"}
	case lc.Provider == "kubernetes":
		l.GPUs = catalog.GPUCapability{Available: true, Detail: "GPU sizes ask Kubernetes for nvidia.com/gpu; a pod no node can hold stays Pending with Kubernetes' reason"}
	case lc.Provider == "static":
		l.GPUs = catalog.GPUCapability{Available: true, Detail: "nodes joined by hand bring their own GPUs"}
	case lc.Provider == "ssh":
		gpus, auto := 0, 0
		for _, h := range lc.Hosts {
			gpus += h.GPUs.N
			if h.GPUs.Auto {
				auto++
			}
		}
		detail := fmt.Sprintf("%d GPU(s) declared on the pool's hosts", gpus)
		if auto > 0 {
			detail += fmt.Sprintf(", and %d host(s) asked with nvidia-smi (gpus: auto)", auto)
		}
		l.GPUs = catalog.GPUCapability{Available: gpus > 0 || auto > 0, Detail: detail}
	case detect != nil:
		n, detail := detect(lc.Provider)
		l.GPUs = catalog.GPUCapability{Available: n > 0, Detail: detail}
	}
	return l, nil
}

func (sc SizeConfig) size() (*catalog.Size, error) {
	switch {
	case sc.Name == "":
		return nil, errors.New("name is required")
	case sc.VCPUs <= 0:
		return nil, fmt.Errorf("size %q: vcpus must be 1 or more", sc.Name)
	case sc.MemoryGB <= 0:
		return nil, fmt.Errorf("size %q: memory_gb must be more than 0", sc.Name)
	case sc.GPUs < 0:
		return nil, fmt.Errorf("size %q: gpus must be 0 or more", sc.Name)
	}
	s := &catalog.Size{
		Name: sc.Name, Family: sc.Family, VCPUs: sc.VCPUs, MemoryGB: sc.MemoryGB,
		GPUs: sc.GPUs, GPUModel: sc.GPUModel, LowPriorityCapable: true,
		SupportedComputeTypes: sc.SupportedComputeTypes,
		PricePerHour:          sc.PricePerHour, LowPriorityPricePerHour: sc.LowPriorityPricePerHour,
		OSVhdSizeMB: 1047552,
	}
	if s.Family == "" {
		s.Family = "custom" + sc.Name + "Family"
	}
	if sc.LowPriorityCapable != nil {
		s.LowPriorityCapable = *sc.LowPriorityCapable
	}
	if len(s.SupportedComputeTypes) == 0 {
		s.SupportedComputeTypes = []string{"AmlCompute", "ComputeInstance"}
	}
	if s.GPUs > 0 && s.GPUModel == "" {
		s.GPUModel = "GPU"
	}
	return s, nil
}
