// Package wire connects Atrium's adapters to its app services: configuration,
// the database, the blob store, the services and the HTTP server. It is the one
// place that knows every package; the command and the end-to-end tests use it.
package wire

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"path/filepath"
	"time"

	"atrium/app"
	"atrium/app/calendar"
	"atrium/app/contacts"
	"atrium/app/drive"
	"atrium/app/drive/indexer"
	"atrium/app/identity"
	"atrium/app/partner"
	"atrium/app/webhooks"
	"atrium/convert"
	"atrium/hooksend"
	"atrium/imaging"
	"atrium/mail"
	"atrium/storage/blob"
	"atrium/storage/s3blob"
	"atrium/storage/sqldb"
	"atrium/web"
	"atrium/web/presign"
	"atrium/web/tus"
)

// Main is a wired Atrium: the one place that connects the adapters to the app.
type Main struct {
	Config Config
	Log    *slog.Logger
	Clock  app.Clock

	DB *sqldb.DB
	// Blobs hold the drive's objects: the store on local disk under the
	// data directory, or the bucket of [blob] s3_endpoint.
	Blobs blob.Objects
	// Contents are the drive's stored bytes: Blobs' objects and the small
	// contents the database holds.
	Contents drive.Blobs
	Identity *identity.Service
	Partner  *partner.Service
	Contacts *contacts.Service
	Calendar *calendar.Service
	Drive    *drive.Service
	// Search is the drive's search index (started by StartSearch).
	Search *indexer.Indexer
	Tus    *tus.Handler
	Mail   sqldb.MailOutbox
	Server *web.Server

	// Webhooks manages subscriptions; Dispatcher posts their deliveries (started by Serve).
	Webhooks   *webhooks.Service
	Dispatcher *webhooks.Dispatcher

	mailer *mail.Sender // nil without SMTP: mail stays in the outbox
	// serving: opened for the server (Serving).
	serving bool

	http     *http.Server
	listener net.Listener
	// metricsHTTP serves /metrics alone on [metrics] listen (nil when unset).
	metricsHTTP     *http.Server
	metricsListener net.Listener
	// stopSearch ends the indexer started by StartSearch.
	stopSearch context.CancelFunc
	// drain takes the node out of the balancer's rotation at shutdown: it
	// counts the requests in flight and fails readiness (Serve).
	drain web.Drain
}

// NewLogger makes the slog logger the configuration asks for.
func NewLogger(cfg Config, w io.Writer) *slog.Logger {
	lvl := map[string]slog.Level{"debug": slog.LevelDebug, "info": slog.LevelInfo, "warn": slog.LevelWarn, "error": slog.LevelError}[cfg.Log.Level]
	opts := &slog.HandlerOptions{Level: lvl}
	if cfg.Log.Format == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// Option adjusts how Open wires Atrium (tests inject a clock).
type Option func(*Main)

// WithClock makes every service use clock.
func WithClock(clock app.Clock) Option { return func(m *Main) { m.Clock = clock } }

// Serving opens the data directory for the server (atrium serve): Open then
// also fits the database to the server's configuration where only the server
// reads it — the index of the archive tier's scan of cold files, built when
// [drive] archive_after is set and dropped when not. A command that works on
// the data directory beside a running server (bootstrap, token, mail) opens
// without it, so that its own configuration (one without the server's
// archive_after, say) does not drop an index the server scans with.
func Serving() Option { return func(m *Main) { m.serving = true } }

// Open opens the data directory: the database (migrated), the blob store and the
// services. It does not listen.
func Open(ctx context.Context, cfg Config, log *slog.Logger, opts ...Option) (*Main, error) {
	m := &Main{Config: cfg, Log: log}
	for _, o := range opts {
		o(m)
	}
	if err := os.MkdirAll(cfg.Data, 0o700); err != nil {
		return nil, fmt.Errorf("create data dir: %w", err)
	}
	db, err := OpenDatabase(ctx, cfg, log)
	if err != nil {
		return nil, err
	}
	db.Clock = m.Clock
	m.DB = db
	// The archive tier's scan of cold files has an index only while a server
	// runs it.
	if m.serving {
		archiving := cfg.Drive.ArchiveAfter > 0
		if changed, err := db.ColdScanIndex(ctx, archiving); err != nil {
			m.Close()
			return nil, err
		} else if changed {
			log.Info("drive: index of cold files for the archive tier", "built", archiving, "archive_after", cfg.Drive.ArchiveAfter.String())
		}
	}
	archive, err := openBlobs(ctx, m, cfg)
	if err != nil {
		m.Close()
		return nil, err
	}
	ids := sqldb.IdentityStore{DB: db}
	audit := sqldb.Auditor{DB: db}
	m.Identity, err = identity.NewService(ctx, ids, audit, m.Clock, cfg.PublicURL)
	if err != nil {
		m.Close()
		return nil, err
	}
	m.Identity.SetSessionPolicy(identity.SessionPolicy{Idle: cfg.Web.SessionIdle, MaxAge: cfg.Web.SessionMaxAge})
	if cfg.OIDC.Issuer != "" {
		v, err := newOIDCVerifier(ctx, cfg)
		if err != nil {
			m.Close()
			return nil, err
		}
		m.Identity.External = v
	}
	if err := m.Identity.SeedPlans(ctx); err != nil {
		m.Close()
		return nil, err
	}
	cursorKey, err := ids.Secret(ctx, "cursor_key", randomKey)
	if err != nil {
		m.Close()
		return nil, err
	}
	presignKey, err := ids.Secret(ctx, "presign_key", randomKey)
	if err != nil {
		m.Close()
		return nil, err
	}
	signer := presign.NewSigner(presignKey, cfg.PublicURL, nil)
	tokenKey, err := ids.Secret(ctx, "user_token_key", randomKey)
	if err != nil {
		m.Close()
		return nil, err
	}
	m.Mail = sqldb.MailOutbox{DB: db, Deliver: cfg.Mail.Host != ""}
	m.Partner = partner.NewService(sqldb.PartnerStore{IdentityStore: ids}, m.Identity, audit, sqldb.Outbox{DB: db}, m.Mail, m.Clock, cfg.PublicURL, tokenKey)
	schedule, err := cfg.RetrySchedule()
	if err != nil {
		m.Close()
		return nil, err
	}
	whStore := sqldb.WebhookStore{DB: db}
	m.Webhooks = webhooks.NewService(whStore, audit, m.Clock, webhooks.Options{AllowPrivateTargets: cfg.Webhooks.AllowPrivateTargets, Resolver: net.DefaultResolver})
	poster := hooksend.New(hooksend.Options{Timeout: cfg.Webhooks.Timeout, AllowPrivateTargets: cfg.Webhooks.AllowPrivateTargets, Now: m.Clock})
	m.Dispatcher = webhooks.NewDispatcher(whStore, poster, webhooks.DispatcherConfig{Schedule: schedule, Timeout: cfg.Webhooks.Timeout,
		Retention: cfg.Webhooks.Retention}, log, m.Clock)
	m.Webhooks.OnQueued(m.Dispatcher.Wake)
	whStore.OnQueued(m.Dispatcher.Wake)
	if cfg.Mail.Host != "" {
		m.mailer = mail.NewSender(mail.Config{Host: cfg.Mail.Host, Port: cfg.Mail.Port, TLS: cfg.Mail.TLS, Username: cfg.Mail.Username,
			Password: cfg.Mail.Password, From: cfg.Mail.From}, m.Mail, log, m.Clock)
	}
	m.Contacts = contacts.NewService(sqldb.ContactsStore{DB: db}, audit, m.Clock)
	m.Calendar = calendar.NewService(sqldb.CalendarStore{DB: db}, audit, sqldb.Outbox{DB: db}, m.Clock)
	wopiKey, err := ids.Secret(ctx, "wopi_key", randomKey)
	if err != nil {
		m.Close()
		return nil, err
	}
	converter := convert.New(cfg.Editor.SofficePath, cfg.Editor.ConvertTimeout, "")
	m.Contents = contents{files: m.Blobs, small: sqldb.SmallBlobs{DB: db}, smallFirst: cfg.Blob.S3()}
	m.Search = indexer.New(sqldb.DriveStore{DB: db}, m.Contents, searchIndexes(cfg.Data, db), extractor{}, log)
	direct, storeOrigin := directTransfers(m.Blobs, cfg.Blob)
	driveOpts := cfg.Drive.options().WithSyncKey(cursorKey).WithPublicURL(cfg.PublicURL).WithArchive(archive, cfg.Drive.ArchiveAfter).
		WithEditor(cfg.Editor.options(wopiKey)).WithConverter(converter).WithImaging(imaging.Codec{}).
		WithSearch(m.Search).WithDirect(direct)
	if db.IsPostgres() {
		// Nodes of a cluster share the uploads: any may take the next PATCH.
		driveOpts = driveOpts.WithSharedUploads()
	}
	m.Drive = drive.NewService(sqldb.DriveStore{DB: db}, m.Contents, driveURLs{signer}, audit, sqldb.Outbox{DB: db}, m.Clock, log, driveOpts)
	m.Partner.WithUserData(m.Drive) // contacts and calendars go with the user by the schema's cascades
	if m.Tus, err = tus.New(tus.Config{Uploads: m.Drive.Uploads(), Parts: tusParts(m.Blobs), Blobs: tusBlobs{m.Blobs}, Dir: filepath.Join(cfg.Data, "tus"),
		PublicURL: cfg.PublicURL, Log: log}); err != nil {
		m.Close()
		return nil, err
	}
	chunks, err := chunkStore(m.Blobs, cfg.Data)
	if err != nil {
		m.Close()
		return nil, err
	}
	var limiter web.LimitStore
	if db.IsPostgres() {
		// The nodes of a cluster count failed sign-ins and requests together.
		limiter = sqldb.LimitStore{DB: db}
	}
	m.Server = web.New(web.Config{
		Limiter:     limiter,
		PublicURL:   cfg.PublicURL,
		Log:         log,
		Identity:    m.Identity,
		Partner:     m.Partner,
		Webhooks:    m.Webhooks,
		Contacts:    m.Contacts,
		Calendar:    m.Calendar,
		Drive:       m.Drive,
		Search:      m.Search.Documents,
		Writes:      db.WriteStats,
		Audit:       audit,
		Idempotency: sqldb.Idempotency{DB: db},
		Tx:          db,
		Cursors:     &app.Cursors{Key: cursorKey, Clock: m.Clock},
		Ready:       m.ready,
		Blob:        presign.NewHandler(m.Contents, signer, web.DriveUpload(m.Drive), log),
		StoreOrigin: storeOrigin,
		Tus:         m.Tus,
		Chunks:      chunks,
		Limits:      cfg.Limits.web(),
		Clock:       m.Clock,
		Metrics:     web.MetricsAccess{Token: cfg.Metrics.Token, Elsewhere: cfg.Metrics.Listen != ""},
	})
	return m, nil
}

func randomKey() ([]byte, error) {
	b := []byte(app.RandomHex(32))
	return b, nil
}

// ready reports whether the node takes requests: it is not shutting down,
// and the database and the blob store are usable.
func (m *Main) ready(ctx context.Context) error {
	if m.drain.Draining() {
		return errors.New("shutting down")
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	if err := m.DB.Ping(ctx); err != nil {
		return errors.New("database unavailable")
	}
	if err := m.Blobs.Ready(ctx); err != nil {
		m.Log.Warn("not ready", "err", err)
		return errors.New("blob store unavailable")
	}
	return nil
}

// openBlobs opens the blob store into m.Blobs and returns the archive tier
// beside it: a bucket's ([blob] s3_endpoint), else the directories blobs/ and
// archive/ of the data directory.
func openBlobs(ctx context.Context, m *Main, cfg Config) (blob.Cold, error) {
	objects, archive, err := OpenBlobs(ctx, cfg)
	if err != nil {
		return nil, err
	}
	m.Blobs = objects
	if cfg.Blob.S3() && m.Log != nil {
		m.Log.Info("blob store: an S3-compatible bucket", "endpoint", cfg.Blob.S3Endpoint, "bucket", cfg.Blob.S3Bucket)
	}
	return archive, nil
}

// OpenBlobs opens the configured blob store and its archive tier: the
// bucket of [blob] s3_endpoint, else the directories blobs/ and archive/ of
// the data directory (atrium copy-data writes into them).
func OpenBlobs(ctx context.Context, cfg Config) (blob.Objects, blob.Cold, error) {
	if cfg.Blob.S3() {
		s, err := s3blob.Open(ctx, cfg.Blob.s3(cfg.Data))
		if err != nil {
			return nil, nil, err
		}
		return s, s.Archive(), nil
	}
	s, err := blob.Open(filepath.Join(cfg.Data, "blobs"))
	if err != nil {
		return nil, nil, err
	}
	archive, err := blob.OpenArchive(filepath.Join(cfg.Data, "archive"))
	if err != nil {
		return nil, nil, err
	}
	return blob.Local{Store: s}, archive, nil
}

// Listen binds the configured address (port 0 picks a free one).
func (m *Main) Listen() (net.Addr, error) {
	l, err := net.Listen("tcp", m.Config.Listen)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", m.Config.Listen, err)
	}
	l = web.LimitListener(l, m.Config.Limits.MaxConnections, m.Config.Limits.MaxConnectionsPerIP, m.Config.Limits.mustProxies())
	m.listener = l
	m.http = &http.Server{
		Handler:           m.drain.Wrap(m.Server.Handler()),
		ConnContext:       m.Server.ConnContext,
		ReadHeaderTimeout: m.Config.HTTP.ReadHeaderTimeout,
		IdleTimeout:       m.Config.HTTP.IdleTimeout,
		MaxHeaderBytes:    m.Config.HTTP.MaxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(m.Log.Handler(), slog.LevelWarn),
	}
	if addr := m.Config.Metrics.Listen; addr != "" {
		ml, err := net.Listen("tcp", addr)
		if err != nil {
			l.Close()
			return nil, fmt.Errorf("listen for metrics on %s: %w", addr, err)
		}
		m.metricsListener = ml
		mux := http.NewServeMux()
		mux.Handle("GET /metrics", m.Server.MetricsHandler())
		if m.Config.Metrics.Pprof {
			mux.HandleFunc("/debug/pprof/", pprof.Index)
			mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
			mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
			mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
			mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
		}
		m.metricsHTTP = &http.Server{Handler: mux, ReadHeaderTimeout: m.Config.HTTP.ReadHeaderTimeout,
			IdleTimeout: m.Config.HTTP.IdleTimeout, MaxHeaderBytes: m.Config.HTTP.MaxHeaderBytes,
			ErrorLog: slog.NewLogLogger(m.Log.Handler(), slog.LevelWarn)}
		m.Log.Info("metrics listening", "addr", ml.Addr().String())
	}
	return l.Addr(), nil
}

// MetricsAddr is the address of the metrics listener ([metrics] listen), nil
// when there is none or Listen was not called.
func (m *Main) MetricsAddr() net.Addr {
	if m.metricsListener == nil {
		return nil
	}
	return m.metricsListener.Addr()
}

// Housekeeping runs once the maintenance that is not the drive's: it forgets
// CardDAV and CalDAV deletions older than the sync log's age
// (drive.sync_log_max_age), audit entries older than audit.max_age (when
// set), idle or expired web sessions, sync clients' expired sign-ins, the
// limits' counts past their window (PostgreSQL), and outbox events older than
// app.EventsMaxAge that the search index has applied. It returns how many rows each step removed.
func (m *Main) Housekeeping(ctx context.Context) (map[string]int, error) {
	done := map[string]int{}
	steps := []struct {
		name string
		fn   func(context.Context) (int, error)
	}{
		{"contact_tombstones_pruned", func(ctx context.Context) (int, error) {
			return m.Contacts.PruneTombstones(ctx, m.Config.Drive.SyncLogMaxAge)
		}},
		{"calendar_tombstones_pruned", func(ctx context.Context) (int, error) {
			return m.Calendar.PruneTombstones(ctx, m.Config.Drive.SyncLogMaxAge)
		}},
		{"audit_pruned", m.pruneAudit},
		{"web_sessions_pruned", m.Identity.PruneSessions},
		{"login_flows_pruned", m.Identity.PruneLoginFlows},
		{"limits_pruned", m.pruneLimits},
		{"events_pruned", func(ctx context.Context) (int, error) {
			return app.OutboxPruner{Store: sqldb.Outbox{DB: m.DB}, Applied: m.Search.Applied}.Prune(ctx, m.Clock.Now())
		}},
	}
	var errs []error
	for _, st := range steps {
		n, err := st.fn(ctx)
		done[st.name] = n
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", st.name, err))
		}
	}
	return done, errors.Join(errs...)
}

// pruneLimits deletes what the limits counted in the database that is past
// its window (PostgreSQL only: on SQLite they count in memory).
func (m *Main) pruneLimits(ctx context.Context) (int, error) {
	if !m.DB.IsPostgres() {
		return 0, nil
	}
	failures, known, windows := m.Config.Limits.web().Retention()
	now := m.Clock.Now()
	return sqldb.LimitStore{DB: m.DB}.PruneLimits(ctx, now.Add(-failures), now.Add(-known), now.Add(-windows))
}

// pruneAudit deletes the audit entries older than audit.max_age, in batches
// (none when it is 0).
func (m *Main) pruneAudit(ctx context.Context) (int, error) {
	if m.Config.Audit.MaxAge <= 0 {
		return 0, nil
	}
	before := m.Clock.Now().Add(-m.Config.Audit.MaxAge)
	total := 0
	for ctx.Err() == nil {
		n, err := sqldb.Auditor{DB: m.DB}.Prune(ctx, before, 1000)
		total += n
		if err != nil || n < 1000 {
			return total, err
		}
	}
	return total, ctx.Err()
}

// Serve serves HTTP until ctx is done, then shuts down gracefully within the
// shutdown timeout: at once /readyz answers 503 (the balancer takes the node
// out of its rotation) while the node still serves, until no request is in
// flight or half the timeout passed; then it stops accepting and finishes the
// requests in flight in the time left.
//
// The background work that changes what every node shares runs once in the
// cluster, on the node that leads (RunOnce); the rest runs on every node:
// webhook deliveries (each claimed with a lease in the database), the search
// index's catching up (every node's queries apply the pending events
// anyway), the resumable uploads' sweep (their partial bytes are this node's
// files) and the release of the executable's pages.
func (m *Main) Serve(ctx context.Context) error {
	leaderCtx, stopLeading := context.WithCancel(ctx)
	leading := make(chan struct{})
	go func() {
		defer close(leading)
		app.RunAsLeader(leaderCtx, m.DB.Leader("background", sqldb.DefaultLeaderRetry), m.Log, m.RunOnce()...)
	}()
	defer func() {
		stopLeading()
		<-leading
	}()
	m.Dispatcher.Start(ctx)
	m.StartSearch(ctx)
	go m.Tus.Run(ctx, m.Config.Drive.MaintenanceInterval)
	go m.ReleaseExecutablePages(ctx)
	errc := make(chan error, 1)
	go func() { errc <- m.http.Serve(m.listener) }()
	if m.metricsHTTP != nil {
		go func() {
			if err := m.metricsHTTP.Serve(m.metricsListener); err != nil && !errors.Is(err, http.ErrServerClosed) {
				m.Log.Error("metrics listener", "err", err)
			}
		}()
		defer m.metricsHTTP.Close()
	}
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	m.Log.Info("shutting down: not ready any more, finishing the requests in flight", "in_flight", m.drain.InFlight())
	m.drain.Begin()
	sctx, cancel := context.WithTimeout(context.Background(), m.Config.HTTP.ShutdownTimeout)
	defer cancel()
	dctx, dcancel := context.WithTimeout(sctx, m.Config.HTTP.ShutdownTimeout/2)
	if err := m.drain.Wait(dctx); err != nil {
		m.Log.Info("shutting down: requests still in flight; closing the listener", "in_flight", m.drain.InFlight())
	}
	dcancel()
	if err := m.http.Shutdown(sctx); err != nil {
		m.Log.Warn("shutdown did not finish in time", "err", err)
		m.http.Close()
	}
	// After HTTP: webhook attempts in flight finish and are recorded.
	if err := m.Dispatcher.Shutdown(sctx); err != nil {
		m.Log.Warn("webhook dispatcher did not stop in time", "err", err)
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// RunOnce is the background work that runs on one node of the cluster: the
// drive's maintenance (expiry, trash, versions, archive tier, garbage
// collection), the housekeeping of the other services, and mail sending.
func (m *Main) RunOnce() []func(context.Context) {
	jobs := []func(context.Context){
		func(ctx context.Context) { m.Drive.Run(ctx, m.Config.Drive.MaintenanceInterval) },
		func(ctx context.Context) {
			app.RunMaintenance(ctx, m.Config.Drive.MaintenanceInterval, m.Log, "dav and audit", m.Housekeeping)
		},
	}
	if m.mailer != nil {
		jobs = append(jobs, func(ctx context.Context) {
			m.mailer.Start(ctx)
			<-ctx.Done()
			sctx, cancel := context.WithTimeout(context.Background(), m.Config.HTTP.ShutdownTimeout)
			defer cancel()
			if err := m.mailer.Shutdown(sctx); err != nil {
				m.Log.Warn("mail sender did not stop in time", "err", err)
			}
		})
	}
	return jobs
}

// executableEvery is how often the pages of the executable that the process
// touched are released (releaseExecutable): what it maps of its binary at any
// moment is the code and data it ran since the last release. Start-up
// touches some 30 MB of the binary (package initialisation, the migrations,
// template parsing, opening the stores), and a busy server (a burst of
// uploads and the search index taking it in) touched some 30-40 MB in all,
// much of it run once or rarely (error paths, the first request of a kind,
// the extraction of a file type), which stayed counted in its resident set
// for as long as it ran; what it maps of the binary under the same load is
// now what the last second ran, 10-25 MB. The pages stay in the page cache:
// the ones run again come back with a minor fault.
const executableEvery = time.Second

// ReleaseExecutablePages releases the pages of the executable that the
// process touched so far, then those touched since every executableEvery,
// until ctx is done.
func (m *Main) ReleaseExecutablePages(ctx context.Context) {
	before, after, err := releaseStartPages()
	if err != nil {
		m.Log.Info("pages of the executable not released", "err", err)
		return
	}
	m.Log.Debug("released the start-up pages of the executable", "resident_kb_before", before, "resident_kb_after", after)
	t := time.NewTicker(executableEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if err := releaseExecutable(); err != nil {
				m.Log.Info("pages of the executable not released", "err", err)
				return
			}
		}
	}
}

// Close releases everything Open acquired.
func (m *Main) Close() error {
	var errs []error
	if m.Dispatcher != nil {
		ctx, cancel := context.WithTimeout(context.Background(), m.Config.HTTP.ShutdownTimeout)
		errs = append(errs, m.Dispatcher.Shutdown(ctx))
		cancel()
		sqldb.WebhookStore{DB: m.DB}.OnQueued(nil)
	}
	if m.stopSearch != nil {
		m.stopSearch()
	}
	if m.Search != nil {
		errs = append(errs, m.Search.Close())
	}
	if m.DB != nil {
		errs = append(errs, m.DB.Close())
	}
	return errors.Join(errs...)
}

// BootstrapOutput is what `atrium bootstrap --json` prints (CONTRACT §1).
type BootstrapOutput struct {
	OrganizationID string `json:"organization_id"`
	UserID         string `json:"user_id"`
	Email          string `json:"email"`
	Token          string `json:"token"`
	AppPassword    string `json:"app_password"`
	// PasswordURL is where a user without an account password chooses one
	// (a password reset link: single use, valid 24 hours); absent otherwise.
	PasswordURL string `json:"password_url,omitempty"`
}

// Bootstrap ensures a top-level reseller organisation and a user in it and issues
// a fresh PAT (every scope the role allows) and app password; a user without
// an account password also gets a link to choose one, so that they can sign in
// to the web app.
func (m *Main) Bootstrap(ctx context.Context, orgName, email, role string) (BootstrapOutput, error) {
	res, err := m.Identity.Bootstrap(ctx, orgName, email, role)
	if err != nil {
		return BootstrapOutput{}, err
	}
	tok, _, err := m.Identity.CreateToken(ctx, identity.CreateTokenInput{UserID: res.User.ID, Name: "bootstrap"})
	if err != nil {
		return BootstrapOutput{}, err
	}
	pw, _, err := m.Identity.CreateAppPassword(ctx, res.User.ID, "bootstrap")
	if err != nil {
		return BootstrapOutput{}, err
	}
	link, err := m.Partner.PasswordSetupLink(ctx, res.User.ID)
	if err != nil {
		return BootstrapOutput{}, err
	}
	return BootstrapOutput{OrganizationID: res.Org.ID, UserID: res.User.ID, Email: res.User.Email, Token: tok, AppPassword: pw, PasswordURL: link}, nil
}

// TokenOutput is what `atrium token create --json` prints.
type TokenOutput struct {
	Token     string     `json:"token"`
	ExpiresAt *time.Time `json:"expires_at"`
	Scopes    []string   `json:"scopes"`
}

// Token issues a PAT for the user with e-mail address email.
func (m *Main) Token(ctx context.Context, email string, scopes []string, ttl time.Duration) (TokenOutput, error) {
	u, err := m.Identity.UserByEmail(ctx, email)
	if err != nil {
		return TokenOutput{}, fmt.Errorf("user %s: %w", email, err)
	}
	tok, t, err := m.Identity.CreateToken(ctx, identity.CreateTokenInput{UserID: u.ID, Name: "cli", Scopes: scopes, TTL: ttl})
	if err != nil {
		return TokenOutput{}, err
	}
	return TokenOutput{Token: tok, ExpiresAt: t.ExpiresAt, Scopes: t.Scopes}, nil
}

// OpenDatabase opens (migrating) the configured database: the PostgreSQL
// database of [database] url when set, else the SQLite file under the data
// directory.
func OpenDatabase(ctx context.Context, cfg Config, log *slog.Logger) (*sqldb.DB, error) {
	if cfg.Database.URL != "" {
		return sqldb.OpenPostgres(ctx, cfg.Database.URL, log, sqldb.WithMaxConnections(cfg.Database.MaxConnections))
	}
	return sqldb.Open(ctx, filepath.Join(cfg.Data, "atrium.db"), log)
}
