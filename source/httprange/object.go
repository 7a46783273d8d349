package httprange

import (
	"container/list"
	"context"

	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/recfs/recfs/source"
)

// Object is one version of the file a URL serves: a source.Source whose
// reads are ranged GETs of whole blocks, kept in a bounded cache.
type Object struct {
	c       *Client
	url     string
	size    int64
	etag    string // strong entity tag, quoted; "" if none
	lastMod string // Last-Modified as sent; "" if none
	modTime time.Time
	id      source.Identity

	mu    sync.Mutex
	cache map[int64]*list.Element // block number → element of lru (*block)
	lru   list.List               // most recently used first
}

// block is one cached block: filled once, then read-only.
type block struct {
	n    int64
	done chan struct{}
	b    []byte
	err  error
}

var (
	_ source.Source = (*Object)(nil)
	_ source.Stater = (*Object)(nil)
	_ source.Closer = (*Object)(nil)
)

// head is what a HEAD (or a GET) says of a URL's current version.
type head struct {
	size          int64
	etag, lastMod string
}

// Open returns the current version of the file url serves (one HEAD).
func (c *Client) Open(ctx context.Context, url string) (*Object, error) {
	h, err := c.head(ctx, url)
	if err != nil {
		return nil, err
	}
	o := &Object{c: c, url: url, size: h.size, etag: h.etag, lastMod: h.lastMod, cache: map[int64]*list.Element{}}
	o.modTime, _ = http.ParseTime(h.lastMod)
	o.id = source.Identity{Key: url, Version: h.version()}
	return o, nil
}

// version renders the validators as an Identity's version: "etag=…" names
// the bytes; a time and a length only bound them.
func (h head) version() string {
	if h.etag != "" {
		return "etag=" + h.etag + ",size=" + strconv.FormatInt(h.size, 10)
	}
	return "modified=" + h.lastMod + ",size=" + strconv.FormatInt(h.size, 10)
}

// head asks for url's current version.
func (c *Client) head(ctx context.Context, url string) (head, error) {
	var h head
	err := c.do(ctx, url, func(ctx context.Context) (*http.Request, error) {
		return http.NewRequestWithContext(ctx, http.MethodHead, url, nil)
	}, func(resp *http.Response) (bool, error) {
		switch {
		case resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusGone:
			return false, fmt.Errorf("%s: %w", url, ErrNotFound)
		case resp.StatusCode >= 500:
			return true, fmt.Errorf("%s: HEAD: %s", url, resp.Status)
		case resp.StatusCode != http.StatusOK:
			return false, fmt.Errorf("%s: HEAD: %s", url, resp.Status)
		case resp.ContentLength < 0:
			return false, fmt.Errorf("%s: the server sends no length", url)
		case resp.Header.Get("Content-Encoding") != "" && resp.Header.Get("Content-Encoding") != "identity":
			return false, fmt.Errorf("%s: served with Content-Encoding %q: ranges would not be of the file's bytes", url, resp.Header.Get("Content-Encoding"))
		}
		h = head{size: resp.ContentLength, etag: strongETag(resp.Header.Get("ETag")), lastMod: resp.Header.Get("Last-Modified")}
		return false, nil
	})
	return h, err
}

// strongETag returns etag when it is a strong entity tag, else "".
func strongETag(etag string) string {
	if strings.HasPrefix(etag, `"`) && strings.HasSuffix(etag, `"`) && len(etag) >= 2 {
		return etag
	}
	return ""
}

// URL returns the object's URL.
func (o *Object) URL() string { return o.url }

// Size returns the length of the version opened.
func (o *Object) Size() int64 { return o.size }

// Identity names the version opened.
func (o *Object) Identity() source.Identity { return o.id }

// ModTime returns the version's Last-Modified time (zero if not sent).
func (o *Object) ModTime() time.Time { return o.modTime }

// Stat asks the server for the URL's current version (one HEAD).
func (o *Object) Stat() (source.Identity, int64, error) {
	h, err := o.c.head(context.Background(), o.url)
	if err != nil {
		return source.Identity{}, 0, err
	}
	return source.Identity{Key: o.url, Version: h.version()}, h.size, nil
}

// Close drops the cached blocks.
func (o *Object) Close() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.cache = map[int64]*list.Element{}
	o.lru.Init()
	return nil
}

// ReadAt reads len(p) bytes at off of the version opened; fewer only at
// its end (io.EOF) or with an error (source.ErrChanged once it changed).
func (o *Object) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, fmt.Errorf("%s: negative offset %d", o.url, off)
	}
	n := 0
	for n < len(p) {
		at := off + int64(n)
		if at >= o.size {
			return n, io.EOF
		}
		bn := at / o.c.o.BlockSize
		b, err := o.block(bn)
		if err != nil {
			return n, err
		}
		n += copy(p[n:], b[at-bn*o.c.o.BlockSize:])
	}
	return n, nil
}

// block returns block bn, from the cache or fetched (one fetch for
// concurrent readers of the same block).
func (o *Object) block(bn int64) ([]byte, error) {
	o.mu.Lock()
	if e, ok := o.cache[bn]; ok {
		o.lru.MoveToFront(e)
		b := e.Value.(*block)
		o.mu.Unlock()
		<-b.done
		return b.b, b.err
	}
	b := &block{n: bn, done: make(chan struct{})}
	o.cache[bn] = o.lru.PushFront(b)
	for int64(o.lru.Len())*o.c.o.BlockSize > o.c.o.CacheBytes {
		old := o.lru.Remove(o.lru.Back()).(*block)
		delete(o.cache, old.n)
	}
	o.mu.Unlock()
	b.b, b.err = o.fetch(bn)
	if b.err != nil {
		o.mu.Lock()
		if e, ok := o.cache[bn]; ok && e.Value == b {
			o.lru.Remove(e)
			delete(o.cache, bn)
		}
		o.mu.Unlock()
	}
	close(b.done)
	return b.b, b.err
}

// errChanged is the error of a read that found another version.
func (o *Object) errChanged(why string) error {
	return fmt.Errorf("%s: %w (%s)", o.url, source.ErrChanged, why)
}

// fetch GETs block bn of the version opened.
func (o *Object) fetch(bn int64) ([]byte, error) {
	start := bn * o.c.o.BlockSize
	end := min(start+o.c.o.BlockSize, o.size) // exclusive
	buf := make([]byte, end-start)
	err := o.c.do(context.Background(), o.url, func(ctx context.Context) (*http.Request, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, o.url, nil)
		if err != nil {
			return nil, err
		}
		req.Header.Set("Range", fmt.Sprintf("bytes=%d-%d", start, end-1))
		req.Header.Set("Accept-Encoding", "identity")
		switch {
		case o.etag != "":
			req.Header.Set("If-Range", o.etag)
		case o.lastMod != "":
			req.Header.Set("If-Range", o.lastMod)
		}
		return req, nil
	}, func(resp *http.Response) (bool, error) {
		if err := o.check(resp, start, end); err != nil {
			return resp.StatusCode >= 500, err
		}
		if _, err := io.ReadFull(resp.Body, buf); err != nil {
			return true, fmt.Errorf("%s: bytes %d-%d: %w", o.url, start, end-1, err)
		}
		return false, nil
	})
	return buf, err
}

// check checks that resp is the range [start, end) of the version opened.
func (o *Object) check(resp *http.Response, start, end int64) error {
	h := resp.Header
	switch {
	case resp.StatusCode == http.StatusOK:
		// The If-Range validator did not match (or ranges are not served).
		if o.sameVersion(h) && (o.etag != "" || o.lastMod != "") && resp.ContentLength == o.size {
			return fmt.Errorf("%s: %w", o.url, ErrNoRanges)
		}
		return o.errChanged("the server sent another version")
	case resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusGone:
		return o.errChanged("gone")
	case resp.StatusCode == http.StatusRequestedRangeNotSatisfiable, resp.StatusCode == http.StatusPreconditionFailed:
		return o.errChanged(resp.Status)
	case resp.StatusCode != http.StatusPartialContent:
		return fmt.Errorf("%s: GET bytes %d-%d: %s", o.url, start, end-1, resp.Status)
	}
	if !o.sameVersion(h) {
		return o.errChanged("its validators moved")
	}
	want := fmt.Sprintf("bytes %d-%d/%d", start, end-1, o.size)
	if cr := h.Get("Content-Range"); cr != want {
		if strings.HasSuffix(cr, "/"+strconv.FormatInt(o.size, 10)) {
			return fmt.Errorf("%s: Content-Range %q, asked for %q", o.url, cr, want)
		}
		return o.errChanged(fmt.Sprintf("Content-Range %q", cr))
	}
	return nil
}

// sameVersion reports whether the validators of h are those of the
// version opened (a validator the server sends neither time is no
// evidence either way).
func (o *Object) sameVersion(h http.Header) bool {
	if et := strongETag(h.Get("ETag")); et != "" || o.etag != "" {
		return et == o.etag
	}
	if lm := h.Get("Last-Modified"); lm != "" || o.lastMod != "" {
		return lm == o.lastMod
	}
	return true
}

// Reopen opens the version the URL serves now (one HEAD), with the same
// client: what a follower switches to when Stat says the file changed.
func (o *Object) Reopen(ctx context.Context) (source.Source, error) {
	return o.c.Open(ctx, o.url)
}
