// Package app wires a Shoal server together: configuration, store,
// services, HTTP API and controllers. cmd/shoal runs it; end-to-end tests
// start it on port 0 with a temporary data directory.
package app

import (
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/shoal-ml/shoal/api"
	"github.com/shoal-ml/shoal/cli/clientconfig"
	"github.com/shoal-ml/shoal/control"
	"github.com/shoal-ml/shoal/control/leader"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/internal/sealing"
	"github.com/shoal-ml/shoal/internal/workload"
	"github.com/shoal-ml/shoal/provider/local"
	"github.com/shoal-ml/shoal/provider/slurm"
	"github.com/shoal-ml/shoal/provider/sshpool"
	"github.com/shoal-ml/shoal/provider/static"
	"github.com/shoal-ml/shoal/server/config"
	"github.com/shoal-ml/shoal/server/metrics"
	"github.com/shoal-ml/shoal/service"
	"github.com/shoal-ml/shoal/service/computes"
	storekind "github.com/shoal-ml/shoal/store"
	"github.com/shoal-ml/shoal/store/filestore"
	"github.com/shoal-ml/shoal/store/live"
	"github.com/shoal-ml/shoal/store/postgres"
	"github.com/shoal-ml/shoal/store/sqlstore/txobserve"
)

// Options configure a server. Flags override the config file, which
// overrides the built-in defaults.
type Options struct {
	// Listen is the HTTP address; "" means the config's or 127.0.0.1:7420.
	Listen string
	// AppsListen is the address of the applications' own origin; ""
	// means the config's, else Listen's host with a port the system picks.
	AppsListen string
	// DataDir holds the database; "" means the config's or ~/.local/share/shoal.
	DataDir string
	// NodesDir holds the local provider's nodes' work dirs; "" means the
	// config's, else the default (see config.Config.NodesDir).
	NodesDir string
	// Store is the store's URL (sqlite:///path or postgres://...) as given
	// on the command line (--store): a password in it is refused when the
	// server runs as root (see resolveStore). "" means StoreEnv, else the
	// config's store, else SQLite in the data dir.
	Store string
	// StoreEnv is the value of the SHOAL_STORE environment variable (the
	// caller reads it): the store's URL when Store is "".
	StoreEnv string
	// ConfigPath is the server config YAML; "" means none.
	ConfigPath string
	// ClientConfigPath is where the local user's CLI config is written on
	// first start; "" means ~/.config/shoal/config.yaml, "-" means never.
	ClientConfigPath string
	// Logger receives structured logs; nil discards them.
	Logger *slog.Logger
	// Clock is the time source of the store and controllers.
	Clock core.Clock
	// TickInterval is how often controllers run without a trigger.
	TickInterval time.Duration
	// TLS serves HTTPS with a private CA and certificate made in the data
	// dir on first start; TLSCert and TLSKey serve it with the operator's
	// certificate instead, TLSCA naming the CA bundle clients and agents
	// need when it does not chain to a system root.
	TLS                    bool
	TLSCert, TLSKey, TLSCA string
	// AgentExecutable is the shoal binary the local provider starts as
	// `shoal agent`; "" means this program.
	AgentExecutable string
}

// Main is a running server.
type Main struct {
	opts  Options
	log   *slog.Logger
	store storekind.Store
	files *filestore.Store // nil when files are in the store
	local *local.Provider
	// agentURL is where this server takes agents' calls (advertise_url,
	// else its listener's URL), as it tells the other servers.
	agentURL string
	svc      *service.Services
	ctrl     *control.Controller
	notif    *notifications // the notifier and sender (notifications.go)
	http     *http.Server
	listener net.Listener
	// appsHTTP and appsListener serve instances' applications on their
	// own origin (see api.Server.SetAppsURL).
	appsHTTP     *http.Server
	appsListener net.Listener
	appsOrigin   string
	wake         chan struct{}
	pokes        pokes // what woke the placement loop (passes.go)
	cancel       context.CancelFunc
	wg           sync.WaitGroup
	scheme       string // "http" or "https"
	// tlsConfig serves HTTPS on both listeners; nil over plain HTTP.
	tlsConfig *tls.Config
	caPEM     []byte // the CA clients and agents trust, for HTTPS with a private CA
	// AdminToken is the bootstrap token when this start created it.
	AdminToken string
}

// DefaultDataDir returns $XDG_DATA_HOME/shoal or ~/.local/share/shoal.
func DefaultDataDir() (string, error) {
	if d := os.Getenv("XDG_DATA_HOME"); d != "" {
		return filepath.Join(d, "shoal"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(home, ".local", "share", "shoal"), nil
}

// Start opens the store, bootstraps the first start, starts listening and
// starts the controllers. Call Close to stop.
func Start(ctx context.Context, opts Options) (*Main, error) {
	cfg, err := config.Load(opts.ConfigPath)
	if err != nil {
		return nil, err
	}
	if opts.Listen == "" {
		opts.Listen = cfg.Listen
	}
	if opts.Listen == "" {
		opts.Listen = config.DefaultListen
	}
	if opts.DataDir == "" {
		opts.DataDir = cfg.DataDir
	}
	if opts.DataDir == "" {
		if opts.DataDir, err = DefaultDataDir(); err != nil {
			return nil, err
		}
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Clock == nil {
		opts.Clock = core.SystemClock{}
	}
	// Before anything is written: a password on the command line as root
	// is refused.
	raw, warning, err := resolveStore(opts.Store, opts.StoreEnv, cfg.Store, runsAsRoot())
	if err != nil {
		return nil, err
	}
	if warning != "" {
		opts.Logger.Warn(warning)
	}
	opts.Store = raw
	if opts.TickInterval == 0 {
		opts.TickInterval = 200 * time.Millisecond
	}
	// The collector runs at Go's default (GOGC=100): the heap may grow to
	// twice the live heap. It was 400 while 10,000 agents' parked syncs
	// held a connection's buffers and two goroutines each (a live heap of
	// 240-340 MB, which a lower GOGC marked over and over); with syncs
	// parked off net/http (api.Parking) the live heap at 5,000 nodes is
	// about 30 MB, and GOGC=400 only let the RSS grow to five times that
	// (bench/scale.sh --gogc 400,100 measures both; docs/internals/
	// reliability.md). An operator sets GOGC or GOMEMLIMIT to trade
	// otherwise.
	// This host's GPUs, asked once: the local locations report them and
	// the local provider shares them out between its GPU nodes.
	hostGPUs := -1
	catalog, err := cfg.Catalog(func(provider string) (int, string) {
		n, detail := local.DetectGPUs()
		hostGPUs = n
		return n, detail
	})
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	// Both addresses are taken before the data dir, the store or a key
	// is made: a server that cannot listen leaves nothing behind.
	ln, err := net.Listen("tcp", opts.Listen)
	if err != nil {
		return nil, listenError("--listen", "listen", opts.Listen, err)
	}
	if opts.AppsListen == "" {
		opts.AppsListen = cfg.AppsListen
	}
	appsLn, err := listenApps(opts.AppsListen, opts.Listen)
	if err != nil {
		ln.Close()
		return nil, err
	}
	started := false
	defer func() {
		if !started {
			ln.Close()
			appsLn.Close()
		}
	}()
	if err := secureDataDir(opts.DataDir); err != nil {
		return nil, err
	}
	if opts.NodesDir == "" {
		opts.NodesDir = cfg.NodesDir
	}
	if opts.NodesDir, err = nodesDir(opts.DataDir, opts.NodesDir); err != nil {
		return nil, err
	}
	store, where, err := openStore(ctx, opts.Store, opts.DataDir, opts.Clock, opts.Logger)
	if err != nil {
		return nil, err
	}
	opts.Logger.Info("store opened", "store", where)
	// Files live beside SQLite on this server's disk; with PostgreSQL in
	// the database, where every server sharing it finds them.
	var files storekind.Files
	var disk *filestore.Store
	if pg, ok := store.(*postgres.DB); ok {
		files = pg.Files()
	} else {
		if disk, err = filestore.Open(filepath.Join(opts.DataDir, "files")); err != nil {
			store.Close()
			return nil, err
		}
		files = disk
	}
	m := &Main{opts: opts, log: opts.Logger, store: store, files: disk, wake: make(chan struct{}, 1), listener: ln, appsListener: appsLn, scheme: "http"}
	if ln, m.caPEM, err = m.serveTLS(ln, cfg.AdvertiseURL, appsLn); err != nil {
		m.listener.Close()
		store.Close()
		return nil, err
	}
	m.listener = ln
	if m.tlsConfig != nil {
		m.appsListener = tls.NewListener(appsLn, m.tlsConfig)
	}
	m.appsOrigin = m.appsURL(cfg)
	var agentArgs []string
	if cfg.AgentOrphanTimeout > 0 {
		agentArgs = append(agentArgs, "--orphan-timeout", time.Duration(cfg.AgentOrphanTimeout).String())
	}
	if hostGPUs < 0 {
		hostGPUs, _ = local.DetectGPUs()
	}
	retention := time.Duration(0) // the provider's default
	if r := cfg.NodeDirRetention; r != nil {
		retention = time.Duration(*r)
		if retention <= 0 {
			retention = time.Nanosecond // at release
		}
	}
	m.local = local.New(local.Config{DataDir: opts.DataDir, NodesDir: opts.NodesDir, Executable: opts.AgentExecutable, Logger: opts.Logger, ExtraArgs: agentArgs, GPUs: hostGPUs, NodeDirRetention: retention})
	serverURL := cfg.AdvertiseURL
	if serverURL == "" {
		serverURL = m.URL()
	}
	m.agentURL = serverURL
	var notifyPolicy *config.Notifications
	defSchedules, defIdle, maxIdle, idleMinute, err := cfg.InstancePolicy()
	if err == nil {
		notifyPolicy, err = cfg.NotificationPolicy()
	}
	if err != nil {
		ln.Close()
		store.Close()
		return nil, fmt.Errorf("config: %w", err)
	}
	providers := map[string]node.Provider{"local": m.local}
	for _, lc := range cfg.Locations {
		switch lc.Provider {
		case "static":
			providers[lc.Name] = &static.Provider{Location: lc.Name}
			continue
		case "slurm":
			sc := lc.Slurm
			if sc == nil {
				sc = &config.SlurmConfig{}
			}
			p, err := slurm.New(slurm.Config{Partition: sc.Partition, Account: sc.Account, TimeLimit: sc.TimeLimit,
				SlurmConf: sc.Conf, AgentBinary: cmp.Or(sc.AgentBinary, opts.AgentExecutable), WorkDir: sc.WorkDir,
				ExtraArgs: sc.SbatchArgs, AgentArgs: agentArgs, Logger: opts.Logger})
			if err != nil {
				ln.Close()
				store.Close()
				return nil, fmt.Errorf("config: location %s: %w", lc.Name, err)
			}
			providers[lc.Name] = p
			continue
		case "kubernetes":
			p, err := newKubernetesProvider(lc, agentArgs, opts.Logger)
			if err != nil {
				ln.Close()
				store.Close()
				return nil, fmt.Errorf("config: location %s: %w", lc.Name, err)
			}
			providers[lc.Name] = p
			continue
		case "ssh":
		default:
			continue
		}
		pc := sshpool.Config{KnownHostsFile: lc.KnownHosts, Executable: opts.AgentExecutable, Logger: opts.Logger}
		for _, h := range lc.Hosts {
			pc.Hosts = append(pc.Hosts, sshpool.Host{Address: h.Address, Port: h.Port, User: h.User, IdentityFile: h.IdentityFile,
				VCPUs: h.VCPUs, MemoryGB: h.MemoryGB, GPUs: h.GPUs.N, DetectGPUs: h.GPUs.Auto, GPUModel: h.GPUModel, Labels: h.Labels, RemoteDir: h.RemoteDir,
				PowerOnCommand: h.PowerOnCommand, PowerOffCommand: h.PowerOffCommand})
		}
		p, err := sshpool.New(pc)
		if err != nil {
			ln.Close()
			store.Close()
			return nil, fmt.Errorf("config: location %s: %w", lc.Name, err)
		}
		providers[lc.Name] = p
	}
	// The key sealing the signing keys in the store lives outside it.
	keyFile := cfg.SecretsKeyFile
	if keyFile == "" {
		keyFile = filepath.Join(opts.DataDir, "keys", "workload.key")
	}
	secretsKey, err := sealing.LoadOrCreate(keyFile)
	if err != nil {
		ln.Close()
		store.Close()
		return nil, fmt.Errorf("secrets_key_file: %w", err)
	}
	// Servers sharing a PostgreSQL store must seal with one key: a second
	// server that makes its own retries its start forever. Say at every
	// start where the key is and how another server uses it.
	opts.Logger.Info("secrets key: every server sharing this store needs this same file; copy it (mode 0600) to each and set secrets_key_file: <its path> in their --config",
		slog.String("secrets_key_file", keyFile))
	// Replicas on one PostgreSQL database forward agents' wake-ups to
	// each other: an agent long-polls whichever replica it reached.
	var wakes *postgres.Wakes
	var svcWakes live.Wakes
	var servers func(context.Context) []string
	if pg, ok := store.(*postgres.DB); ok {
		wakes = pg.NewWakes()
		svcWakes = wakes
		// A server is listed while it reports itself (every third of
		// the leader lease), with some slack.
		lease := time.Duration(cfg.LeaderLease)
		if lease <= 0 {
			lease = 6 * time.Second
		}
		servers = (&serverList{db: pg, self: serverURL, window: 3 * lease, refresh: 2 * time.Second}).get
	}
	m.svc = service.New(service.Config{
		Wakes:          svcWakes,
		SecretsKey:     secretsKey,
		InstancePolicy: computes.InstancePolicy{DefaultSchedules: defSchedules, DefaultIdleMinutes: defIdle, MaxIdleMinutes: maxIdle},
		IdleMinute:     idleMinute, Clock: opts.Clock,
		Store: store, Catalog: catalog, Logger: opts.Logger, Notify: m.poke, Submitted: m.pokeSubmitted, Changed: m.pokeChanged, Files: files,
		Providers: providers, ServerURL: serverURL, Servers: servers, ServerCA: m.caPEM, PublicURL: m.publicURL(cfg), AppsURL: m.appsOrigin,
		NodeLeaseTTL: time.Duration(cfg.NodeLease), NodeLeaseGrace: time.Duration(cfg.NodeLeaseGrace), MaxHeartbeatsPerSecond: cfg.HeartbeatRate(),
		KillGrace: time.Duration(cfg.KillGrace), GPUSampleInterval: time.Duration(cfg.GPUSampleInterval),
		CuratedEnvironments: cfg.CuratedEnvironments,
	})
	// Workload tokens are signed by keys in the store, rotated daily.
	issuer := workload.New(workload.Config{Keys: m.svc.WorkloadKeys(), Clock: opts.Clock, Issuer: serverURL})
	m.svc.SetWorkload(issuer)
	if err := m.retryStartup(ctx, "workload signing keys", func(ctx context.Context) error {
		if err := m.svc.SealStoredSecrets(ctx); err != nil {
			return err
		}
		return issuer.Rotate(ctx)
	}); err != nil {
		ln.Close()
		store.Close()
		return nil, fmt.Errorf("workload signing keys: %w", err)
	}
	m.ctrl = control.New(m.svc, uint64(opts.Clock.Now().UnixNano()))
	if err := m.bootstrap(ctx); err != nil {
		ln.Close()
		store.Close()
		return nil, err
	}
	// With PostgreSQL several servers may share the store: one of them,
	// elected, runs the controllers (and first takes over the nodes).
	var elector *leader.Elector
	if pg, ok := store.(*postgres.DB); ok {
		elector = leader.New(leader.Config{Lease: pgLease{db: pg, url: m.agentURL}, Name: controllersLease, Holder: m.holderID(),
			TTL: time.Duration(cfg.LeaderLease), Logger: opts.Logger})
	} else {
		// Agents kept running while the server was down: give each a full
		// lease to report back before any is declared lost.
		if err := m.retryStartup(ctx, "reset node leases", m.ctrl.ResetLeases); err != nil {
			ln.Close()
			store.Close()
			return nil, err
		}
		if n, err := m.ctrl.AdoptNodes(ctx); err != nil {
			m.log.Warn("adopting running nodes failed", slog.Any("err", err))
		} else if n > 0 {
			m.log.Info("adopted nodes whose agents kept running", slog.Int("nodes", n))
		}
	}
	if err := m.writeClientConfig(); err != nil {
		m.log.Warn("could not write the client config", slog.Any("err", err))
	}
	apiServer := api.NewServer(m.svc, opts.Logger)
	apiServer.SetReadiness(m.readiness(where, elector))
	met := metrics.New(m.svc)
	m.svc.SetObserver(met)
	apiServer.SetRequestObserver(met.ObserveRequest)
	txobserve.Set(met.ObserveTransaction)
	txobserve.SetWrites(met.ObserveWrite)
	txobserve.SetRetries(met.ObserveRetry)
	m.ctrl.SetPassObserver(func(k control.PassKind, waited, ran time.Duration) { met.ObservePass(string(k), waited, ran) })
	apiServer.SetMetrics(met.Handler(), cfg.MetricsPublic)
	m.notif = newNotifications(notifyPolicy, store, secretsKey, m.publicURL(cfg), met)
	apiServer.SetWebhookPolicy(notifyPolicy.AllowPrivateWebhookURLs, notifyPolicy.AllowHTTPWebhookURLs)
	if err := m.mountStudio(ctx, apiServer, cfg); err != nil {
		ln.Close()
		store.Close()
		return nil, err
	}
	if err := m.watchAlerts(cfg, met, elector); err != nil {
		ln.Close()
		store.Close()
		return nil, err
	}
	m.http = api.NewHTTPServer(withRequestLog(apiServer, opts.Logger), api.DefaultLimits())
	// Agents' syncs wait for news without their connections' buffers
	// (api.Parking): most of the memory of 10,000 nodes otherwise.
	parking := api.NewParking(ln)
	apiServer.SetParking(parking)
	apiServer.SetAppsURL(m.appsOrigin)
	m.appsHTTP = api.NewHTTPServer(withRequestLog(apiServer.AppsHandler(), opts.Logger), api.DefaultLimits())
	runCtx, cancel := context.WithCancel(context.Background())
	m.cancel = cancel
	started = true
	m.wg.Add(3)
	if wakes != nil {
		m.wg.Add(1)
		go func() {
			defer m.wg.Done()
			wakes.Run(runCtx)
		}()
	}
	go func() {
		defer m.wg.Done()
		if err := m.http.Serve(parking); err != nil && !errors.Is(err, http.ErrServerClosed) {
			m.log.Error("http server stopped", slog.Any("err", err))
		}
	}()
	go func() {
		defer m.wg.Done()
		if err := m.appsHTTP.Serve(m.appsListener); err != nil && !errors.Is(err, http.ErrServerClosed) {
			m.log.Error("applications' http server stopped", slog.Any("err", err))
		}
	}()
	go func() {
		defer m.wg.Done()
		if elector != nil {
			m.runAsReplica(runCtx, elector)
			return
		}
		m.runControllers(runCtx)
	}()
	m.log.Info("shoal server started", slog.String("url", m.URL()), slog.String("apps_url", m.appsOrigin), slog.String("data_dir", opts.DataDir), slog.String("nodes_dir", opts.NodesDir))
	if note := LocalIsolation(); !runsAsRoot() {
		m.log.Warn(note)
	}
	return m, nil
}

// bootstrap creates the default workspace and, on the first start, the
// admin token, written to <data-dir>/admin.token with mode 0600.
func (m *Main) bootstrap(ctx context.Context) error {
	// Only the store's part is retried: the token is returned once, by the
	// transaction that creates it.
	var token string
	err := m.retryStartup(ctx, "bootstrap", func(ctx context.Context) (err error) {
		token, err = m.svc.BootstrapAdmin(ctx)
		return err
	})
	if err != nil {
		return fmt.Errorf("bootstrap: %w", err)
	}
	if token == "" {
		return nil
	}
	m.AdminToken = token
	path := filepath.Join(m.opts.DataDir, "admin.token")
	if err := os.WriteFile(path, []byte(token+"\n"), 0o600); err != nil {
		return fmt.Errorf("write admin token: %w", err)
	}
	m.log.Info("created the admin API token", slog.String("path", path))
	return nil
}

// writeClientConfig points the local user's CLI at this server when the
// user has no config yet, or has one this server family wrote earlier.
func (m *Main) writeClientConfig() error {
	path := m.opts.ClientConfigPath
	if path == "-" {
		return nil
	}
	if path == "" {
		var err error
		if path, err = clientconfig.DefaultPath(); err != nil {
			return err
		}
	}
	existing, err := clientconfig.Load(path)
	if err != nil {
		return err
	}
	if existing.Server != "" && !existing.WrittenByServer {
		return nil
	}
	token := m.AdminToken
	if token == "" {
		b, err := os.ReadFile(filepath.Join(m.opts.DataDir, "admin.token"))
		if err != nil {
			return nil // the token file was removed on purpose; leave the config alone
		}
		token = string(trimNL(b))
	}
	if existing.Server == m.URL() && existing.Token == token && existing.CACert == string(m.caPEM) {
		return nil
	}
	return clientconfig.Save(path, &clientconfig.Config{Server: m.URL(), Token: token, CACert: string(m.caPEM), Workspace: existing.Workspace, WrittenByServer: true})
}

func trimNL(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return b
}

// URL is the server's base URL.
func (m *Main) URL() string { return m.scheme + "://" + m.listener.Addr().String() }

// CA returns the PEM of the CA clients must trust (HTTPS with a private
// CA), or nil.
func (m *Main) CA() []byte { return m.caPEM }

// Services returns the domain services (for tests and embedding).
func (m *Main) Services() *service.Services { return m.svc }

// Close stops accepting requests, lets running ones finish (up to 10 s),
// stops the controllers and closes the store.
func (m *Main) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := m.http.Shutdown(ctx)
	if aerr := m.appsHTTP.Shutdown(ctx); err == nil {
		err = aerr
	}
	m.cancel()
	m.wg.Wait()
	m.ctrl.Wait()
	// Agents are left running: nodes outlive a control-plane restart and
	// are adopted by the next start.
	m.local.Close()
	reportRunningAgents(m.log, m.local.RunningAgents())
	if m.files != nil {
		m.files.Close()
	}
	if cerr := m.store.Close(); err == nil {
		err = cerr
	}
	m.log.Info("shoal server stopped")
	return err
}
