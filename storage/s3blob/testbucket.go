package s3blob

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"

	"github.com/minio/minio-go/v7"
)

// The environment that names the S3-compatible store the tests run on, when
// set (scripts/s3-server.sh starts a throwaway one and prints them): its
// endpoint and credentials, which may create and remove buckets. Unset, the
// tests keep the bytes on the local disk alone.
const (
	TestEndpointEnv  = "ATRIUM_TEST_S3_ENDPOINT"
	TestAccessKeyEnv = "ATRIUM_TEST_S3_ACCESS_KEY"
	TestSecretKeyEnv = "ATRIUM_TEST_S3_SECRET_KEY"
	TestBucketEnv    = "ATRIUM_TEST_S3_BUCKET"
)

// TestConfig is the store of the test environment without a bucket; ok is
// false when TestEndpointEnv is unset.
func TestConfig() (c Config, ok bool) {
	c = Config{Endpoint: os.Getenv(TestEndpointEnv), AccessKey: os.Getenv(TestAccessKeyEnv), SecretKey: os.Getenv(TestSecretKeyEnv)}
	return c, c.Endpoint != ""
}

// NewTestBucket makes a bucket of its own for one test on the store of c and
// returns its name and a function that empties and removes it.
func NewTestBucket(ctx context.Context, c Config) (bucket string, drop func() error, err error) {
	cl, err := newClient(c.Endpoint, c)
	if err != nil {
		return "", nil, err
	}
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		return "", nil, err
	}
	bucket = "atrium-test-" + hex.EncodeToString(b)
	if err := cl.MakeBucket(ctx, bucket, minio.MakeBucketOptions{}); err != nil {
		return "", nil, fmt.Errorf("make test bucket: %w", err)
	}
	return bucket, func() error { return removeBucket(context.Background(), cl, bucket) }, nil
}

// removeBucket removes every object of bucket, then the bucket.
func removeBucket(ctx context.Context, cl *minio.Client, bucket string) error {
	var errs []error
	objects := cl.ListObjects(ctx, bucket, minio.ListObjectsOptions{Recursive: true})
	for r := range cl.RemoveObjects(ctx, bucket, objects, minio.RemoveObjectsOptions{}) {
		errs = append(errs, fmt.Errorf("remove %s: %w", r.ObjectName, r.Err))
	}
	if err := cl.RemoveBucket(ctx, bucket); err != nil {
		errs = append(errs, fmt.Errorf("remove test bucket %s: %w", bucket, err))
	}
	return errors.Join(errs...)
}

// TestPublicEndpoint returns another address of the test store at endpoint,
// for tests that tell the clients' address of the store (Config.PublicEndpoint)
// from the nodes': localhost for 127.0.0.1 and the other way round; any
// other host is returned as it is.
func TestPublicEndpoint(endpoint string) string {
	u, err := url.Parse(endpoint)
	if err != nil {
		return endpoint
	}
	var other string
	switch u.Hostname() {
	case "127.0.0.1":
		other = "localhost"
	case "localhost":
		other = "127.0.0.1"
	default:
		return endpoint
	}
	if p := u.Port(); p != "" {
		other = net.JoinHostPort(other, p)
	}
	u.Host = other
	return u.String()
}

// TestKeys returns the keys that begin with prefix in the bucket of c
// (c.Bucket), for tests that look at what a server left in its bucket.
func TestKeys(ctx context.Context, c Config, prefix string) ([]string, error) {
	cl, err := newClient(c.Endpoint, c)
	if err != nil {
		return nil, err
	}
	var keys []string
	for o := range cl.ListObjects(ctx, c.Bucket, minio.ListObjectsOptions{Prefix: prefix, Recursive: true}) {
		if o.Err != nil {
			return nil, fmt.Errorf("list test bucket %s: %w", c.Bucket, o.Err)
		}
		keys = append(keys, o.Key)
	}
	return keys, nil
}
