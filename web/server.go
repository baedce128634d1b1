// Package web is Atrium's one HTTP server: the router, the middleware every door
// shares (request ids, access logs, metrics, authentication, problem bodies,
// idempotency), the OpenAPI description and the few non-REST endpoints.
package web

import (
	"context"
	"log/slog"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/adapters/humagin"
	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus"

	"atrium/app"
	"atrium/app/calendar"
	"atrium/app/contacts"
	"atrium/app/drive"
	"atrium/app/identity"
	"atrium/app/partner"
	"atrium/app/webhooks"
	"atrium/web/dav"
	"atrium/web/docs"
	"atrium/web/nextcloud"
	"atrium/web/rest"
	"atrium/web/tus"
	"atrium/web/ui"
	"atrium/web/webdav"
	"atrium/web/wopi"
)

// APIVersion is the version string of the OpenAPI description (spec §9).
const APIVersion = "1.81.0.640"

// APITitle names the OpenAPI description.
const APITitle = "Atrium Workspace Platform — Public External API"

// Config is what the server needs.
type Config struct {
	PublicURL string
	Log       *slog.Logger
	Identity  *identity.Service
	Partner   *partner.Service
	Webhooks  *webhooks.Service
	Contacts  *contacts.Service
	Drive     *drive.Service
	// Search counts the documents of the drive's search index (a metric);
	// ok is false while it is being built or updated.
	Search      func() (n uint64, ok bool)
	Calendar    *calendar.Service
	Audit       app.Auditor
	Idempotency app.IdempotencyStore
	// Tx runs idempotent handlers in one transaction with their stored response.
	Tx      app.TxRunner
	Cursors *app.Cursors
	// Ready reports whether the database and blob store are usable.
	Ready func(ctx context.Context) error
	// Blob serves presigned URLs under /blob/; nil when absent.
	Blob http.Handler
	// StoreOrigin is the origin of the object store when the drive's
	// download URLs point at it (ui.Config.StoreOrigin); "" when they are
	// the node's.
	StoreOrigin string
	// Tus is the drive's resumable upload door; nil when absent.
	Tus *tus.Handler
	// Chunks keeps the sync clients' chunked uploads (webdav.WithChunks);
	// nil: they are not offered.
	Chunks webdav.ChunkStore
	// Writes reports what the database's writer did, for the metrics; nil
	// leaves them out.
	Writes func() app.WriteStats
	// Registry collects Prometheus metrics; nil makes a private one.
	Registry *prometheus.Registry
	// Limits protect the server from overload and abuse; nil is DefaultLimits.
	Limits *Limits
	// Limiter, when set, keeps the sign-in limits' counts where every node
	// of a cluster sees them (the database on PostgreSQL); nil: this
	// process's memory.
	Limiter LimitStore
	// Clock is the time the limits count in; nil is the wall clock.
	Clock app.Clock
	// Metrics says who may read /metrics on this server's handler.
	Metrics MetricsAccess
}

// Server is the HTTP server's handler.
type Server struct {
	cfg      Config
	log      *slog.Logger
	problems problems
	engine   *gin.Engine
	api      huma.API
	metrics  *metrics

	limits Limits
	// accountFails and ipFails limit failed sign-ins per account and address,
	// and per address; knownClients are the accounts each address signed in to.
	accountFails, ipFails *failLimiter
	// accountWide limits an account's failed passwords from every address
	// together (but for its known clients), codeFails its wrong two-factor
	// codes.
	accountWide, codeFails *failLimiter
	knownClients           *knownClients
	// tokenRate and ipRate limit request rates per credential and per address.
	tokenRate, ipRate *rateLimiters
	// crossOrigin refuses cross-origin state changes made with the session cookie.
	crossOrigin *http.CrossOriginProtection
	// sessionCookie is the name of the web app's session cookie here.
	sessionCookie string
	// queryParams caches each operation's query parameter names (knownQuery).
	queryParams sync.Map
}

func init() { gin.SetMode(gin.ReleaseMode) }

// New builds the server and registers every route.
func New(cfg Config) *Server {
	cfg.PublicURL = strings.TrimRight(cfg.PublicURL, "/")
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	if cfg.Registry == nil {
		cfg.Registry = prometheus.NewRegistry()
	}
	s := &Server{cfg: cfg, log: cfg.Log, problems: problems{base: cfg.PublicURL + "/problems"}}
	s.metrics = newMetrics(cfg.Registry)
	s.crossOrigin = newCrossOrigin(cfg.PublicURL)
	s.sessionCookie = ui.SessionCookieName(cfg.PublicURL)
	if cfg.Search != nil {
		s.metrics.searchDocuments(cfg.Search)
	}
	if cfg.Writes != nil {
		s.metrics.writes(cfg.Writes)
	}
	s.limits = DefaultLimits
	if cfg.Limits != nil {
		s.limits = *cfg.Limits
	}
	now := cfg.Clock
	if now == nil {
		now = time.Now
	}
	s.accountFails = newFailLimiter(s.limits.AuthFailures, s.limits.AuthFailureWindow, max(s.limits.AuthFailureBackoff, time.Second), now)
	s.ipFails = newFailLimiter(s.limits.AuthFailuresPerIP, s.limits.AuthFailureWindow, 0, now)
	s.accountWide = newFailLimiter(s.limits.AuthFailuresPerAccount, s.limits.AuthFailureWindow, max(s.limits.AuthFailureBackoff, time.Second), now)
	s.codeFails = newFailLimiter(s.limits.AuthCodeFailures, s.limits.AuthFailureWindow, max(s.limits.AuthFailureBackoff, time.Second), now)
	s.knownClients = newKnownClients(s.limits.KnownClientTTL, now)
	s.tokenRate = newRateLimiters(s.limits.RatePerToken, s.limits.BurstPerToken, now)
	s.ipRate = newRateLimiters(s.limits.RatePerIP, s.limits.BurstPerIP, now)
	if cfg.Limiter != nil {
		onErr := func(err error) { s.log.Warn("limits: the shared count is unavailable; not limiting", "err", err) }
		s.accountFails.sharedIn(cfg.Limiter, "pair", onErr)
		s.ipFails.sharedIn(cfg.Limiter, "ip", onErr)
		s.accountWide.sharedIn(cfg.Limiter, "account", onErr)
		s.codeFails.sharedIn(cfg.Limiter, "code", onErr)
		s.tokenRate.sharedIn(cfg.Limiter, "token", onErr)
		s.ipRate.sharedIn(cfg.Limiter, "ip", onErr)
		if s.knownClients != nil {
			s.knownClients.shared, s.knownClients.onErr = cfg.Limiter, onErr
		}
	}

	e := gin.New()
	e.HandleMethodNotAllowed = true
	e.RedirectTrailingSlash = false
	e.RedirectFixedPath = false
	e.ContextWithFallback = true
	e.Use(s.recoverer, s.requestID, s.accessLog, s.safeHeaders, s.limitIP, s.authenticate, s.limitToken)
	e.NoRoute(func(c *gin.Context) {
		s.problems.make(http.StatusNotFound, "", "No resource at "+c.Request.URL.Path+".").write(c.Writer, requestIDFrom(c.Request.Context()))
	})
	e.NoMethod(func(c *gin.Context) {
		s.problems.make(http.StatusMethodNotAllowed, "", "The method "+c.Request.Method+" is not allowed here.").write(c.Writer, requestIDFrom(c.Request.Context()))
	})
	s.engine = e

	hc := huma.DefaultConfig(APITitle, APIVersion)
	hc.CreateHooks = nil // no $schema links in bodies
	hc.Formats = map[string]huma.Format{"application/json": jsonFormat, "json": jsonFormat}
	hc.OpenAPIPath = "" // served by serveOpenAPI
	hc.DocsPath = ""
	hc.SchemasPath = ""
	hc.Info.Description = apiDescription
	hc.Servers = []*huma.Server{{URL: cfg.PublicURL, Description: "This Atrium server"}}
	hc.Components.SecuritySchemes = map[string]*huma.SecurityScheme{
		"bearer": {Type: "http", Scheme: "bearer", BearerFormat: "PAT (atr_pat_…), service principal token (atr_sp_…) or JWT",
			Description: "A personal access token, a service principal token, or a JWT from the embedded issuer (`POST /oauth/token`) or the configured external OIDC issuer."},
	}
	api := humagin.New(e, hc)
	api.UseMiddleware(s.authorize, s.limitLinkTokens, s.knownQuery, s.deadline, s.idempotency)
	s.api = api
	rest.Register(api, rest.Deps{Identity: cfg.Identity, Audit: cfg.Audit, Cursors: cfg.Cursors, Partner: cfg.Partner, Webhooks: cfg.Webhooks, Contacts: cfg.Contacts, Calendar: cfg.Calendar, Drive: cfg.Drive, PublicURL: cfg.PublicURL})

	s.routes()
	return s
}

// Handler returns the server's http.Handler. Serve it with ConnContext as the
// http.Server's, so that busy connections take turns (see fairTurns).
func (s *Server) Handler() http.Handler {
	return fairTurns(backToBack, runtime.Gosched, ioDeadlines(s.limits.IOIdleTimeout, s.engine))
}

// Routes lists the router's routes (for tests that account for every door).
func (s *Server) Routes() gin.RoutesInfo { return s.engine.Routes() }

// API returns the huma API, for modules that register operations.
func (s *Server) API() huma.API { return s.api }

// OpenAPI returns the OpenAPI description.
func (s *Server) OpenAPI() *huma.OpenAPI { return s.api.OpenAPI() }

// routes registers the endpoints that are not REST operations.
func (s *Server) routes() {
	e := s.engine
	e.GET("/healthz", func(c *gin.Context) { c.JSON(http.StatusOK, gin.H{"status": "ok"}) })
	e.GET("/readyz", func(c *gin.Context) {
		if s.cfg.Ready != nil {
			if err := s.cfg.Ready(c.Request.Context()); err != nil {
				s.log.Warn("not ready", "err", err)
				s.problems.make(http.StatusServiceUnavailable, app.EUnavailable, "Not ready: "+err.Error()).write(c.Writer, requestIDFrom(c.Request.Context()))
				return
			}
		}
		c.JSON(http.StatusOK, gin.H{"status": "ready"})
	})
	e.GET("/metrics", s.metricsGate, gin.WrapH(s.metrics.handler()))

	s.serveOpenAPI(e)
	dh := http.StripPrefix("/api/v1/docs", docs.Handler("/api/v1/openapi.json", APITitle))
	e.GET("/api/v1/docs", gin.WrapH(dh))
	e.GET("/api/v1/docs/*file", gin.WrapH(dh))

	s.mountWebApp(e)

	if iss := s.cfg.Identity.Issuer(); iss != nil {
		e.GET("/.well-known/openid-configuration", func(c *gin.Context) { c.JSON(http.StatusOK, iss.Discovery()) })
		e.GET("/.well-known/jwks.json", func(c *gin.Context) {
			c.Header("Cache-Control", "public, max-age=300")
			c.JSON(http.StatusOK, iss.JWKS())
		})
	}
	e.POST("/oauth/token", s.oauthToken)

	if s.cfg.Blob != nil {
		for _, m := range []string{http.MethodGet, http.MethodHead, http.MethodPut} {
			e.Handle(m, "/blob/*path", gin.WrapH(s.cfg.Blob))
		}
	}

	// Resumable upload of the drive (tus) at /api/v1/drive/tus/.
	if s.cfg.Tus != nil {
		th := gin.WrapH(s.cfg.Tus.Mount(func(w http.ResponseWriter, r *http.Request, err error) {
			s.problems.fromError(err).write(w, requestIDFrom(r.Context()))
		}))
		for _, rt := range tus.Routes {
			e.Handle(rt.Method, rt.Path, th)
		}
	}

	// The drive's WebDAV file mount at /api/v1/webdav/ and its alias /webdav/.
	chunking := false
	if s.cfg.Drive != nil {
		wd := webdav.New(s.cfg.Drive, s.cfg.PublicURL, s.log)
		paths := []string{webdav.Prefix, webdav.Prefix + "/*path", webdav.AliasPrefix, webdav.AliasPrefix + "/*path",
			webdav.RemotePrefix, webdav.RemotePrefix + "/*path", webdav.RemoteFilesPrefix + "*path"}
		if s.cfg.Chunks != nil {
			wd.WithChunks(s.cfg.Chunks)
			chunking = true
			paths = append(paths, webdav.UploadsPrefix+"*path")
		}
		wh := gin.WrapH(wd)
		for _, m := range webdav.Methods {
			for _, p := range paths {
				e.Handle(m, p, wh)
			}
		}
	}

	// What the Nextcloud and ownCloud sync clients call besides the mount
	// (above, at remote.php/): status.php and OCS.
	if s.cfg.Drive != nil {
		nc := nextcloud.New(nextcloud.Config{Identity: s.cfg.Identity, Drive: s.cfg.Drive, PublicURL: s.cfg.PublicURL, Product: "Atrium",
			Chunking: chunking, Log: s.log})
		for _, m := range []string{http.MethodGet, http.MethodHead} {
			e.Handle(m, nextcloud.StatusPath, gin.WrapF(nc.Status))
		}
		// Login Flow v2; the page that approves is the web app's (ConnectPath).
		e.POST(nextcloud.LoginFlowPath, gin.WrapF(nc.StartLogin))
		e.POST(nextcloud.LoginPollPath, gin.WrapF(nc.PollLogin))
		oh := gin.WrapH(nc)
		for _, m := range []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodDelete} {
			e.Handle(m, nextcloud.OCSv1+"/*path", oh)
			e.Handle(m, nextcloud.OCSv2+"/*path", oh)
		}
	}

	// The WOPI host endpoints an online editor calls, at /wopi/files/{id}; they
	// authenticate with the edit session's access token, not with the
	// middleware's credentials.
	if s.cfg.Drive != nil {
		wh := gin.WrapH(wopi.New(s.cfg.Drive.Editing(), s.log))
		for _, m := range []string{http.MethodGet, http.MethodPost} {
			e.Handle(m, wopi.Prefix+"*path", wh)
		}
	}

	// CardDAV and CalDAV at /dav/, discovery per RFC 6764.
	if s.cfg.Contacts != nil && s.cfg.Calendar != nil {
		dh := gin.WrapH(dav.New(s.cfg.PublicURL, s.log, dav.NewCardDAV(s.cfg.PublicURL, s.log, s.cfg.Contacts),
			dav.NewCalDAV(s.cfg.PublicURL, s.log, s.cfg.Calendar)))
		wk := func(c *gin.Context) { c.Redirect(http.StatusMovedPermanently, dav.Root) }
		for _, m := range dav.Methods {
			e.Handle(m, "/dav", dh)
			e.Handle(m, "/dav/*path", dh)
			e.Handle(m, "/.well-known/carddav", wk)
			e.Handle(m, "/.well-known/caldav", wk)
		}
	}
}

const apiDescription = `The public external surface of the Atrium workspace platform: contacts, calendar, drive, partner (reseller) administration, webhooks and the developer API. Only endpoints of the stable v1 contract are listed.

Authentication: ` + "`Authorization: Bearer <token>`" + ` with a personal access token, a service principal token or a JWT. Scopes are checked per operation; a token without the scope gets 403 ` + "`insufficient_scope`" + `.

Errors: every error response is ` + "`application/problem+json`" + ` (RFC 9457) with ` + "`type`, `title`, `status`, `detail`, `code`" + `, and for 422 an ` + "`errors`" + ` array of ` + "`{location, message, value}`" + `. A query parameter the operation does not take is refused with 422 ` + "`validation_failed`" + ` naming it (` + "`errors[].location`" + ` ` + "`query.<name>`" + `) and the parameters the operation takes: it is never silently ignored.

Limits: failed sign-ins are limited per account and client address (with a wait that grows with each further failure) and per client address, and request rates per credential and per address can be limited ([limits] in the server's configuration): a refused request gets 429 ` + "`rate_limited`" + ` with ` + "`Retry-After`" + `. A REST operation that runs longer than the server allows gets 503 ` + "`timeout`" + `; JSON bodies are limited to 1 MiB (413 ` + "`payload_too_large`" + `).

Pagination: cursor lists take ` + "`cursor` and `limit`" + ` (1–100, default 20) and return ` + "`{items, next_cursor, has_more, limit}`" + `; cursors are valid 24 hours (then 400 ` + "`cursor_expired`" + `).

Mounts outside this description: the WebDAV file mount at ` + "`/api/v1/webdav/`" + ` (alias ` + "`/webdav/`" + `, DAV classes 1 and 2, HTTP Basic with e-mail and app password), CardDAV and CalDAV at ` + "`/dav/`" + ` (discovery through ` + "`/.well-known/carddav`" + ` and ` + "`/.well-known/caldav`" + `), and the WOPI host endpoints of the online editor at ` + "`/wopi/files/{id}`" + ` (CheckFileInfo, GetFile, PutFile, Lock, Unlock, RefreshLock, GetLock, PutRelativeFile; authenticated by the edit session's ` + "`access_token`" + `, see ` + "`GET /drive/{file_id}/edit-url`" + `). The embedded OAuth issuer publishes ` + "`/.well-known/openid-configuration`" + ` and takes ` + "`POST /oauth/token`" + ` (client credentials for service principals, RFC 8693 token exchange of a PAT).`
