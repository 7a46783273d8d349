package s3

import (
	"container/list"
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"
	"github.com/recfs/recfs/source"
	"github.com/sirupsen/logrus"
)

// ErrNotFound reports a key with no object.
var ErrNotFound = errors.New("s3: no such object")

// Object is one version of one S3 object as a source.Source (with Stater and
// Closer). It is safe for concurrent use.
type Object struct {
	api       *s3.Client
	bucket    string
	key       string
	url       string
	etag      string
	versionID string
	modTime   time.Time
	size      int64
	id        source.Identity
	opt       Options

	ctx    context.Context
	cancel context.CancelFunc
	sem    chan struct{}

	mu      sync.Mutex
	blocks  map[int64]*block
	lru     *list.List // of *block, oldest first; only filled blocks
	cached  int64
	streams [4]stream
	tick    uint64

	changed    atomic.Bool
	changeOnce sync.Once
	stats      counters
}

var (
	_ source.Source   = (*Object)(nil)
	_ source.Stater   = (*Object)(nil)
	_ source.Reopener = (*Object)(nil)
	_ source.Closer   = (*Object)(nil)
)

// Stats counts an object's requests.
type Stats struct {
	Heads, Gets  int64
	BytesFetched int64
}

type counters struct{ heads, gets, bytes atomic.Int64 }

// Open HEADs bucket/key and returns the object pinned to the version found.
func (c *Client) Open(ctx context.Context, bucket, key string) (*Object, error) {
	o := &Object{api: c.api, bucket: bucket, key: key, opt: c.opt,
		url: "s3://" + c.endpoint + "/" + bucket + "/" + key}
	h, err := o.head(ctx)
	if err != nil {
		return nil, err
	}
	o.pin(h)
	return o, nil
}

// Reopen HEADs the object again and returns it pinned to the version found
// (with a cache of its own): how a followed object moves to a new version.
func (o *Object) Reopen(ctx context.Context) (source.Source, error) {
	n := &Object{api: o.api, bucket: o.bucket, key: o.key, opt: o.opt, url: o.url}
	h, err := n.head(ctx)
	if err != nil {
		return nil, err
	}
	n.pin(h)
	return n, nil
}

// OpenListed returns the object bucket/key as a listing described it (its
// size, ETag and Last-Modified), pinned to that version, without a HEAD:
// its reads fail as those of a changed object if it is another by then.
func (c *Client) OpenListed(bucket string, lo *ListedObject, size int64, mod time.Time) *Object {
	o := &Object{api: c.api, bucket: bucket, key: lo.Key, opt: c.opt,
		url: "s3://" + c.endpoint + "/" + bucket + "/" + lo.Key}
	o.pin(headResult{etag: lo.ETag, modTime: mod, size: size})
	return o
}

// pin makes o the version h describes.
func (o *Object) pin(h headResult) {
	o.etag, o.versionID, o.modTime, o.size = h.etag, h.versionID, h.modTime, h.size
	o.id = h.identity(o.url)
	o.ctx, o.cancel = context.WithCancel(context.Background())
	o.sem = make(chan struct{}, o.opt.MaxInFlight)
	o.blocks = make(map[int64]*block)
	o.lru = list.New()
}

// OpenURL opens s3://bucket/key.
func (c *Client) OpenURL(ctx context.Context, u string) (*Object, error) {
	b, k, err := ParseURL(u)
	if err != nil {
		return nil, err
	}
	if k == "" || k[len(k)-1] == '/' {
		return nil, fmt.Errorf("%w: %q names a prefix, not an object", ErrBadURL, u)
	}
	return c.Open(ctx, b, k)
}

type headResult struct {
	etag, versionID string
	modTime         time.Time
	size            int64
}

func (h headResult) identity(url string) source.Identity {
	v := "size=" + strconv.FormatInt(h.size, 10)
	if h.etag != "" {
		v = "etag=" + h.etag + " " + v
	} else {
		v += " mtime=" + h.modTime.UTC().Format(time.RFC3339Nano)
	}
	return source.Identity{Key: url, Version: v}
}

func (o *Object) head(ctx context.Context) (headResult, error) {
	o.stats.heads.Add(1)
	out, err := o.api.HeadObject(ctx, &s3.HeadObjectInput{Bucket: &o.bucket, Key: &o.key})
	if err != nil {
		if httpStatus(err) == 404 {
			return headResult{}, fmt.Errorf("%w: %s", ErrNotFound, o.url)
		}
		if e := explain(err, o.bucket, o.key); e != nil {
			return headResult{}, e
		}
		return headResult{}, fmt.Errorf("s3: HEAD %s: %w", o.url, err)
	}
	h := headResult{etag: aws.ToString(out.ETag), versionID: aws.ToString(out.VersionId),
		size: aws.ToInt64(out.ContentLength)}
	if out.LastModified != nil {
		h.modTime = *out.LastModified
	}
	if h.size < 0 {
		return headResult{}, fmt.Errorf("s3: HEAD %s: no content length", o.url)
	}
	return h, nil
}

// Size is the object's length when it was opened.
func (o *Object) Size() int64 { return o.size }

// Identity names the opened version: Key s3://endpoint/bucket/key, Version
// its ETag and size (size and Last-Modified when the store gives no ETag).
func (o *Object) Identity() source.Identity { return o.id }

// Key is the object's key in its bucket.
func (o *Object) Key() string { return o.key }

// URL is the object's s3://endpoint/bucket/key name.
func (o *Object) URL() string { return o.url }

// ModTime is the object's Last-Modified when it was opened.
func (o *Object) ModTime() time.Time { return o.modTime }

// Stat HEADs the object again: its current identity and size.
func (o *Object) Stat() (source.Identity, int64, error) {
	h, err := o.head(o.ctx)
	if err != nil {
		return source.Identity{}, 0, err
	}
	return h.identity(o.url), h.size, nil
}

// Stats returns the requests this object has made so far.
func (o *Object) Stats() Stats {
	return Stats{Heads: o.stats.heads.Load(), Gets: o.stats.gets.Load(), BytesFetched: o.stats.bytes.Load()}
}

// Close cancels requests in flight and drops the cache. Reads after Close
// fail.
func (o *Object) Close() error {
	o.cancel()
	o.mu.Lock()
	o.blocks = make(map[int64]*block)
	o.lru.Init()
	o.cached = 0
	o.mu.Unlock()
	return nil
}

// markChanged records that the object no longer is the opened version and
// logs it once.
func (o *Object) markChanged(why string) {
	o.changed.Store(true)
	o.changeOnce.Do(func() {
		logrus.WithFields(logrus.Fields{"object": o.url, "etag": o.etag, "size": o.size}).
			Errorf("s3: object changed since it was opened (%s); its reads fail until it is reopened", why)
	})
}

func (o *Object) errChanged() error {
	return fmt.Errorf("%s: %w", o.url, source.ErrChanged)
}

// httpStatus digs the HTTP status out of an SDK error (0 if none).
func httpStatus(err error) int {
	var re interface{ HTTPStatusCode() int }
	if errors.As(err, &re) {
		return re.HTTPStatusCode()
	}
	var ae smithy.APIError
	if errors.As(err, &ae) {
		switch ae.ErrorCode() {
		case "PreconditionFailed":
			return 412
		case "NoSuchKey", "NotFound":
			return 404
		}
	}
	return 0
}
