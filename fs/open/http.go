//go:build !recfs_lean

package open

import (
	"context"
	"fmt"

	"github.com/sirupsen/logrus"

	"github.com/recfs/recfs/fs"
	"github.com/recfs/recfs/index"
	"github.com/recfs/recfs/source/httprange"
)

// The http(s):// source, in the default build; the lean link (build tag
// recfs_lean) leaves it and net/http out (http_lean.go).

// HTTPOptions configure the client of http(s):// targets.
type HTTPOptions = httprange.Options

// isHTTPURL reports whether target is an http:// or https:// URL.
func isHTTPURL(target string) bool { return httprange.IsURL(target) }

// openHTTP opens the file an http(s):// URL serves (one HEAD).
func openHTTP(ctx context.Context, url string, o Options) (*httprange.Object, error) {
	return httprange.NewClient(o.HTTP).Open(ctx, url)
}

// httpTable is Table for an http(s):// URL (its row's opener).
func httpTable(ctx context.Context, url string, o Options) (*index.Table, error) {
	t, _, err := httpObjectTable(ctx, url, o)
	return t, err
}

// httpObjectTable is Table for an http(s):// URL, and its object: its table loaded from the
// cache when one was saved for its version, else built by ranged GETs
// (and saved).
func httpObjectTable(ctx context.Context, url string, o Options) (*index.Table, *httprange.Object, error) {
	obj, err := openHTTP(ctx, url, o)
	if err != nil {
		return nil, nil, err
	}
	io := indexOptions(url, o.Index)
	done := o.progress("indexing "+url, &io)
	t, err := index.OpenSource(ctx, obj, io)
	done()
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", url, err)
	}
	return t, obj, nil
}

// httpTree is the read-only tree of the file an http(s):// URL serves;
// with follow, a new version (ETag, Last-Modified or length) replaces it.
func httpTree(ctx context.Context, url string, o TreeOptions) (*fs.Tree, error) {
	t, obj, err := httpObjectTable(ctx, url, o.Options)
	if err != nil {
		return nil, err
	}
	logrus.WithFields(logrus.Fields{"url": url, "follow": o.Follow}).Info("http file mounted read-only")
	return objectTree(url, t, obj, obj.ModTime(), o)
}

// httpSeq is Sequential for an http(s):// URL.
func httpSeq(ctx context.Context, url string, o Options) (Seq, error) {
	obj, err := openHTTP(ctx, url, o)
	if err != nil {
		return Seq{}, err
	}
	return remoteSeq(ctx, url, obj, o)
}
