package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"atrium/webtest"
)

// run runs the atrium command line with args and returns its output.
//
// When a --data directory is a test server's whose database is PostgreSQL
// or whose bytes are in a bucket (webtest.ConfigTOML), the command gets them
// as an operator would, in a configuration file ([database] url, [blob]),
// unless the arguments name one.
func run(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	if i := slices.Index(args, "--data"); i >= 0 && i+1 < len(args) && !slices.Contains(args, "--config") {
		if toml := webtest.ConfigTOML(args[i+1]); toml != "" {
			config := filepath.Join(t.TempDir(), "database.toml")
			if err := os.WriteFile(config, []byte(toml), 0o600); err != nil {
				t.Fatal(err)
			}
			args = append(args, "--config", config)
		}
	}
	var out, errb bytes.Buffer
	cmd := newRootCmd(&out, &errb)
	cmd.SetArgs(args)
	err = cmd.ExecuteContext(context.Background())
	return out.String(), errb.String(), err
}

// atrium backup (data directory from --config) beside a running server, then
// atrium restore with --config-to: the restored directory serves the same
// user with the same token, and the configuration file came back.
func TestBackupRestoreCommands(t *testing.T) {
	t.Parallel()
	s := webtest.New(t)
	if webtest.S3(s.Data) {
		// With the bytes in a bucket, backup refuses and says where they are.
		config := filepath.Join(t.TempDir(), "atrium.toml")
		if err := os.WriteFile(config, []byte("data = "+tomlQuote(s.Data)+"\n"+webtest.ConfigTOML(s.Data)), 0o600); err != nil {
			t.Fatal(err)
		}
		_, _, err := run(t, "backup", "--config", config, "--to", filepath.Join(t.TempDir(), "b.tar.zst"))
		if err == nil || !strings.Contains(err.Error(), "pg_dump") && !strings.Contains(err.Error(), webtest.Blob(s.Data).S3Bucket) {
			t.Fatalf("backup with the bytes in a bucket: %v, want a refusal naming the bucket (or pg_dump)", err)
		}
		if err != nil && strings.Contains(err.Error(), webtest.Blob(s.Data).S3SecretKey) {
			t.Fatalf("the refusal shows the secret key: %v", err)
		}
		return
	}
	if url := webtest.DatabaseURL(s.Data); url != "" {
		// With the metadata in PostgreSQL, backup refuses and says what to use.
		config := filepath.Join(t.TempDir(), "atrium.toml")
		if err := os.WriteFile(config, []byte("data = "+tomlQuote(s.Data)+"\n[database]\nurl = "+tomlQuote(url)+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, _, err := run(t, "backup", "--config", config, "--to", filepath.Join(t.TempDir(), "b.tar.zst")); err == nil || !strings.Contains(err.Error(), "pg_dump") {
			t.Fatalf("backup with the metadata in PostgreSQL: %v, want a refusal naming pg_dump", err)
		}
		return
	}
	cr := s.Bootstrap("CLI Org", "ann@cli.test", "admin")
	dir := t.TempDir()
	config := filepath.Join(dir, "atrium.toml")
	toml := "data = " + tomlQuote(s.Data) + "\n[log]\nlevel = \"warn\"\n"
	if err := os.WriteFile(config, []byte(toml), 0o600); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "nightly.tar.zst")
	out, errOut, err := run(t, "backup", "--config", config, "--to", file)
	if err != nil {
		t.Fatalf("backup: %v\n%s", err, errOut)
	}
	if !strings.HasPrefix(out, "backed up "+s.Data+": database ") || !strings.Contains(out, "config included") || strings.Count(out, "\n") != 1 {
		t.Errorf("backup summary %q", out)
	}
	if errOut != "" {
		t.Errorf("backup wrote to stderr (no terminal: no progress bar): %q", errOut)
	}

	data, configTo := filepath.Join(dir, "restored"), filepath.Join(dir, "restored.toml")
	out, errOut, err = run(t, "restore", "--from", file, "--data", data, "--config-to", configTo, "--quiet")
	if err != nil {
		t.Fatalf("restore: %v\n%s", err, errOut)
	}
	if !strings.HasPrefix(out, "restored the backup of ") || !strings.Contains(out, "config → "+configTo) {
		t.Errorf("restore summary %q", out)
	}
	if b, _ := os.ReadFile(configTo); string(b) != toml {
		t.Errorf("restored configuration %q, want %q", b, toml)
	}
	s2 := webtest.Start(t, data)
	if res := s2.Do(webtest.Request{Method: "GET", Path: "/api/v1/me", Token: cr.Token}); res.StatusCode != 200 || !strings.Contains(string(res.Body), "ann@cli.test") {
		t.Errorf("the token after restore: %d %s", res.StatusCode, res.Body)
	}

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"restore", "--from", file, "--data", data}, "not empty"},
		{[]string{"backup", "--data", s.Data, "--to", file}, "already exists"},
		{[]string{"backup", "--data", filepath.Join(dir, "nothing"), "--to", filepath.Join(dir, "x.tar.zst")}, "no Atrium database"},
		{[]string{"restore", "--from", filepath.Join(dir, "missing.tar.zst"), "--data", filepath.Join(dir, "d2")}, "no such file"},
		{[]string{"backup", "--data", s.Data}, `"to" not set`},
	} {
		if _, _, err := run(t, tc.args...); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("atrium %s: %v, want an error containing %q", strings.Join(tc.args, " "), err, tc.want)
		}
	}
}

func tomlQuote(s string) string { return `"` + strings.ReplaceAll(s, `\`, `\\`) + `"` }
