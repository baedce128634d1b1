package wire

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
)

func TestConfigPrecedence(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "atrium.toml")
	if err := os.WriteFile(file, []byte(`
listen = "127.0.0.1:9001"
data = "/from/file"
public_url = "https://file.example"
[webhooks]
timeout = "3s"
retry_schedule = "0s,1s"
`), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"ATRIUM_DATA": "/from/env", "ATRIUM_PUBLIC_URL": "https://env.example", "ATRIUM_WEBHOOK_TIMEOUT": "4s"}
	flags := pflag.NewFlagSet("t", pflag.ContinueOnError)
	flags.String("listen", "", "")
	flags.String("data", "", "")
	flags.String("public-url", "", "")
	if err := flags.Parse([]string{"--public-url", "https://flag.example/"}); err != nil {
		t.Fatal(err)
	}
	cfg, err := LoadConfig(file, func(k string) string { return env[k] }, flags)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct{ name, got, want string }{
		{"file over default", cfg.Listen, "127.0.0.1:9001"},
		{"env over file", cfg.Data, "/from/env"},
		{"flag over env", cfg.PublicURL, "https://flag.example"},
		{"env duration over file", cfg.Webhooks.Timeout.String(), "4s"},
		{"file value kept", cfg.Webhooks.RetrySchedule, "0s,1s"},
		{"default kept", cfg.Log.Level, "info"},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s: got %q, want %q", tt.name, tt.got, tt.want)
		}
	}

	def, err := LoadConfig("", func(string) string { return "" }, nil)
	if err != nil {
		t.Fatal(err)
	}
	if def.Listen != "127.0.0.1:8080" || def.Data != "./data" || def.PublicURL != "http://127.0.0.1:8080" || def.Webhooks.Timeout != 10*time.Second {
		t.Fatalf("defaults: %+v", def)
	}
	if s, _ := def.RetrySchedule(); len(s) != 6 || s[5] != 12*time.Hour {
		t.Fatalf("default retry schedule %v", s)
	}
}

func TestConfigErrorsNameTheKey(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, toml string
		env        map[string]string
		want       string
	}{
		{name: "unknown key", toml: "listne = \"x\"\n", want: "listne"},
		{name: "unknown nested key", toml: "[webhooks]\nretries = 3\n", want: "retries"},
		{name: "bad duration", toml: "[webhooks]\ntimeout = \"soon\"\n", want: "timeout"},
		{name: "bad listen", toml: "listen = \"nohost\"\n", want: "listen"},
		{name: "bad public url", toml: "public_url = \"ftp://x\"\n", want: "public_url"},
		{name: "bad log level", env: map[string]string{"ATRIUM_LOG_LEVEL": "loud"}, want: "log.level"},
		{name: "bad retry schedule", env: map[string]string{"ATRIUM_WEBHOOK_RETRY_SCHEDULE": "1s,later"}, want: "retry_schedule"},
		{name: "bad toml", toml: "listen = \n", want: "atrium.toml"},
		{name: "bad editor url", env: map[string]string{"ATRIUM_EDITOR_URL": "ftp://office"}, want: "editor.url"},
		{name: "bad wopi url", toml: "[editor]\nwopi_url = \"nohost\"\n", want: "editor.wopi_url"},
		{name: "token ttl too long", toml: "[editor]\naccess_token_ttl = \"720h\"\n", want: "editor.access_token_ttl"},
		{name: "bad convert timeout", toml: "[editor]\nconvert_timeout = \"0s\"\n", want: "editor.convert_timeout"},
		{name: "bad trusted proxy", env: map[string]string{"ATRIUM_TRUSTED_PROXIES": "10.0.0.0/8,proxy.lan"}, want: "limits.trusted_proxies"},
		{name: "audit kept for under a day", env: map[string]string{"ATRIUM_AUDIT_MAX_AGE": "1h"}, want: "audit.max_age"},
		{name: "bad trusted prefix", toml: "[limits]\ntrusted_proxies = [\"10.0.0.0/33\"]\n", want: "limits.trusted_proxies"},
		{name: "bad number names the variable", env: map[string]string{"ATRIUM_MAIL_PORT": "abc"},
			want: `mail.port (set in ATRIUM_MAIL_PORT): "abc" is not a whole number`},
		{name: "bad duration value and units", toml: "[drive]\ntrash_max_age = \"5x\"\n",
			want: `"5x" is not a duration: write a number and a unit, ms, s, m or h`},
		{name: "bad boolean", env: map[string]string{"ATRIUM_EDITOR_VERIFY_PROOF": "maybe"}, want: `"maybe" is not true or false`},
		{name: "unknown key names its section", toml: "[webhooks]\nretries = 3\n", want: "unknown option in [webhooks]"},
		{name: "public url at every address", env: map[string]string{"ATRIUM_PUBLIC_URL": "http://0.0.0.0:8080"}, want: "names no reachable host"},
		{name: "public url at every IPv6 address", env: map[string]string{"ATRIUM_PUBLIC_URL": "http://[::]:8080"}, want: "public_url"},
		{name: "pool too small", env: map[string]string{"ATRIUM_DATABASE_MAX_CONNECTIONS": "1"}, want: "database.max_connections"},
		{name: "pool too large", toml: "[database]\nmax_connections = 501\n", want: "database.max_connections"},
		{name: "cluster without public url", env: map[string]string{"ATRIUM_DATABASE_URL": "postgres://atrium@db:5432/atrium",
			"ATRIUM_S3_ENDPOINT": "https://s3.example.org", "ATRIUM_S3_BUCKET": "atrium", "ATRIUM_S3_ACCESS_KEY": "AK",
			"ATRIUM_S3_SECRET_KEY": "secret-key-of-the-test"}, want: "public_url: required when [database] url and the [blob] s3_* settings are both set"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			file := ""
			if tt.toml != "" {
				file = filepath.Join(t.TempDir(), "atrium.toml")
				if err := os.WriteFile(file, []byte(tt.toml), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			_, err := LoadConfig(file, func(k string) string { return tt.env[k] }, nil)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want one naming %q", err, tt.want)
			}
		})
	}
}

// [database] max_connections sizes the node's pool: 20 unless set; a
// cluster's nodes start with a public URL.
func TestConfigCluster(t *testing.T) {
	t.Parallel()
	def, err := LoadConfig("", func(string) string { return "" }, nil)
	if err != nil {
		t.Fatal(err)
	}
	if def.Database.MaxConnections != 20 || def.Cluster() {
		t.Fatalf("default: max_connections %d, cluster %v", def.Database.MaxConnections, def.Cluster())
	}
	env := map[string]string{"ATRIUM_DATABASE_URL": "postgres://atrium@db:5432/atrium", "ATRIUM_DATABASE_MAX_CONNECTIONS": "40",
		"ATRIUM_S3_ENDPOINT": "https://s3.example.org", "ATRIUM_S3_BUCKET": "atrium", "ATRIUM_S3_ACCESS_KEY": "AK",
		"ATRIUM_S3_SECRET_KEY": "secret-key-of-the-test", "ATRIUM_PUBLIC_URL": "https://files.example.org"}
	cfg, err := LoadConfig("", func(k string) string { return env[k] }, nil)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Database.MaxConnections != 40 || !cfg.Cluster() || cfg.PublicURL != "https://files.example.org" {
		t.Fatalf("cluster: max_connections %d, cluster %v, public url %q", cfg.Database.MaxConnections, cfg.Cluster(), cfg.PublicURL)
	}
	// Either setting alone is one node: the public URL may be derived.
	delete(env, "ATRIUM_PUBLIC_URL")
	delete(env, "ATRIUM_S3_ENDPOINT")
	delete(env, "ATRIUM_S3_BUCKET")
	delete(env, "ATRIUM_S3_ACCESS_KEY")
	delete(env, "ATRIUM_S3_SECRET_KEY")
	if cfg, err := LoadConfig("", func(k string) string { return env[k] }, nil); err != nil || cfg.PublicURL == "" {
		t.Fatalf("PostgreSQL alone: %v, public url %q", err, cfg.PublicURL)
	}
}

func TestConfigTrustedProxies(t *testing.T) {
	t.Parallel()
	c, err := LoadConfig("", func(k string) string {
		return map[string]string{"ATRIUM_TRUSTED_PROXIES": "127.0.0.1, 10.0.0.0/8,::1"}[k]
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := fmt.Sprint(c.Limits.web().TrustedProxies)
	if got != "[127.0.0.1/32 10.0.0.0/8 ::1/128]" {
		t.Fatalf("trusted proxies %s", got)
	}
}

func TestConfigEditor(t *testing.T) {
	t.Parallel()
	// The example file documents every option with its default.
	ex, err := LoadConfig("../config.example.toml", func(string) string { return "" }, nil)
	if err != nil {
		t.Fatal(err)
	}
	if ex.Editor.URL != "" || ex.Editor.AccessTokenTTL != 10*time.Hour || ex.Editor.DiscoveryTimeout != 10*time.Second || ex.Editor.ConvertTimeout != 2*time.Minute ||
		!ex.Editor.VerifyProof {
		t.Fatalf("example editor section: %+v", ex.Editor)
	}
	env := map[string]string{"ATRIUM_EDITOR_URL": "https://office.example/", "ATRIUM_EDITOR_WOPI_URL": "http://atrium:8080",
		"ATRIUM_EDITOR_ACCESS_TOKEN_TTL": "2h", "ATRIUM_EDITOR_SOFFICE_PATH": "/opt/lo/soffice",
		"ATRIUM_EDITOR_VERIFY_PROOF": "false"}
	cfg, err := LoadConfig("", func(k string) string { return env[k] }, nil)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Editor.URL != "https://office.example" || cfg.Editor.WOPIURL != "http://atrium:8080" || cfg.Editor.AccessTokenTTL != 2*time.Hour ||
		cfg.Editor.SofficePath != "/opt/lo/soffice" || cfg.Editor.VerifyProof {
		t.Fatalf("env editor section: %+v", cfg.Editor)
	}
}

// TestContainerStartUp loads the configuration the way the container image
// starts (the ENV of the Dockerfile): without ATRIUM_PUBLIC_URL the links point
// at localhost, with a warning, never at 0.0.0.0; with it, at the given URL.
func TestContainerStartUp(t *testing.T) {
	t.Parallel()
	dockerfile, err := os.ReadFile("../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{}
	for _, line := range strings.Split(string(dockerfile), "\n") {
		if rest, ok := strings.CutPrefix(line, "ENV "); ok {
			for _, kv := range strings.Fields(rest) {
				k, v, _ := strings.Cut(kv, "=")
				env[k] = v
			}
		}
	}
	if env["ATRIUM_LISTEN"] == "" || env["ATRIUM_DATA"] == "" {
		t.Fatalf("Dockerfile ENV: %v", env)
	}
	cfg, err := LoadConfig("", func(k string) string { return env[k] }, nil)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.PublicURL != "http://localhost:8080" || len(cfg.Warnings) != 1 || !strings.Contains(cfg.Warnings[0], "ATRIUM_PUBLIC_URL") {
		t.Fatalf("without ATRIUM_PUBLIC_URL: public url %q, warnings %q", cfg.PublicURL, cfg.Warnings)
	}
	env["ATRIUM_PUBLIC_URL"] = "https://files.example.org/"
	cfg, err = LoadConfig("", func(k string) string { return env[k] }, nil)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.PublicURL != "https://files.example.org" || len(cfg.Warnings) != 0 {
		t.Fatalf("with ATRIUM_PUBLIC_URL: public url %q, warnings %q", cfg.PublicURL, cfg.Warnings)
	}
}
