// Package s3 implements source.Source over one object in an S3-compatible
// store: an io.ReaderAt served from a bounded memory cache of fixed blocks,
// filled by ranged GETs that are all pinned to the version the object had
// when it was opened (If-Match on its ETag, or its version id). A changed
// object fails every later read with source.ErrChanged; bytes of two
// versions are never mixed.
//
// A Client holds one configured SDK client; Client.Open gives an Object (one
// HEAD), Client.FS an io/fs.FS over a key prefix that lists lazily.
package s3

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go/logging"
)

// Defaults for the zero values of Options.
const (
	DefaultBlockSize   = 1 << 20
	DefaultCacheBytes  = 64 << 20
	DefaultMaxInFlight = 4
	DefaultMaxRequest  = 16 << 20
	// Deadlines (see deadline.go): a connection within 10 s, a response
	// within 30 s of its request, no pause of 30 s between bytes, each
	// MiB of a body and all the attempts of one request within a minute,
	// at most 4 attempts.
	DefaultConnectTimeout   = 10 * time.Second
	DefaultFirstByteTimeout = 30 * time.Second
	DefaultIdleTimeout      = 30 * time.Second
	DefaultRetryBudget      = time.Minute
	DefaultMaxAttempts      = 4
	// A directory listing stops after 1,000 pages (a million keys) or
	// 64 MiB of names, whichever comes first.
	DefaultListMaxPages = 1000
	DefaultListMaxBytes = 64 << 20
	// DefaultRegion is used when neither the options nor the AWS
	// configuration chain name a region (S3-compatible stores ignore it).
	DefaultRegion = "us-east-1"
)

// ErrBadURL reports an s3:// URL that names no bucket.
var ErrBadURL = errors.New("s3: not an s3://bucket/key URL")

// Options configure a Client. The zero value uses the AWS configuration
// chain (environment, shared config and credentials files, instance roles)
// and the defaults above.
type Options struct {
	// Endpoint is the store's base URL (https://host:port). Empty means
	// AWS_ENDPOINT_URL_S3, then the chain's AWS_ENDPOINT_URL / endpoint_url,
	// then AWS itself.
	Endpoint string
	// Region overrides the chain's region.
	Region string
	// PathStyle forces path-style addressing (endpoint/bucket/key). It is
	// switched on anyway when the endpoint's host is an IP address or
	// localhost, where virtual-host addressing cannot work.
	PathStyle bool
	// SDKLog receives the SDK's own log lines (nil: they are dropped;
	// failures reach callers as errors anyway).
	SDKLog io.Writer
	// Credentials replaces the chain's credentials (tests; nil = chain).
	Credentials aws.CredentialsProvider
	// HTTPClient is the HTTP client to use (nil: one of ours); its
	// transport is wrapped in the deadlines below either way.
	HTTPClient *http.Client

	// BlockSize is the cache's unit (default 1 MiB).
	BlockSize int64
	// CacheBytes bounds the cached blocks of each object (default 64 MiB).
	// Blocks being fetched are not counted; at most MaxInFlight requests of
	// MaxRequest bytes are.
	CacheBytes int64
	// MaxInFlight caps concurrent GETs per object (default 4).
	MaxInFlight int
	// MaxRequest caps one GET of a sequential reader (default 16 MiB).
	MaxRequest int64

	// ConnectTimeout bounds opening a connection (TCP and TLS).
	ConnectTimeout time.Duration
	// FirstByteTimeout bounds the wait for a response once its request is
	// sent.
	FirstByteTimeout time.Duration
	// IdleTimeout bounds any pause in a request's or response's bytes.
	IdleTimeout time.Duration
	// RetryBudget bounds one request: its attempts and the pauses between
	// them, and then each MiB of its body. A read of an object waits no
	// longer than this for each block it needs.
	RetryBudget time.Duration
	// MaxAttempts caps the attempts of one request (a failed attempt is
	// retried after a pause of 100 ms, 200 ms, 400 ms... at most 5 s).
	MaxAttempts int
	// ListMaxPages and ListMaxBytes bound one directory listing: past
	// either, the listing ends there and says so in the log.
	ListMaxPages int
	ListMaxBytes int64
}

// Client opens objects of one store.
type Client struct {
	api      *s3.Client
	endpoint string // host[:port] for identities
	opt      Options
}

// NewClient resolves the configuration chain and the options into a client.
func NewClient(ctx context.Context, o Options) (*Client, error) {
	lo := []func(*config.LoadOptions) error{
		config.WithRequestChecksumCalculation(aws.RequestChecksumCalculationWhenRequired),
		config.WithResponseChecksumValidation(aws.ResponseChecksumValidationWhenRequired),
	}
	if o.Region != "" {
		lo = append(lo, config.WithRegion(o.Region))
	}
	if o.Credentials != nil {
		lo = append(lo, config.WithCredentialsProvider(o.Credentials))
	}
	// The SDK's own log lines (such as "falling back to IMDSv1" while it
	// looks for credentials) go only where SDKLog says.
	var sdkLog logging.Logger = logging.Nop{}
	if o.SDKLog != nil {
		sdkLog = logging.NewStandardLogger(o.SDKLog)
	}
	lo = append(lo, config.WithLogger(sdkLog))
	cfg, err := config.LoadDefaultConfig(ctx, lo...)
	if err != nil {
		return nil, fmt.Errorf("s3: aws configuration: %w", err)
	}
	if cfg.Region == "" {
		cfg.Region = DefaultRegion
	}
	endpoint := o.Endpoint
	if endpoint == "" {
		endpoint = os.Getenv("AWS_ENDPOINT_URL_S3")
	}
	if endpoint == "" && cfg.BaseEndpoint != nil {
		endpoint = *cfg.BaseEndpoint
	}
	c := &Client{opt: o.withDefaults()}
	hc := newHTTPClient(&c.opt)
	pathStyle := o.PathStyle
	if endpoint != "" {
		u, err := url.Parse(endpoint)
		if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
			return nil, fmt.Errorf("s3: endpoint %q is not an http(s)://host[:port] URL", endpoint)
		}
		c.endpoint = u.Host
		if autoPathStyle(u.Hostname()) {
			pathStyle = true
		}
	} else {
		c.endpoint = "s3." + cfg.Region + ".amazonaws.com"
	}
	c.api = s3.NewFromConfig(cfg, func(so *s3.Options) {
		if endpoint != "" {
			so.BaseEndpoint = aws.String(endpoint)
		}
		so.UsePathStyle = pathStyle
		so.HTTPClient = hc
		so.Retryer = newRetryer(&c.opt)
		// Failures reach callers as errors; the SDK's own warnings (such as
		// a body not drained after an abandoned attempt) would be noise on
		// a command's stderr and in a mount's log.
		so.Logger = sdkLog
		so.APIOptions = append(so.APIOptions, budgetMiddleware(&c.opt))
	})
	return c, nil
}

// autoPathStyle tells whether a host cannot carry a bucket as a subdomain.
func autoPathStyle(host string) bool {
	return host == "localhost" || strings.HasSuffix(host, ".localhost") || net.ParseIP(host) != nil
}

func (o Options) withDefaults() Options {
	orDefault(&o.BlockSize, DefaultBlockSize)
	orDefault(&o.CacheBytes, DefaultCacheBytes)
	orDefault(&o.MaxInFlight, DefaultMaxInFlight)
	orDefault(&o.MaxRequest, DefaultMaxRequest)
	o.MaxRequest = max(o.MaxRequest, o.BlockSize)
	orDefault(&o.ConnectTimeout, DefaultConnectTimeout)
	orDefault(&o.FirstByteTimeout, DefaultFirstByteTimeout)
	orDefault(&o.IdleTimeout, DefaultIdleTimeout)
	orDefault(&o.RetryBudget, DefaultRetryBudget)
	orDefault(&o.MaxAttempts, DefaultMaxAttempts)
	orDefault(&o.ListMaxPages, DefaultListMaxPages)
	orDefault(&o.ListMaxBytes, DefaultListMaxBytes)
	return o
}

// orDefault sets *p to v unless it is above zero.
func orDefault[T int | int64 | time.Duration](p *T, v T) {
	if *p <= 0 {
		*p = v
	}
}

// Endpoint is the host[:port] the client's identities name.
func (c *Client) Endpoint() string { return c.endpoint }

// API is the underlying SDK client (uploads in tests, sidecars).
func (c *Client) API() *s3.Client { return c.api }

// IsURL tells whether a command-line argument names an object or prefix.
func IsURL(s string) bool { return strings.HasPrefix(s, "s3://") }

// ParseURL splits s3://bucket/key into bucket and key; key may be empty or
// end in "/" (a prefix).
func ParseURL(s string) (bucket, key string, err error) {
	rest, ok := strings.CutPrefix(s, "s3://")
	if !ok {
		return "", "", fmt.Errorf("%w: %q", ErrBadURL, s)
	}
	bucket, key, _ = strings.Cut(rest, "/")
	if bucket == "" {
		return "", "", fmt.Errorf("%w: %q", ErrBadURL, s)
	}
	return bucket, key, nil
}

// Body is an object's bytes as a stream.
type Body struct {
	io.ReadCloser
	// Size is the length the store declared (-1: none), known before any
	// of the body is read.
	Size int64
}

// Get GETs the object bucket/key whole, as a stream under the client's
// deadlines (a stall fails a Read; it is not retried). A missing key gives
// ErrNotFound.
func (c *Client) Get(ctx context.Context, bucket, key string) (*Body, error) {
	out, err := c.api.GetObject(ctx, &s3.GetObjectInput{Bucket: &bucket, Key: &key})
	if err != nil {
		if httpStatus(err) == 404 && !hasCode(err, "NoSuchBucket") {
			return nil, fmt.Errorf("%w: s3://%s/%s", ErrNotFound, bucket, key)
		}
		if e := explain(err, bucket, key); e != nil {
			return nil, e
		}
		return nil, fmt.Errorf("s3: GET s3://%s/%s: %w", bucket, key, err)
	}
	n := int64(-1)
	if out.ContentLength != nil {
		n = *out.ContentLength
	}
	return &Body{ReadCloser: out.Body, Size: n}, nil
}
