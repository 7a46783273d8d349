// Package s3obj implements source.Source over one object in an S3-compatible
// store: an io.ReaderAt served from a bounded memory cache of fixed blocks,
// filled by ranged GETs that are all pinned to the version the object had
// when it was opened (If-Match on its ETag, or its version id). A changed
// object fails every later read with source.ErrChanged; bytes of two
// versions are never mixed.
//
// A Client holds one configured SDK client; Client.Open gives an Object (one
// HEAD), Client.FS an io/fs.FS over a key prefix that lists lazily.
package s3obj

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// Defaults for the zero values of Options.
const (
	DefaultBlockSize   = 1 << 20
	DefaultCacheBytes  = 64 << 20
	DefaultMaxInFlight = 4
	DefaultMaxRequest  = 16 << 20
	// DefaultRegion is used when neither the options nor the AWS
	// configuration chain name a region (S3-compatible stores ignore it).
	DefaultRegion = "us-east-1"
)

// ErrBadURL reports an s3:// URL that names no bucket.
var ErrBadURL = errors.New("s3obj: not an s3://bucket/key URL")

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
	// Credentials replaces the chain's credentials (tests; nil = chain).
	Credentials aws.CredentialsProvider
	// HTTPClient replaces the SDK's HTTP client (nil = SDK default).
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
	cfg, err := config.LoadDefaultConfig(ctx, lo...)
	if err != nil {
		return nil, fmt.Errorf("s3obj: aws configuration: %w", err)
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
	pathStyle := o.PathStyle
	if endpoint != "" {
		u, err := url.Parse(endpoint)
		if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
			return nil, fmt.Errorf("s3obj: endpoint %q is not an http(s)://host[:port] URL", endpoint)
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
		if o.HTTPClient != nil {
			so.HTTPClient = o.HTTPClient
		}
	})
	return c, nil
}

// autoPathStyle tells whether a host cannot carry a bucket as a subdomain.
func autoPathStyle(host string) bool {
	return host == "localhost" || strings.HasSuffix(host, ".localhost") || net.ParseIP(host) != nil
}

func (o Options) withDefaults() Options {
	if o.BlockSize <= 0 {
		o.BlockSize = DefaultBlockSize
	}
	if o.CacheBytes <= 0 {
		o.CacheBytes = DefaultCacheBytes
	}
	if o.MaxInFlight <= 0 {
		o.MaxInFlight = DefaultMaxInFlight
	}
	if o.MaxRequest <= 0 {
		o.MaxRequest = DefaultMaxRequest
	}
	if o.MaxRequest < o.BlockSize {
		o.MaxRequest = o.BlockSize
	}
	return o
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
