package s3blob_test

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"atrium/storage/s3blob"
)

const secret = "do-not-show-this-secret-key"

func TestValidate(t *testing.T) {
	t.Parallel()
	full := s3blob.Config{Endpoint: "https://s3.example.org", Bucket: "atrium", AccessKey: "AK", SecretKey: secret}
	tests := []struct {
		name string
		edit func(c *s3blob.Config)
		want string // "" for valid
	}{
		{"complete", func(*s3blob.Config) {}, ""},
		{"with port and public endpoint", func(c *s3blob.Config) {
			c.Endpoint, c.PublicEndpoint = "http://127.0.0.1:7070", "https://files.example.org:9000/"
		}, ""},
		{"endpoint without bucket", func(c *s3blob.Config) { c.Bucket = "" }, "s3_bucket not set"},
		{"no keys", func(c *s3blob.Config) { c.AccessKey, c.SecretKey = "", "" }, "s3_access_key, s3_secret_key not set"},
		{"bucket without endpoint", func(c *s3blob.Config) { c.Endpoint = "" }, "s3_endpoint not set"},
		{"endpoint not a URL", func(c *s3blob.Config) { c.Endpoint = "s3.example.org:9000" }, "blob.s3_endpoint"},
		{"endpoint of another scheme", func(c *s3blob.Config) { c.Endpoint = "ftp://s3.example.org" }, "not an http(s) URL"},
		{"endpoint with the bucket in its path", func(c *s3blob.Config) { c.Endpoint = "https://s3.example.org/atrium" }, "more than a scheme, host and port"},
		{"public endpoint malformed", func(c *s3blob.Config) { c.PublicEndpoint = "files.example.org" }, "blob.s3_public_endpoint"},
		{"bucket name", func(c *s3blob.Config) { c.Bucket = "My_Bucket" }, "not a bucket name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := full
			tt.edit(&c)
			err := c.Validate()
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("valid settings refused: %v", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("got %v, want an error containing %q", err, tt.want)
			case err != nil && strings.Contains(err.Error(), secret):
				t.Fatalf("error shows the secret key: %v", err)
			}
		})
	}
}

// Open refuses, saying why, a store it cannot reach, credentials it refuses
// and a bucket that does not exist.
func TestOpenRefuses(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	t.Run("unreachable", func(t *testing.T) {
		t.Parallel()
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := l.Addr().String()
		l.Close() // nothing listens there now
		ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		defer cancel()
		_, err = s3blob.Open(ctx, s3blob.Config{Endpoint: "http://" + addr, Bucket: "atrium", AccessKey: "AK", SecretKey: secret, Scratch: t.TempDir()})
		if err == nil || !strings.Contains(err.Error(), "cannot reach the object store at http://"+addr) || strings.Contains(err.Error(), secret) {
			t.Fatalf("got %v, want an error naming the unreachable endpoint", err)
		}
	})
	cfg, ok := s3blob.TestConfig()
	if !ok {
		t.Skip(s3blob.TestEndpointEnv + " not set (scripts/s3-server.sh starts a store)")
	}
	bucket, drop, err := s3blob.NewTestBucket(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { drop() })
	tests := []struct {
		name string
		edit func(c *s3blob.Config)
		want string
	}{
		{"wrong secret key", func(c *s3blob.Config) { c.SecretKey = secret }, "refused the credentials"},
		{"unknown access key", func(c *s3blob.Config) { c.AccessKey, c.SecretKey = "nobody", secret }, "refused the credentials"},
		{"missing bucket", func(c *s3blob.Config) { c.Bucket = "atrium-no-such-bucket" }, `bucket "atrium-no-such-bucket" does not exist`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := cfg
			c.Bucket, c.Scratch = bucket, t.TempDir()
			tt.edit(&c)
			_, err := s3blob.Open(ctx, c)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, want an error containing %q", err, tt.want)
			}
			if strings.Contains(err.Error(), c.SecretKey) {
				t.Fatalf("error shows the secret key: %v", err)
			}
		})
	}
}

// PresignGet signs offline, path-style, for the public endpoint.
func TestPresignGet(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, cfg := openTestStore(t, func(c *s3blob.Config) { c.PublicEndpoint = "https://files.example.org:9443" })
	hash := strings.Repeat("ab", 32)
	u, err := s.PresignGet(ctx, hash, time.Minute, nil)
	if err != nil {
		t.Fatal(err)
	}
	if u.Scheme != "https" || u.Host != "files.example.org:9443" || u.Path != "/"+cfg.Bucket+"/blobs/"+hash ||
		u.Query().Get("X-Amz-Algorithm") != "AWS4-HMAC-SHA256" || u.Query().Get("X-Amz-Expires") != "60" {
		t.Fatalf("presigned URL %s", u)
	}
	if strings.Contains(u.String(), cfg.SecretKey) {
		t.Fatalf("presigned URL shows the secret key")
	}
}
