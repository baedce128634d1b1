package wire

import (
	"context"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"atrium/storage/s3blob"
)

const testSecret = "never-print-this-secret-key"

// The [blob] settings come from the file and the environment; with none set
// the bytes stay on the local disk.
func TestConfigBlob(t *testing.T) {
	t.Parallel()
	def, err := LoadConfig("", func(string) string { return "" }, nil)
	if err != nil {
		t.Fatal(err)
	}
	if def.Blob.S3() {
		t.Fatalf("default [blob]: %+v, want the local disk", def.Blob)
	}
	ex, err := LoadConfig("../config.example.toml", func(string) string { return "" }, nil)
	if err != nil {
		t.Fatal(err)
	}
	if ex.Blob.S3() {
		t.Fatalf("example [blob]: %+v, want the local disk", ex.Blob)
	}
	file := filepath.Join(t.TempDir(), "atrium.toml")
	if err := os.WriteFile(file, []byte("[blob]\ns3_endpoint = \"https://s3.file.example\"\ns3_bucket = \"from-file\"\ns3_region = \"eu-west-3\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"ATRIUM_S3_ENDPOINT": "http://127.0.0.1:7070", "ATRIUM_S3_ACCESS_KEY": "AK",
		"ATRIUM_S3_SECRET_KEY": testSecret, "ATRIUM_S3_PUBLIC_ENDPOINT": "https://files.example.org"}
	cfg, err := LoadConfig(file, func(k string) string { return env[k] }, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := BlobConfig{S3Endpoint: "http://127.0.0.1:7070", S3PublicEndpoint: "https://files.example.org", S3Bucket: "from-file",
		S3Region: "eu-west-3", S3AccessKey: "AK", S3SecretKey: testSecret}
	if cfg.Blob != want || !cfg.Blob.S3() {
		t.Fatalf("[blob] %+v, want %+v", cfg.Blob, want)
	}
}

// Settings that cannot work are refused at start, naming what to fix and
// never showing the secret key.
func TestConfigBlobRefused(t *testing.T) {
	t.Parallel()
	full := map[string]string{"ATRIUM_S3_ENDPOINT": "https://s3.example.org", "ATRIUM_S3_BUCKET": "atrium",
		"ATRIUM_S3_ACCESS_KEY": "AK", "ATRIUM_S3_SECRET_KEY": testSecret}
	tests := []struct {
		name string
		set  map[string]string // over full; "" unsets
		want string
	}{
		{"endpoint without bucket", map[string]string{"ATRIUM_S3_BUCKET": ""}, "s3_bucket not set"},
		{"bucket without endpoint", map[string]string{"ATRIUM_S3_ENDPOINT": ""}, "s3_endpoint not set"},
		{"no secret key", map[string]string{"ATRIUM_S3_SECRET_KEY": ""}, "s3_secret_key not set"},
		{"public endpoint alone", map[string]string{"ATRIUM_S3_ENDPOINT": "", "ATRIUM_S3_BUCKET": "", "ATRIUM_S3_ACCESS_KEY": "",
			"ATRIUM_S3_SECRET_KEY": "", "ATRIUM_S3_PUBLIC_ENDPOINT": "https://files.example.org"}, "s3_endpoint, s3_bucket, s3_access_key, s3_secret_key not set"},
		{"endpoint malformed", map[string]string{"ATRIUM_S3_ENDPOINT": "s3.example.org"}, "blob.s3_endpoint"},
		{"endpoint with a path", map[string]string{"ATRIUM_S3_ENDPOINT": "https://s3.example.org/atrium"}, "blob.s3_endpoint"},
		{"public endpoint malformed", map[string]string{"ATRIUM_S3_PUBLIC_ENDPOINT": "ftp://files"}, "blob.s3_public_endpoint"},
		{"bucket name", map[string]string{"ATRIUM_S3_BUCKET": "Atrium Files"}, "blob.s3_bucket"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			env := map[string]string{}
			for k, v := range full {
				env[k] = v
			}
			for k, v := range tt.set {
				env[k] = v
			}
			_, err := LoadConfig("", func(k string) string { return env[k] }, nil)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, want an error containing %q", err, tt.want)
			}
			if strings.Contains(err.Error(), testSecret) {
				t.Fatalf("the error shows the secret key: %v", err)
			}
		})
	}
}

// Open refuses a store it cannot use: unreachable, wrong credentials, no such
// bucket; nothing is left half-open and the secret key is not shown.
func TestOpenRefusesStore(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + l.Addr().String()
	l.Close()
	type refusal struct {
		name string
		blob BlobConfig
		want string
	}
	tests := []refusal{
		{"unreachable", BlobConfig{S3Endpoint: closed, S3Bucket: "atrium", S3AccessKey: "AK", S3SecretKey: testSecret}, "cannot reach the object store at " + closed},
	}
	if sc, ok := s3blob.TestConfig(); ok {
		bucket, drop, err := s3blob.NewTestBucket(context.Background(), sc)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { drop() })
		good := BlobConfig{S3Endpoint: sc.Endpoint, S3Bucket: bucket, S3AccessKey: sc.AccessKey, S3SecretKey: sc.SecretKey}
		wrongKey, noBucket := good, good
		wrongKey.S3SecretKey = testSecret
		noBucket.S3Bucket = "atrium-missing-bucket"
		tests = append(tests,
			refusal{"wrong secret key", wrongKey, "refused the credentials"},
			refusal{"missing bucket", noBucket, `bucket "atrium-missing-bucket" does not exist`})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg, err := LoadConfig("", func(string) string { return "" }, nil)
			if err != nil {
				t.Fatal(err)
			}
			cfg.Data = t.TempDir()
			cfg.Blob = tt.blob
			if err := cfg.Validate(); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			m, err := Open(ctx, cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
			if err == nil {
				m.Close()
				t.Fatal("opened")
			}
			if !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), testSecret) {
				t.Fatalf("got %v, want an error containing %q and not the secret key", err, tt.want)
			}
		})
	}
}

// A server with its bytes in a bucket is ready while it can list the bucket,
// and not once the bucket is gone.
func TestReadyReachesTheBucket(t *testing.T) {
	t.Parallel()
	if !TestS3() {
		t.Skip(s3blob.TestEndpointEnv + " not set (scripts/s3-server.sh starts a store)")
	}
	ctx := context.Background()
	bucket, drop, err := NewTestBucket(ctx)
	if err != nil {
		t.Fatal(err)
	}
	dropped := false
	t.Cleanup(func() {
		if !dropped {
			drop()
		}
	})
	cfg, err := LoadConfig("", func(string) string { return "" }, nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Data = t.TempDir()
	cfg.Blob = TestBlob(bucket)
	m, err := Open(ctx, cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if err := m.ready(ctx); err != nil {
		t.Fatalf("ready with the bucket there: %v", err)
	}
	if _, err := os.Stat(filepath.Join(cfg.Data, "blobs")); err == nil {
		t.Fatal("the data directory has blobs/ with the bytes in a bucket")
	}
	if err := drop(); err != nil {
		t.Fatal(err)
	}
	dropped = true
	if err := m.ready(ctx); err == nil {
		t.Fatal("ready with the bucket gone")
	}
}

// Clients upload with a presigned URL of the store as long as the upload
// lives: with s3_public_endpoint, an upload may not outlive what SigV4
// allows a presigned URL.
func TestConfigUploadTTLWithPublicEndpoint(t *testing.T) {
	t.Parallel()
	env := map[string]string{"ATRIUM_S3_ENDPOINT": "https://s3.example.org", "ATRIUM_S3_BUCKET": "atrium",
		"ATRIUM_S3_ACCESS_KEY": "AK", "ATRIUM_S3_SECRET_KEY": testSecret}
	file := filepath.Join(t.TempDir(), "atrium.toml")
	if err := os.WriteFile(file, []byte("[drive]\nupload_ttl = \"200h\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadConfig(file, func(k string) string { return env[k] }, nil); err != nil {
		t.Fatalf("a long upload_ttl relayed by the nodes: %v", err)
	}
	env["ATRIUM_S3_PUBLIC_ENDPOINT"] = "https://files.example.org"
	_, err := LoadConfig(file, func(k string) string { return env[k] }, nil)
	if err == nil || !strings.Contains(err.Error(), "drive.upload_ttl: at most 168h0m0s with blob.s3_public_endpoint set") {
		t.Fatalf("got %v, want upload_ttl refused", err)
	}
}
