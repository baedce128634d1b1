package wire

import (
	"atrium/storage/s3blob"
	"atrium/storage/sqldb"

	"atrium/app/drive"
	"atrium/web"
	"atrium/web/wopi"

	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"time"

	"github.com/go-viper/mapstructure/v2"
	"github.com/knadh/koanf/parsers/toml/v2"
	"github.com/knadh/koanf/providers/confmap"
	"github.com/knadh/koanf/providers/file"
	"github.com/knadh/koanf/v2"
	"github.com/spf13/pflag"
)

// Config is Atrium's configuration. Precedence: defaults < TOML file < environment
// < command-line flags. Every option is documented in config.example.toml.
type Config struct {
	Listen    string `koanf:"listen"`
	Data      string `koanf:"data"`
	PublicURL string `koanf:"public_url"`
	// Database is where the metadata lives: empty, the embedded SQLite file
	// under Data; a postgres:// URL, that PostgreSQL database.
	Database struct {
		URL string `koanf:"url"`
		// MaxConnections bounds this node's pool of PostgreSQL connections.
		MaxConnections int `koanf:"max_connections"`
	} `koanf:"database"`
	// Blob is where the bytes live: with S3Endpoint empty, the local disk
	// under Data; else a bucket of that S3-compatible store.
	Blob BlobConfig `koanf:"blob"`
	// Warnings are what Validate found worth telling the operator at start.
	Warnings []string `koanf:"-"`
	Log      struct {
		Level  string `koanf:"level"`
		Format string `koanf:"format"`
	} `koanf:"log"`
	HTTP struct {
		ShutdownTimeout   time.Duration `koanf:"shutdown_timeout"`
		ReadHeaderTimeout time.Duration `koanf:"read_header_timeout"`
		IdleTimeout       time.Duration `koanf:"idle_timeout"`
		MaxHeaderBytes    int           `koanf:"max_header_bytes"`
	} `koanf:"http"`
	OIDC struct {
		Issuer     string `koanf:"issuer"`
		JWKSURL    string `koanf:"jwks_url"`
		Audience   string `koanf:"audience"`
		EmailClaim string `koanf:"email_claim"`
	} `koanf:"oidc"`
	Webhooks struct {
		RetrySchedule       string        `koanf:"retry_schedule"`
		Timeout             time.Duration `koanf:"timeout"`
		AllowPrivateTargets bool          `koanf:"allow_private_targets"`
		Retention           time.Duration `koanf:"retention"`
	} `koanf:"webhooks"`
	Audit struct {
		// MaxAge is how long audit entries are kept; 0: for good.
		MaxAge time.Duration `koanf:"max_age"`
	} `koanf:"audit"`
	// Web is the web app's sessions.
	Web struct {
		SessionIdle   time.Duration `koanf:"session_idle"`
		SessionMaxAge time.Duration `koanf:"session_max_age"`
	} `koanf:"web"`
	Limits LimitsConfig `koanf:"limits"`
	// Metrics says who may read the Prometheus metrics: with a token, requests
	// bearing it on the public listener; with a listen address, anyone reaching
	// that (private) address; with neither, only local clients of the public
	// listener (a loopback connection carrying no forwarding header).
	Metrics struct {
		Token  string `koanf:"token"`
		Listen string `koanf:"listen"`
		// Pprof adds Go's profiler (/debug/pprof/) to the metrics listener.
		Pprof bool `koanf:"pprof"`
	} `koanf:"metrics"`
	Drive  DriveConfig  `koanf:"drive"`
	Editor EditorConfig `koanf:"editor"`
	Mail   struct {
		Host     string `koanf:"host"`
		Port     int    `koanf:"port"`
		TLS      string `koanf:"tls"`
		Username string `koanf:"username"`
		Password string `koanf:"password"`
		From     string `koanf:"from"`
	} `koanf:"mail"`
}

// defaults are the embedded defaults: `atrium serve` with no file runs on them.
var defaults = map[string]any{
	"listen":                           "127.0.0.1:8080",
	"data":                             "./data",
	"public_url":                       "",
	"database.max_connections":         20,
	"log.level":                        "info",
	"log.format":                       "text",
	"http.shutdown_timeout":            "15s",
	"http.read_header_timeout":         "10s",
	"http.idle_timeout":                "120s",
	"http.max_header_bytes":            64 << 10,
	"oidc.issuer":                      "",
	"oidc.jwks_url":                    "",
	"oidc.audience":                    "",
	"oidc.email_claim":                 "email",
	"webhooks.retry_schedule":          "0s,30s,5m,30m,2h,12h",
	"webhooks.timeout":                 "10s",
	"webhooks.allow_private_targets":   false,
	"webhooks.retention":               "720h",
	"audit.max_age":                    "0s",
	"web.session_idle":                 "12h",
	"web.session_max_age":              "168h",
	"limits.auth_failures":             10,
	"limits.auth_failure_backoff":      "5s",
	"limits.auth_failures_per_ip":      50,
	"limits.auth_failures_per_account": 30,
	"limits.auth_code_failures":        10,
	"limits.auth_failure_window":       "5m",
	"limits.auth_known_client_ttl":     "720h",
	"limits.rate_per_token":            0.0,
	"limits.burst_per_token":           100,
	"limits.rate_per_ip":               0.0,
	"limits.burst_per_ip":              200,
	"limits.request_timeout":           "60s",
	"limits.io_idle_timeout":           "60s",
	"limits.trusted_proxies":           []string{},
	"metrics.token":                    "",
	"metrics.listen":                   "",
	"metrics.pprof":                    false,
	"limits.max_connections":           4096,
	"limits.max_connections_per_ip":    256,
	"drive.upload_ttl":                 "24h",
	"drive.max_upload_bytes":           int64(10 << 30),
	"drive.preview_cache_bytes":        int64(1 << 30),
	"drive.index_interval":             "2s",
	"drive.preview_max_pixels":         int64(50_000_000),
	"drive.version_max_count":          50,
	"drive.version_max_age":            "4320h",
	"drive.trash_max_age":              "720h",
	"drive.sync_log_max_age":           "2160h",
	"drive.maintenance_interval":       "10m",
	"editor.url":                       "",
	"editor.wopi_url":                  "",
	"editor.discovery_timeout":         "10s",
	"editor.access_token_ttl":          "10h",
	"editor.verify_proof":              true,
	"editor.soffice_path":              "",
	"editor.convert_timeout":           "2m",
	"blob.s3_endpoint":                 "",
	"blob.s3_public_endpoint":          "",
	"blob.s3_bucket":                   "",
	"blob.s3_region":                   "",
	"blob.s3_access_key":               "",
	"blob.s3_secret_key":               "",
	"mail.host":                        "",
	"mail.port":                        587,
	"mail.tls":                         "starttls",
	"mail.username":                    "",
	"mail.password":                    "",
	"mail.from":                        "Atrium <atrium@localhost>",
}

// envVars maps environment variables to configuration keys.
var envVars = map[string]string{
	"ATRIUM_LISTEN":                   "listen",
	"ATRIUM_DATA":                     "data",
	"ATRIUM_DATABASE_URL":             "database.url",
	"ATRIUM_DATABASE_MAX_CONNECTIONS": "database.max_connections",
	"ATRIUM_PUBLIC_URL":               "public_url",
	"ATRIUM_S3_ENDPOINT":              "blob.s3_endpoint",
	"ATRIUM_S3_PUBLIC_ENDPOINT":       "blob.s3_public_endpoint",
	"ATRIUM_S3_BUCKET":                "blob.s3_bucket",
	"ATRIUM_S3_REGION":                "blob.s3_region",
	"ATRIUM_S3_ACCESS_KEY":            "blob.s3_access_key",
	"ATRIUM_S3_SECRET_KEY":            "blob.s3_secret_key",
	"ATRIUM_LOG_LEVEL":                "log.level",
	"ATRIUM_LOG_FORMAT":               "log.format",
	"ATRIUM_OIDC_ISSUER":              "oidc.issuer",
	"ATRIUM_OIDC_JWKS_URL":            "oidc.jwks_url",
	"ATRIUM_OIDC_AUDIENCE":            "oidc.audience",
	"ATRIUM_WEBHOOK_RETRY_SCHEDULE":   "webhooks.retry_schedule",
	"ATRIUM_WEBHOOK_TIMEOUT":          "webhooks.timeout",
	"ATRIUM_WEBHOOK_ALLOW_PRIVATE":    "webhooks.allow_private_targets",
	"ATRIUM_AUDIT_MAX_AGE":            "audit.max_age",
	"ATRIUM_EDITOR_URL":               "editor.url",
	"ATRIUM_EDITOR_WOPI_URL":          "editor.wopi_url",
	"ATRIUM_EDITOR_ACCESS_TOKEN_TTL":  "editor.access_token_ttl",
	"ATRIUM_EDITOR_SOFFICE_PATH":      "editor.soffice_path",
	"ATRIUM_EDITOR_VERIFY_PROOF":      "editor.verify_proof",
	"ATRIUM_MAIL_HOST":                "mail.host",
	"ATRIUM_MAIL_PORT":                "mail.port",
	"ATRIUM_MAIL_USERNAME":            "mail.username",
	"ATRIUM_MAIL_PASSWORD":            "mail.password",
	"ATRIUM_MAIL_FROM":                "mail.from",
	"ATRIUM_TRUSTED_PROXIES":          "limits.trusted_proxies",
	"ATRIUM_METRICS_TOKEN":            "metrics.token",
	"ATRIUM_METRICS_LISTEN":           "metrics.listen",
	"ATRIUM_METRICS_PPROF":            "metrics.pprof",
}

// flagKeys maps command-line flags to configuration keys.
var flagKeys = map[string]string{
	"listen":     "listen",
	"data":       "data",
	"public-url": "public_url",
}

// LoadConfig builds the configuration from the defaults, the TOML file at path
// (when not empty), the environment and the flags that were set. An unknown key or
// a bad value is an error naming it.
func LoadConfig(path string, env func(string) string, flags *pflag.FlagSet) (Config, error) {
	var cfg Config
	k := koanf.New(".")
	if err := k.Load(confmap.Provider(defaults, "."), nil); err != nil {
		return cfg, err
	}
	if path != "" {
		if _, err := os.Stat(path); err != nil {
			return cfg, fmt.Errorf("config file: %w", err)
		}
		if err := k.Load(file.Provider(path), toml.Parser()); err != nil {
			return cfg, fmt.Errorf("config file %s: %w", path, err)
		}
	}
	if env == nil {
		env = os.Getenv
	}
	over := map[string]any{}
	source := map[string]string{} // key → the variable or flag that set it
	for name, key := range envVars {
		if v := env(name); v != "" {
			over[key] = v
			source[key] = name
		}
	}
	if flags != nil {
		for name, key := range flagKeys {
			if f := flags.Lookup(name); f != nil && f.Changed {
				over[key] = f.Value.String()
				source[key] = "--" + name
			}
		}
	}
	if err := k.Load(confmap.Provider(over, "."), nil); err != nil {
		return cfg, err
	}
	err := k.UnmarshalWithConf("", &cfg, koanf.UnmarshalConf{DecoderConfig: &mapstructure.DecoderConfig{
		DecodeHook: mapstructure.ComposeDecodeHookFunc(stringToDuration,
			mapstructure.StringToSliceHookFunc(",")),
		ErrorUnused:      true,
		WeaklyTypedInput: true,
		Result:           &cfg,
		TagName:          "koanf",
	}})
	if err != nil {
		where := "the defaults"
		if path != "" {
			where = path
		}
		return cfg, explainDecode(err, k, source, where)
	}
	return cfg, cfg.Validate()
}

// badDuration is a duration option's value that time.ParseDuration refused.
type badDuration string

func (d badDuration) Error() string {
	return fmt.Sprintf("%q is not a duration: write a number and a unit, ms, s, m or h (for example 30s, 15m or 720h)", string(d))
}

// stringToDuration decodes duration options, saying what is accepted when a
// value is not one.
func stringToDuration(f, t reflect.Type, data any) (any, error) {
	if f.Kind() != reflect.String || t != reflect.TypeOf(time.Duration(0)) {
		return data, nil
	}
	d, err := time.ParseDuration(strings.TrimSpace(data.(string)))
	if err != nil {
		return nil, badDuration(data.(string))
	}
	return d, nil
}

// explainDecode turns the decoder's errors into one line per option: its key,
// where the value came from (an environment variable, a flag, or the file), the
// value and what is accepted.
func explainDecode(err error, k *koanf.Koanf, source map[string]string, file string) error {
	var lines []error
	var walk func(error)
	walk = func(e error) {
		if de, ok := e.(*mapstructure.DecodeError); ok && !isJoined(de.Unwrap()) {
			key := de.Name()
			from := source[key]
			if from == "" {
				from = file
			}
			var bd badDuration
			var pe *mapstructure.ParseError
			var ue *mapstructure.UnconvertibleTypeError
			switch {
			case errors.As(de, &bd):
				lines = append(lines, fmt.Errorf("%s (set in %s): %w", key, from, bd))
			case errors.As(de, &pe):
				lines = append(lines, fmt.Errorf("%s (set in %s): %q is not %s", key, from, fmt.Sprint(k.Get(key)), kindName(pe.Expected.Type())))
			case errors.As(de, &ue):
				lines = append(lines, fmt.Errorf("%s (set in %s): %q is not %s", key, from, fmt.Sprint(k.Get(key)), kindName(ue.Expected.Type())))
			case strings.Contains(de.Error(), "has invalid keys: "):
				_, keys, _ := strings.Cut(de.Error(), "has invalid keys: ")
				where := "unknown option"
				if key != "wire.Config" { // the name of a section's struct is its key
					where = "unknown option in [" + key + "]"
				}
				lines = append(lines, fmt.Errorf("%s in %s: %s (every option is listed in config.example.toml)", where, file, keys))
			default:
				lines = append(lines, fmt.Errorf("%s (set in %s): %v", key, from, de.Unwrap()))
			}
			return
		}
		if j, ok := e.(interface{ Unwrap() []error }); ok {
			for _, x := range j.Unwrap() {
				walk(x)
			}
			return
		}
		if u := errors.Unwrap(e); u != nil {
			walk(u)
			return
		}
		lines = append(lines, e)
	}
	walk(err)
	return fmt.Errorf("config: %w", errors.Join(lines...))
}

func isJoined(e error) bool {
	_, ok := e.(interface{ Unwrap() []error })
	return ok
}

// kindName says in words what a value of type t must look like.
func kindName(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Bool:
		return "true or false"
	case reflect.Slice:
		return "a list"
	default:
		return "a " + t.String()
	}
}

// Validate checks the rules across options and fills derived values.
func (c *Config) Validate() error {
	var errs []error
	if _, _, err := net.SplitHostPort(c.Listen); err != nil {
		errs = append(errs, fmt.Errorf("listen: %q is not host:port", c.Listen))
	}
	if c.Data == "" {
		errs = append(errs, errors.New("data: must not be empty"))
	}
	if c.Database.URL != "" && !sqldb.IsPostgresURL(c.Database.URL) {
		errs = append(errs, errors.New("database.url: not a PostgreSQL URL: give postgres://user:password@host:port/database?sslmode=disable (or leave it empty for the embedded SQLite database)"))
	}
	if c.Blob.S3() {
		if err := c.Blob.s3(c.Data).Validate(); err != nil {
			errs = append(errs, err)
		}
	}
	if c.Blob.S3PublicEndpoint != "" && c.Drive.UploadTTL > s3blob.MaxPresignTTL {
		errs = append(errs, fmt.Errorf("drive.upload_ttl: at most %s with blob.s3_public_endpoint set: clients upload with a presigned URL of the object store, which lives as long as the upload and at most that", s3blob.MaxPresignTTL))
	}
	if c.Database.MaxConnections < 2 || c.Database.MaxConnections > 500 {
		errs = append(errs, fmt.Errorf("database.max_connections: %d is not between 2 and 500", c.Database.MaxConnections))
	}
	if c.PublicURL == "" && c.Cluster() {
		errs = append(errs, errors.New("public_url: required when [database] url and the [blob] s3_* settings are both set (several nodes behind a balancer): give the balancer's address, the same on every node, for example https://files.example.org (env ATRIUM_PUBLIC_URL, flag --public-url)"))
	} else if c.PublicURL == "" {
		c.PublicURL = c.derivePublicURL()
	} else if u, err := url.Parse(c.PublicURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		errs = append(errs, fmt.Errorf("public_url: %q is not an http(s) URL; give the address people reach this server at, for example https://files.example.org", c.PublicURL))
	} else if unspecifiedHost(u.Hostname()) {
		errs = append(errs, fmt.Errorf("public_url: %q names no reachable host (%s means every address of this machine): every share, invitation and download link would point at it; give the address people reach this server at, for example http://localhost:8080 or https://files.example.org", c.PublicURL, u.Hostname()))
	}
	c.PublicURL = strings.TrimRight(c.PublicURL, "/")
	switch c.Log.Level {
	case "debug", "info", "warn", "error":
	default:
		errs = append(errs, fmt.Errorf("log.level: %q is not debug, info, warn or error", c.Log.Level))
	}
	switch c.Log.Format {
	case "text", "json":
	default:
		errs = append(errs, fmt.Errorf("log.format: %q is not text or json", c.Log.Format))
	}
	if _, err := c.RetrySchedule(); err != nil {
		errs = append(errs, err)
	}
	if c.Webhooks.Timeout <= 0 {
		errs = append(errs, errors.New("webhooks.timeout: must be positive"))
	}
	if c.Audit.MaxAge < 0 || (c.Audit.MaxAge > 0 && c.Audit.MaxAge < 24*time.Hour) {
		errs = append(errs, errors.New("audit.max_age: must be 0 (kept for good) or at least 24h"))
	}
	if c.Webhooks.Retention <= 0 {
		errs = append(errs, errors.New("webhooks.retention: must be positive"))
	}
	if c.Web.SessionIdle < time.Minute || c.Web.SessionMaxAge < c.Web.SessionIdle {
		errs = append(errs, errors.New("web.session_idle and web.session_max_age: must be at least 1m, and session_max_age at least session_idle"))
	}
	errs = append(errs, c.Limits.validate()...)
	if c.Metrics.Listen != "" {
		if _, _, err := net.SplitHostPort(c.Metrics.Listen); err != nil {
			errs = append(errs, fmt.Errorf("metrics.listen: %q is not host:port", c.Metrics.Listen))
		}
	}
	if c.Metrics.Pprof && c.Metrics.Listen == "" {
		errs = append(errs, errors.New("metrics.pprof: the profiler is served on the metrics listener only: set metrics.listen too (e.g. \"127.0.0.1:9090\")"))
	}
	if t := c.Metrics.Token; t != "" && len(t) < 16 {
		errs = append(errs, errors.New("metrics.token: must be at least 16 characters (e.g. openssl rand -hex 16)"))
	}
	errs = append(errs, c.Drive.validate()...)
	errs = append(errs, c.Editor.validate()...)
	if (c.OIDC.Issuer == "") != (c.OIDC.JWKSURL == "") {
		errs = append(errs, errors.New("oidc: issuer and jwks_url go together"))
	}
	switch c.Mail.TLS {
	case "starttls", "tls", "none":
	default:
		errs = append(errs, fmt.Errorf("mail.tls: %q is not starttls, tls or none", c.Mail.TLS))
	}
	return errors.Join(errs...)
}

// Cluster reports whether the node may be one of several: the metadata in
// PostgreSQL and the bytes in an object store, nothing of the state on this
// machine.
func (c *Config) Cluster() bool {
	return c.Database.URL != "" && c.Blob.S3()
}

// BlobConfig is the [blob] section: the S3-compatible store that holds the
// bytes, when set.
type BlobConfig struct {
	S3Endpoint       string `koanf:"s3_endpoint"`
	S3PublicEndpoint string `koanf:"s3_public_endpoint"`
	S3Bucket         string `koanf:"s3_bucket"`
	S3Region         string `koanf:"s3_region"`
	S3AccessKey      string `koanf:"s3_access_key"`
	S3SecretKey      string `koanf:"s3_secret_key"`
}

// S3 reports whether any s3_ setting is set: the bytes then go to the store
// (and Validate asks for every setting it needs).
func (b BlobConfig) S3() bool {
	return b != BlobConfig{}
}

// s3 is the store's configuration, spooling under the data directory.
func (b BlobConfig) s3(data string) s3blob.Config {
	return s3blob.Config{Endpoint: b.S3Endpoint, PublicEndpoint: b.S3PublicEndpoint, Bucket: b.S3Bucket, Region: b.S3Region,
		AccessKey: b.S3AccessKey, SecretKey: b.S3SecretKey, Scratch: filepath.Join(data, "s3-scratch")}
}

// derivePublicURL is the public URL when none is configured: the listen
// address, or localhost with a warning when it listens on every address (in a
// container, say), where links to "0.0.0.0" would work nowhere.
func (c *Config) derivePublicURL() string {
	host, port, err := net.SplitHostPort(c.Listen)
	if err != nil || !unspecifiedHost(host) {
		return "http://" + c.Listen
	}
	u := "http://" + net.JoinHostPort("localhost", port)
	c.Warnings = append(c.Warnings, fmt.Sprintf("public_url is not set and listen %s takes every address of this machine: "+
		"share, invitation and download links will point at %s, which works only on this machine. "+
		"Set ATRIUM_PUBLIC_URL (or public_url, or --public-url) to the address people reach Atrium at, for example https://files.example.org", c.Listen, u))
	return u
}

// unspecifiedHost reports whether host means "every address" (empty, 0.0.0.0, ::).
func unspecifiedHost(host string) bool {
	if host == "" {
		return true
	}
	a, err := netip.ParseAddr(host)
	return err == nil && a.IsUnspecified()
}

// RetrySchedule parses webhooks.retry_schedule: six comma-separated durations.
func (c *Config) RetrySchedule() ([]time.Duration, error) {
	parts := strings.Split(c.Webhooks.RetrySchedule, ",")
	var out []time.Duration
	for _, p := range parts {
		d, err := time.ParseDuration(strings.TrimSpace(p))
		if err != nil || d < 0 {
			return nil, fmt.Errorf("webhooks.retry_schedule: %q is not a duration", strings.TrimSpace(p))
		}
		out = append(out, d)
	}
	if len(out) == 0 {
		return nil, errors.New("webhooks.retry_schedule: must list at least one duration")
	}
	return out, nil
}

// DriveConfig is the [drive] section: uploads and retention.
type DriveConfig struct {
	UploadTTL           time.Duration `koanf:"upload_ttl"`
	MaxUploadBytes      int64         `koanf:"max_upload_bytes"`
	VersionMaxCount     int           `koanf:"version_max_count"`
	VersionMaxAge       time.Duration `koanf:"version_max_age"`
	TrashMaxAge         time.Duration `koanf:"trash_max_age"`
	SyncLogMaxAge       time.Duration `koanf:"sync_log_max_age"`
	MaintenanceInterval time.Duration `koanf:"maintenance_interval"`
	// ArchiveAfter archives files nobody downloaded for this long; 0: off.
	ArchiveAfter time.Duration `koanf:"archive_after"`
	// PreviewCacheBytes caps cached thumbnails and previews (LRU eviction);
	// PreviewMaxPixels refuses larger source images (decompression bombs).
	PreviewCacheBytes int64 `koanf:"preview_cache_bytes"`
	PreviewMaxPixels  int64 `koanf:"preview_max_pixels"`
	// IndexInterval is how often new changes are applied to the search index
	// (a search applies them first anyway); a tick during a burst of writes
	// is skipped, for up to 10 s (app/drive/indexer).
	IndexInterval time.Duration `koanf:"index_interval"`
}

func (d DriveConfig) validate() []error {
	var errs []error
	for _, c := range []struct {
		key string
		v   time.Duration
	}{{"upload_ttl", d.UploadTTL}, {"version_max_age", d.VersionMaxAge}, {"trash_max_age", d.TrashMaxAge},
		{"sync_log_max_age", d.SyncLogMaxAge}, {"maintenance_interval", d.MaintenanceInterval}} {
		if c.v <= 0 {
			errs = append(errs, fmt.Errorf("drive.%s: must be positive", c.key))
		}
	}
	if d.IndexInterval <= 0 {
		errs = append(errs, errors.New("drive.index_interval: must be positive"))
	}
	if d.ArchiveAfter < 0 {
		errs = append(errs, errors.New("drive.archive_after: must be 0 (off) or positive"))
	}
	if d.VersionMaxCount < 1 {
		errs = append(errs, errors.New("drive.version_max_count: must be at least 1"))
	}
	if d.MaxUploadBytes < 1 {
		errs = append(errs, errors.New("drive.max_upload_bytes: must be positive"))
	}
	if d.PreviewCacheBytes < 1 || d.PreviewMaxPixels < 1 {
		errs = append(errs, errors.New("drive.preview_cache_bytes and drive.preview_max_pixels: must be positive"))
	}
	return errs
}

func (d DriveConfig) options() drive.Options {
	return drive.Options{UploadTTL: d.UploadTTL, MaxUploadBytes: d.MaxUploadBytes, MaxVersions: d.VersionMaxCount,
		VersionMaxAge: d.VersionMaxAge, TrashMaxAge: d.TrashMaxAge, TombstoneMaxAge: d.SyncLogMaxAge,
		PreviewCacheBytes: d.PreviewCacheBytes, PreviewMaxPixels: d.PreviewMaxPixels}
}

// EditorConfig is the [editor] section: the online editor (WOPI) and the
// document converter.
type EditorConfig struct {
	// URL is the base URL of a Collabora Online or ONLYOFFICE Docs server; empty: none.
	URL string `koanf:"url"`
	// WOPIURL is the base URL the editor reaches Atrium at; empty: public_url.
	WOPIURL          string        `koanf:"wopi_url"`
	DiscoveryTimeout time.Duration `koanf:"discovery_timeout"`
	AccessTokenTTL   time.Duration `koanf:"access_token_ttl"`
	// VerifyProof checks the X-WOPI-Proof of WOPI requests when the
	// editor's discovery has a proof key.
	VerifyProof bool `koanf:"verify_proof"`
	// SofficePath is LibreOffice's soffice for save-as-odf; empty: looked up on PATH.
	SofficePath    string        `koanf:"soffice_path"`
	ConvertTimeout time.Duration `koanf:"convert_timeout"`
}

func (e *EditorConfig) validate() []error {
	var errs []error
	for _, c := range []struct {
		key string
		v   *string
	}{{"url", &e.URL}, {"wopi_url", &e.WOPIURL}} {
		if *c.v == "" {
			continue
		}
		if u, err := url.Parse(*c.v); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" {
			errs = append(errs, fmt.Errorf("editor.%s: %q is not an http(s) URL", c.key, *c.v))
		}
		*c.v = strings.TrimRight(*c.v, "/")
	}
	if e.DiscoveryTimeout <= 0 {
		errs = append(errs, errors.New("editor.discovery_timeout: must be positive"))
	}
	if e.AccessTokenTTL < time.Minute || e.AccessTokenTTL > 7*24*time.Hour {
		errs = append(errs, errors.New("editor.access_token_ttl: must be between 1m and 168h"))
	}
	if e.ConvertTimeout <= 0 {
		errs = append(errs, errors.New("editor.convert_timeout: must be positive"))
	}
	return errs
}

func (e EditorConfig) options(key []byte) drive.EditorOptions {
	timeout := e.DiscoveryTimeout
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	return drive.EditorOptions{URL: e.URL, WOPIURL: e.WOPIURL, DiscoveryTimeout: e.DiscoveryTimeout, TokenTTL: e.AccessTokenTTL, TokenKey: key,
		SkipProof: !e.VerifyProof, Discovery: wopi.NewDiscoveryClient(strings.TrimRight(e.URL, "/"), timeout)}
}

// LimitsConfig is the [limits] section: protection from overload and abuse. A
// count or rate of 0 turns that limit off.
type LimitsConfig struct {
	AuthFailures       int           `koanf:"auth_failures"`
	AuthFailureBackoff time.Duration `koanf:"auth_failure_backoff"`
	AuthFailuresPerIP  int           `koanf:"auth_failures_per_ip"`
	// AuthFailuresPerAccount and AuthCodeFailures: see web.Limits.
	AuthFailuresPerAccount int           `koanf:"auth_failures_per_account"`
	AuthCodeFailures       int           `koanf:"auth_code_failures"`
	AuthFailureWindow      time.Duration `koanf:"auth_failure_window"`
	AuthKnownClientTTL     time.Duration `koanf:"auth_known_client_ttl"`
	RatePerToken           float64       `koanf:"rate_per_token"`
	BurstPerToken          int           `koanf:"burst_per_token"`
	RatePerIP              float64       `koanf:"rate_per_ip"`
	BurstPerIP             int           `koanf:"burst_per_ip"`
	RequestTimeout         time.Duration `koanf:"request_timeout"`
	IOIdleTimeout          time.Duration `koanf:"io_idle_timeout"`
	MaxConnections         int           `koanf:"max_connections"`
	MaxConnectionsPerIP    int           `koanf:"max_connections_per_ip"`
	// TrustedProxies are reverse proxies in front of Atrium (addresses or CIDR
	// prefixes): their X-Forwarded-For names the client the limits count.
	TrustedProxies []string `koanf:"trusted_proxies"`
}

func (l LimitsConfig) validate() []error {
	var errs []error
	for name, v := range map[string]float64{
		"auth_failures": float64(l.AuthFailures), "auth_failures_per_ip": float64(l.AuthFailuresPerIP),
		"auth_failures_per_account": float64(l.AuthFailuresPerAccount), "auth_code_failures": float64(l.AuthCodeFailures),
		"rate_per_token": l.RatePerToken, "burst_per_token": float64(l.BurstPerToken),
		"rate_per_ip": l.RatePerIP, "burst_per_ip": float64(l.BurstPerIP),
		"max_connections": float64(l.MaxConnections), "max_connections_per_ip": float64(l.MaxConnectionsPerIP),
		"auth_failure_window": float64(l.AuthFailureWindow), "request_timeout": float64(l.RequestTimeout),
		"io_idle_timeout": float64(l.IOIdleTimeout), "auth_failure_backoff": float64(l.AuthFailureBackoff),
		"auth_known_client_ttl": float64(l.AuthKnownClientTTL),
	} {
		if v < 0 {
			errs = append(errs, fmt.Errorf("limits.%s: must not be negative", name))
		}
	}
	if l.AuthFailures+l.AuthFailuresPerIP+l.AuthFailuresPerAccount+l.AuthCodeFailures > 0 && l.AuthFailureWindow == 0 {
		errs = append(errs, errors.New("limits.auth_failure_window: must be positive when auth failures are limited"))
	}
	if _, err := l.proxies(); err != nil {
		errs = append(errs, err)
	}
	return errs
}

// proxies parses trusted_proxies: each an address (10.0.0.5, ::1) or a CIDR prefix (10.0.0.0/8).
func (l LimitsConfig) proxies() ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, v := range l.TrustedProxies {
		v = strings.TrimSpace(v)
		if v == "" {
			continue
		}
		if p, err := netip.ParsePrefix(v); err == nil {
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(v)
		if err != nil {
			return nil, fmt.Errorf("limits.trusted_proxies: %q is neither an address nor a CIDR prefix", v)
		}
		out = append(out, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
	}
	return out, nil
}

// web returns the server's limits.
func (l LimitsConfig) web() *web.Limits {
	return &web.Limits{
		AuthFailures: l.AuthFailures, AuthFailureBackoff: l.AuthFailureBackoff,
		AuthFailuresPerIP: l.AuthFailuresPerIP, AuthFailureWindow: l.AuthFailureWindow, KnownClientTTL: l.AuthKnownClientTTL,
		AuthFailuresPerAccount: l.AuthFailuresPerAccount, AuthCodeFailures: l.AuthCodeFailures,
		RatePerToken: l.RatePerToken, BurstPerToken: l.BurstPerToken,
		RatePerIP: l.RatePerIP, BurstPerIP: l.BurstPerIP,
		RequestTimeout: l.RequestTimeout, IOIdleTimeout: l.IOIdleTimeout,
		TrustedProxies: l.mustProxies(),
	}
}

// mustProxies is proxies of a validated configuration.
func (l LimitsConfig) mustProxies() []netip.Prefix {
	p, err := l.proxies()
	if err != nil {
		panic(err) // Validate refused it
	}
	return p
}
