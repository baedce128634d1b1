// Command atrium is the Atrium workspace server: contacts, calendar, drive, a
// partner API and webhooks in one binary.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"atrium/app"
	"atrium/storage/sqldb"
	"atrium/web"
	"atrium/wire"
)

// memoryLimit is the soft limit of the Go runtime's memory of serve and
// reindex unless GOMEMLIMIT sets one (see docs/operations.md, "Memory and
// durable writes"). It is the Go heap's share of a resident set of 128 MiB
// under load: the rest is the pages of the binary the server runs (some 30-40
// MB), SQLite's page caches (up to 2 MB for the writer and 8 MB for each of
// the readers) and the pages of the search index's files that it read
// lately. The search index's live heap while it takes in a burst of files is
// bounded by design (index, app/drive/indexer): some 15-35 MB over the
// server's 10 MB at rest. The collector then runs often, not back to back: a
// burst of 10,000 small files (bench/memory-burst.sh) peaked at 115-120 MiB
// resident and was indexed at 555-730 files a second, against 192-196 MiB and
// 1,020-1,390 files a second under 128 MiB (three alternating pairs; the
// 10,000 PUTs themselves took as long either way, 3.4-4.5 s against
// 3.3-3.6 s). Under 48 MiB the collector once ran back to back while small
// uploads came in (the search index then held some 35 MB of new segments
// during a burst; it waits out a burst since): 1,000 small TUS uploads now
// take as long under either limit (0.54-0.59 s against 0.56-0.65 s, the
// third round of bench/smalluploads' tus-app, three alternating pairs).
const memoryLimit = 48 << 20

// gcPercent is serve's and reindex's GOGC unless the environment sets one:
// the heap may grow to three times what is live (Go's default is twice)
// before the collector runs, within memoryLimit, which bounds it when the
// live heap is large. A request allocates a few KB that die with it; with the
// default the collector ran some 20 times a second under load and took about
// a fifth of the CPU of REST requests. With wrk -t2 -c64 on GET /api/v1/me (2
// cores, server and wrk sharing them): 39.0k req/s at 200 against 33.6k at
// 100 (medians of four alternating runs); 400 served no more (45.6k against
// 44.9k in three later pairs, with the JSON encoder of web/jsonformat.go) and
// held more: peak RSS under that load 75-78 MB at 200, 92-97 at 400, 66-68 at
// 100, and in the 10-minute soak (bench/soak.sh) 142-176 MiB at 400 against
// 87.6 and 92.3 (its second and last minutes) at 100.
const gcPercent = 200

// limitMemory sets the soft memory limit unless GOMEMLIMIT set one, and the
// GC percent unless GOGC set one (the runtime read both at start). A soft
// limit: the collector works harder as the Go heap nears it (it never refuses
// memory), so a small machine's server gives back what a burst took instead
// of growing to twice its peak.
func limitMemory() {
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(memoryLimit)
	}
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(gcPercent)
	}
}

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := newRootCmd(os.Stdout, os.Stderr).ExecuteContext(ctx)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "atrium:", err)
		os.Exit(1)
	}
}

func newRootCmd(stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:           "atrium",
		Short:         "Atrium: a self-hosted workspace platform in one binary",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.AddCommand(newServeCmd(), newBootstrapCmd(), newTokenCmd(), newMailCmd(), newMigrateCmd(), newVersionCmd(), newDriveCmd(), newReindexCmd(), newBackupCmd(), newRestoreCmd(), newCopyDataCmd())
	return root
}

// dataFlags adds the flags that locate the configuration and data, shared by
// commands that open the data directory.
func dataFlags(f *pflag.FlagSet) {
	f.String("config", "", "TOML configuration file")
	f.String("data", "./data", "data directory (env ATRIUM_DATA)")
}

// loadFor loads the configuration of a command from its flags.
func loadFor(cmd *cobra.Command) (wire.Config, error) {
	path, _ := cmd.Flags().GetString("config")
	return wire.LoadConfig(path, os.Getenv, cmd.Flags())
}

// openFor opens the data directory of a command that works on it without
// serving (bootstrap, token, mail): quietly, and safe while a server runs on it.
func openFor(cmd *cobra.Command) (*wire.Main, error) {
	cfg, err := loadFor(cmd)
	if err != nil {
		return nil, err
	}
	return wire.Open(cmd.Context(), cfg, wire.NewLogger(cfg, io.Discard))
}

func newServeCmd() *cobra.Command {
	var demo bool
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the server",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := loadFor(cmd)
			if err != nil {
				return err
			}
			limitMemory()
			log, flushLog := wire.NewServeLogger(cfg, cmd.ErrOrStderr())
			defer flushLog()
			for _, w := range cfg.Warnings {
				log.Warn(w)
			}
			if cfg.Mail.Host == "" {
				log.Info("no SMTP server is configured ([mail] host, ATRIUM_MAIL_HOST): invitation and password-reset e-mails, with their links, " +
					"are kept in the outbox; read them with: atrium mail list --data " + cfg.Data)
			}
			start := time.Now()
			m, err := wire.Open(cmd.Context(), cfg, log, wire.Serving())
			if err != nil {
				return err
			}
			defer m.Close()
			addr, err := m.Listen()
			if err != nil {
				return err
			}
			if demo {
				creds, err := wire.SeedDemo(cmd.Context(), m)
				if err != nil {
					return fmt.Errorf("demo data: %w", err)
				}
				wire.PrintDemo(cmd.OutOrStdout(), cfg.PublicURL, creds)
			}
			log.Info("atrium listening", "addr", addr.String(), "public_url", cfg.PublicURL, "data", cfg.Data,
				"version", version, "startup_ms", time.Since(start).Milliseconds())
			return m.Serve(cmd.Context())
		},
	}
	dataFlags(cmd.Flags())
	cmd.Flags().String("listen", "127.0.0.1:8080", "address to listen on (env ATRIUM_LISTEN)")
	cmd.Flags().String("public-url", "", "public URL of the server (env ATRIUM_PUBLIC_URL; default http://<listen>)")
	cmd.Flags().BoolVar(&demo, "demo", false, "seed demo organisations, users and content (once) and print credentials")
	return cmd
}

func newBootstrapCmd() *cobra.Command {
	var orgName, email, role string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "bootstrap",
		Short: "Ensure an operator organisation and a user, and print a fresh token and app password",
		Long: "Ensures a top-level reseller organisation (on the enterprise plan) and a user in it, then prints " +
			"a new personal access token and app password for that user. A user who has no account password yet also gets " +
			"a link (password_url) where they choose one and can then sign in to the web app: a password reset link, " +
			"single use and valid 24 hours, built on the public URL (--public-url, ATRIUM_PUBLIC_URL or public_url: give the " +
			"server's). Safe to run while a server uses the same data directory.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			m, err := openFor(cmd)
			if err != nil {
				return err
			}
			defer m.Close()
			o, err := m.Bootstrap(cmd.Context(), orgName, email, role)
			if err != nil {
				return err
			}
			if asJSON {
				return json.NewEncoder(cmd.OutOrStdout()).Encode(o)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "organization: %s\nuser:         %s (%s)\ntoken:        %s\napp password: %s\n",
				o.OrganizationID, o.Email, o.UserID, o.Token, o.AppPassword)
			if o.PasswordURL != "" {
				fmt.Fprintf(cmd.OutOrStdout(), "Set your password at %s (valid 24 hours, once), then sign in to the web app.\n", o.PasswordURL)
			}
			return nil
		},
	}
	dataFlags(cmd.Flags())
	cmd.Flags().StringVar(&orgName, "org-name", "Operator", "organisation name")
	cmd.Flags().StringVar(&email, "admin-email", "admin@example.test", "user e-mail address")
	cmd.Flags().StringVar(&role, "role", "admin", "user role: admin or member")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON object")
	cmd.Flags().String("public-url", "", "public URL of the server, for the password link (env ATRIUM_PUBLIC_URL)")
	return cmd
}

func newTokenCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "token", Short: "Manage personal access tokens"}
	var user, scopes string
	var ttl time.Duration
	var asJSON bool
	create := &cobra.Command{
		Use:   "create",
		Short: "Create a personal access token for a user",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			m, err := openFor(cmd)
			if err != nil {
				return err
			}
			defer m.Close()
			var list []string
			for _, s := range strings.Split(scopes, ",") {
				if s = strings.TrimSpace(s); s != "" {
					list = append(list, s)
				}
			}
			o, err := m.Token(cmd.Context(), user, list, ttl)
			if err != nil {
				return err
			}
			if asJSON {
				return json.NewEncoder(cmd.OutOrStdout()).Encode(o)
			}
			fmt.Fprintln(cmd.OutOrStdout(), o.Token)
			return nil
		},
	}
	dataFlags(create.Flags())
	create.Flags().StringVar(&user, "user", "", "e-mail address of the user (required)")
	create.Flags().StringVar(&scopes, "scopes", "", "comma-separated scopes (default: every scope the user's role allows)")
	create.Flags().DurationVar(&ttl, "ttl", 720*time.Hour, "lifetime of the token (0: no expiry)")
	create.Flags().BoolVar(&asJSON, "json", false, "print one JSON object")
	_ = create.MarkFlagRequired("user")
	cmd.AddCommand(create)
	return cmd
}

func newMailCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "mail", Short: "Inspect the outgoing e-mail outbox"}
	var asJSON bool
	var limit int
	list := &cobra.Command{
		Use:   "list",
		Short: "List outgoing e-mail, newest first (invitations, password resets)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			m, err := openFor(cmd)
			if err != nil {
				return err
			}
			defer m.Close()
			mails, err := m.Mail.List(cmd.Context(), limit)
			if err != nil {
				return err
			}
			if asJSON {
				if mails == nil {
					mails = []app.Mail{}
				}
				return json.NewEncoder(cmd.OutOrStdout()).Encode(mails)
			}
			for _, ml := range mails {
				fmt.Fprintf(cmd.OutOrStdout(), "%s  %-7s %s  to %s\n  %s\n\n%s\n", ml.CreatedAt.Format(time.RFC3339), ml.Status, ml.ID, ml.To, ml.Subject, ml.Body)
			}
			return nil
		},
	}
	dataFlags(list.Flags())
	list.Flags().BoolVar(&asJSON, "json", false, "print a JSON array")
	list.Flags().IntVar(&limit, "limit", 100, "how many e-mails at most")
	cmd.AddCommand(list)
	return cmd
}

func newMigrateCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "migrate",
		Short: "Apply pending database migrations",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := loadFor(cmd)
			if err != nil {
				return err
			}
			var n int
			if cfg.Database.URL != "" {
				n, err = sqldb.MigratePostgres(cmd.Context(), cfg.Database.URL, wire.NewLogger(cfg, cmd.ErrOrStderr()))
			} else {
				if err := os.MkdirAll(cfg.Data, 0o700); err != nil {
					return err
				}
				n, err = sqldb.Migrate(cmd.Context(), cfg.Data+"/atrium.db", wire.NewLogger(cfg, cmd.ErrOrStderr()))
			}
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "applied %d migration(s); schema version %d\n", n, sqldb.MigrationVersion())
			return nil
		},
	}
	dataFlags(cmd.Flags())
	return cmd
}

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version",
		Args:  cobra.NoArgs,
		Run: func(cmd *cobra.Command, _ []string) {
			fmt.Fprintf(cmd.OutOrStdout(), "atrium %s (API %s, schema %d)\n", atriumVersion(), web.APIVersion, sqldb.MigrationVersion())
		},
	}
}

// atriumVersion is the version of this binary: set at build time, else the
// module version Go recorded, else "dev".
func atriumVersion() string {
	v := version
	if bi, ok := debug.ReadBuildInfo(); ok && v == "dev" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		v = bi.Main.Version
	}
	return v
}
