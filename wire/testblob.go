package wire

import (
	"context"

	"atrium/storage/s3blob"
)

// TestS3 reports whether the test environment names an S3-compatible store
// (s3blob.TestEndpointEnv, set by scripts/s3-server.sh) for the tests to
// keep their bytes in.
func TestS3() bool {
	_, ok := s3blob.TestConfig()
	return ok
}

// TestBlob is the [blob] configuration of bucket on the test environment's
// store; empty (the local disk) when the environment names none.
func TestBlob(bucket string) BlobConfig {
	c, ok := s3blob.TestConfig()
	if !ok {
		return BlobConfig{}
	}
	return BlobConfig{S3Endpoint: c.Endpoint, S3Bucket: bucket, S3AccessKey: c.AccessKey, S3SecretKey: c.SecretKey}
}

// NewTestBucket makes a bucket of its own for one test on the test
// environment's store and returns its name and a function that empties and
// removes it.
func NewTestBucket(ctx context.Context) (bucket string, drop func() error, err error) {
	c, _ := s3blob.TestConfig()
	return s3blob.NewTestBucket(ctx, c)
}

// TestPublicEndpoint is the test store's address under another host name
// (s3blob.TestPublicEndpoint), for a test server's s3_public_endpoint.
func TestPublicEndpoint(endpoint string) string { return s3blob.TestPublicEndpoint(endpoint) }
