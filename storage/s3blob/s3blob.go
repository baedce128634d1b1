// Package s3blob keeps the drive's bytes in a bucket of an S3-compatible
// object store: the content-addressed objects (blob.Objects) and the archive
// tier's compressed copies (blob.Cold), with the same sentinel errors as the
// store on local disk, so that the drive behaves the same on either.
//
// It speaks S3 through minio-go: a small dependency, path-style addressing
// (the bucket in the path, so that any S3-compatible store works under any
// host name) with SigV4, and presigning done offline.
//
// Keys are flat, one level under a prefix (some stores, a file system behind
// them, cannot hold both a key a/b and a key a):
//
//	blobs/<64-hex-sha256>        an object, its content as stored
//	archive/<64-hex-sha256>.zst  the archive tier's zstd copy of an object
//
// (and the uploads in progress: staged.go, tusparts.go; the sync clients'
// chunks, chunks.go, are the one deeper layout: chunks/<user>/<transfer>/
// holds the chunks and the folder's mark, never a key that is a prefix).
//
// Put spools the stream to a scratch file under the data directory while its
// SHA-256 is computed, then uploads the file under its final key. The key is
// the hash, known only at the end; spooling (rather than uploading to a temp
// key and copying it server-side) reads the client's bytes once, sends them
// to the store once, skips the upload altogether when the bucket already holds
// the content, refuses a stream over its limit before the store sees a byte,
// and leaves nothing in the bucket to clean up when a process dies mid-way (a
// scratch file is removed at the next start). The upload has a known size, so
// minio-go streams it from the file, in parts for a large one, without holding
// it in memory.
package s3blob

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"atrium/storage/blob"
)

// Key prefixes in the bucket.
const (
	blobPrefix    = "blobs/"
	archivePrefix = "archive/"
)

// DefaultRegion is the region signed for when none is configured.
const DefaultRegion = "us-east-1"

// Config says which bucket to use and how to reach it.
type Config struct {
	// Endpoint is the store's address as the nodes reach it:
	// http(s)://host[:port], without a path.
	Endpoint string
	// PublicEndpoint is the store's address as clients reach it, for
	// presigned URLs; empty: Endpoint.
	PublicEndpoint string
	Bucket         string
	// Region is the region requests are signed for; empty: DefaultRegion.
	Region    string
	AccessKey string
	SecretKey string
	// Scratch is a local directory for spooling uploads; Open creates it and
	// removes what a previous process left there.
	Scratch string
}

// Store is a bucket of an S3-compatible store as blob.Objects. It is safe for
// concurrent use.
type Store struct {
	client   *minio.Client
	public   *minio.Client // presigns for clients
	bucket   string
	endpoint string
	scratch  string
}

var _ blob.Objects = (*Store)(nil)

// ParseEndpoint checks an endpoint setting, http(s)://host[:port] without a
// path, and returns its host[:port] and whether it is https.
func ParseEndpoint(s string) (host string, secure bool, err error) {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Hostname() == "" {
		return "", false, fmt.Errorf("%q is not an http(s) URL: give the store's address, for example https://s3.example.org or http://127.0.0.1:7070", s)
	}
	if (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return "", false, fmt.Errorf("%q has more than a scheme, host and port: give the store's address alone (the bucket is a setting of its own)", s)
	}
	if p := u.Port(); p == "" && strings.HasSuffix(u.Host, ":") {
		return "", false, fmt.Errorf("%q has an empty port", s)
	}
	return u.Host, u.Scheme == "https", nil
}

// Validate checks the settings without reaching the store: every one the
// store needs is set and the endpoints are well formed. Messages name the
// settings by their keys in [blob] and never show the secret key.
func (c Config) Validate() error {
	var errs []error
	var missing []string
	for _, s := range []struct{ key, val string }{{"s3_endpoint", c.Endpoint}, {"s3_bucket", c.Bucket},
		{"s3_access_key", c.AccessKey}, {"s3_secret_key", c.SecretKey}} {
		if s.val == "" {
			missing = append(missing, s.key)
		}
	}
	if len(missing) > 0 {
		errs = append(errs, fmt.Errorf("blob: an object store needs s3_endpoint, s3_bucket, s3_access_key and s3_secret_key together; %s not set (or leave every s3_ setting empty to keep the bytes on the local disk)", strings.Join(missing, ", ")))
	}
	if c.Endpoint != "" {
		if _, _, err := ParseEndpoint(c.Endpoint); err != nil {
			errs = append(errs, fmt.Errorf("blob.s3_endpoint: %w", err))
		}
	}
	if c.PublicEndpoint != "" {
		if _, _, err := ParseEndpoint(c.PublicEndpoint); err != nil {
			errs = append(errs, fmt.Errorf("blob.s3_public_endpoint: %w", err))
		}
	}
	if c.Bucket != "" && !validBucket(c.Bucket) {
		errs = append(errs, fmt.Errorf("blob.s3_bucket: %q is not a bucket name (3 to 63 lowercase letters, digits, dots and hyphens)", c.Bucket))
	}
	return errors.Join(errs...)
}

func validBucket(b string) bool {
	if len(b) < 3 || len(b) > 63 {
		return false
	}
	for i := 0; i < len(b); i++ {
		c := b[i]
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '-' && c != '.' {
			return false
		}
	}
	return b[0] != '-' && b[0] != '.' && b[len(b)-1] != '-' && b[len(b)-1] != '.'
}

// newClient makes a path-style SigV4 client of endpoint. With the region set,
// it never asks the store for the bucket's location, so presigning is offline.
func newClient(endpoint string, c Config) (*minio.Client, error) {
	host, secure, err := ParseEndpoint(endpoint)
	if err != nil {
		return nil, err
	}
	tr, err := minio.DefaultTransport(secure)
	if err != nil {
		return nil, fmt.Errorf("s3 transport: %w", err)
	}
	tr.DialContext = (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	tr.ResponseHeaderTimeout = 2 * time.Minute
	region := c.Region
	if region == "" {
		region = DefaultRegion
	}
	cl, err := minio.New(host, &minio.Options{
		Creds:        credentials.NewStaticV4(c.AccessKey, c.SecretKey, ""),
		Secure:       secure,
		Transport:    tr,
		Region:       region,
		BucketLookup: minio.BucketLookupPath,
		// Failed requests (a broken connection, 5xx, SlowDown) are tried
		// again with a growing pause (0.2 s to 1 s): a store that is down is
		// reported after some 3 s rather than the default 10 tries' 7 s.
		MaxRetries: maxRetries,
	})
	if err != nil {
		return nil, fmt.Errorf("s3 client: %w", err)
	}
	return cl, nil
}

// Open checks the settings, reaches the store and checks that the bucket
// exists (Atrium never creates it: the operator does, with the policies the
// store needs). Its errors say which of these failed and never show the
// secret key.
func Open(ctx context.Context, c Config) (*Store, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	if c.Scratch == "" {
		return nil, errors.New("s3 open: no scratch directory")
	}
	cl, err := newClient(c.Endpoint, c)
	if err != nil {
		return nil, fmt.Errorf("blob.s3_endpoint: %w", err)
	}
	public := cl
	if c.PublicEndpoint != "" {
		if public, err = newClient(c.PublicEndpoint, c); err != nil {
			return nil, fmt.Errorf("blob.s3_public_endpoint: %w", err)
		}
	}
	s := &Store{client: cl, public: public, bucket: c.Bucket, endpoint: c.Endpoint, scratch: c.Scratch}
	if err := s.check(ctx); err != nil {
		return nil, err
	}
	if err := cleanScratch(c.Scratch); err != nil {
		return nil, err
	}
	return s, nil
}

// staleScratch is how long a scratch file must have been untouched for Open to
// take it for a leftover (another command may open the store beside a running
// server that is spooling).
const staleScratch = time.Hour

func cleanScratch(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("s3 scratch dir: %w", err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("s3 scratch dir: %w", err)
	}
	for _, e := range entries {
		if fi, err := e.Info(); err == nil && time.Since(fi.ModTime()) < staleScratch {
			continue
		}
		if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
			return fmt.Errorf("s3 scratch dir: remove leftover: %w", err)
		}
	}
	return nil
}

// checkTimeout bounds the check at start (minio-go retries a store that does
// not answer).
const checkTimeout = 20 * time.Second

// check reaches the store and looks for the bucket, saying in words what
// went wrong.
func (s *Store) check(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, checkTimeout)
	defer cancel()
	if err := s.probe(ctx); err != nil {
		if minio.ToErrorResponse(err).Code == minio.NoSuchBucket {
			return fmt.Errorf("blob.s3_bucket: bucket %q does not exist at %s: create it with the store's own tools (Atrium does not create buckets), or correct s3_bucket", s.bucket, s.endpoint)
		}
		return s.explain(err)
	}
	return nil
}

// probe lists at most one key of the bucket: a GET, whose error body says
// what a HEAD cannot (some stores answer a HEAD with an unknown access key
// 404, as they do a missing bucket).
func (s *Store) probe(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for o := range s.client.ListObjects(ctx, s.bucket, minio.ListObjectsOptions{Prefix: blobPrefix, MaxKeys: 1}) {
		return o.Err
	}
	return nil
}

// explain turns an error of the start check into what the operator should
// look at.
func (s *Store) explain(err error) error {
	resp := minio.ToErrorResponse(err)
	switch {
	case resp.StatusCode == http.StatusForbidden || resp.Code == "InvalidAccessKeyId" || resp.Code == "SignatureDoesNotMatch" ||
		resp.Code == "AccessDenied" || resp.Code == "XAdminUserNotFound":
		return fmt.Errorf("blob: the object store at %s refused the credentials for bucket %q (%s): check s3_access_key and s3_secret_key, and that they may use the bucket", s.endpoint, s.bucket, firstNonEmpty(resp.Code, http.StatusText(resp.StatusCode)))
	case resp.StatusCode != 0:
		return fmt.Errorf("blob: the object store at %s answered %d %s for bucket %q: %s", s.endpoint, resp.StatusCode, resp.Code, s.bucket, resp.Message)
	default:
		return fmt.Errorf("blob.s3_endpoint: cannot reach the object store at %s: %w", s.endpoint, err)
	}
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// Ready returns an error when the bucket cannot be reached now.
func (s *Store) Ready(ctx context.Context) error {
	if err := s.probe(ctx); err != nil {
		return fmt.Errorf("object store: %w", err)
	}
	return nil
}

// MaxPresignTTL is the longest a presigned URL of the store may live (SigV4).
const MaxPresignTTL = 7 * 24 * time.Hour

// MaxPutBytes is the most one PUT of the S3 API may carry (AWS S3 and Ceph
// RGW refuse more; larger objects go in parts): the limit of a client's PUT
// to a presigned URL.
const MaxPutBytes = 5 << 30

// PresignGet returns a URL by which a client (at the public endpoint) can GET
// the object hash for ttl; params may set response-content-type and
// response-content-disposition. It is computed offline.
func (s *Store) PresignGet(ctx context.Context, hash string, ttl time.Duration, params url.Values) (*url.URL, error) {
	if err := blob.ValidHash(hash); err != nil {
		return nil, fmt.Errorf("s3 presign: %w", err)
	}
	u, err := s.public.PresignedGetObject(ctx, s.bucket, blobKey(hash), ttl, params)
	if err != nil {
		return nil, fmt.Errorf("s3 presign: %w", err)
	}
	return u, nil
}

func blobKey(hash string) string    { return blobPrefix + hash }
func archiveKey(hash string) string { return archivePrefix + hash + ".zst" }

// maxRetries is how many times minio-go sends a failed request.
const maxRetries = 5

// fault adds blob.ErrUnavailable to the errors that say the store cannot
// serve, once minio-go tried again: a connection refused, broken or timed
// out, or a 5xx answer.
func fault(err error) error {
	if err == nil || errors.Is(err, blob.ErrUnavailable) {
		return err
	}
	if minio.IsNetworkOrHostDown(err, false) || minio.ToErrorResponse(err).StatusCode >= 500 {
		return fmt.Errorf("%w: %w", blob.ErrUnavailable, err)
	}
	return err
}

// notFound reports whether err is the store's answer for a missing key.
func notFound(err error) bool {
	r := minio.ToErrorResponse(err)
	return r.Code == minio.NoSuchKey || r.StatusCode == http.StatusNotFound && r.Code != minio.NoSuchBucket
}
