package recfsio

import (
	"github.com/recfs/recfs/codec"
	"github.com/recfs/recfs/index"
)

// DefaultSplitBytes is the payload each initial restriction holds when
// Options.SplitBytes is zero: 64 MiB, as Beam's textio splits text files.
const DefaultSplitBytes = 64 << 20

// Options configure Read. The zero value detects each file's format,
// skips damage, keeps saved indexes in the user's cache directory and
// splits files into ranges of DefaultSplitBytes of payload.
type Options struct {
	// Format names the files' format as `recfs --format` does ("tfrecord",
	// "leveldb", ...); "" detects it from each file's bytes.
	Format string
	// CacheDir is where workers keep saved indexes ("" = the user's cache
	// directory, "-" = none: every worker scans).
	CacheDir string
	// SplitBytes is the payload of one initial restriction (0 =
	// DefaultSplitBytes). A file is cut only at record boundaries, so a
	// range may hold more (one record larger than SplitBytes) or less (the
	// file's last range).
	SplitBytes int64
	// S3 configures the store of s3:// URLs; credentials come from the
	// AWS configuration chain of each worker (environment, files, roles).
	S3 S3Options
}

// S3Options name the store of s3:// URLs.
type S3Options struct {
	Endpoint  string // base URL (https://host:port); "" = AWS_ENDPOINT_URL_S3, then AWS
	Region    string // "" = the configuration chain's
	PathStyle bool   // path-style addressing (forced for IP addresses and localhost)
}

// splitBytes returns o.SplitBytes or its default.
func (o Options) splitBytes() int64 {
	if o.SplitBytes > 0 {
		return o.SplitBytes
	}
	return DefaultSplitBytes
}

// index returns the index options o stands for.
func (o Options) index() (index.Options, error) {
	io := index.Options{CacheDir: o.CacheDir}
	if o.Format != "" {
		f, err := codec.ParseFormat(o.Format)
		if err != nil {
			return io, err
		}
		io.Format = f
	}
	return io, nil
}
