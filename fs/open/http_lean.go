//go:build recfs_lean

package open

import (
	"context"
	"strings"

	"github.com/recfs/recfs/fs"
	"github.com/recfs/recfs/index"
)

// The lean link (build tag recfs_lean) leaves the http(s):// source and
// net/http out: http(s):// targets fail with ErrNotLinked. The recfs
// command never gets here with one — its lean binary hands such command
// lines to recfs-full.

// HTTPOptions configure the client of http(s):// targets; the lean link
// has none.
type HTTPOptions struct{}

// isHTTPURL reports whether target is an http:// or https:// URL (as
// source/httprange.IsURL, which is not linked here).
func isHTTPURL(target string) bool {
	l := strings.ToLower(target)
	return strings.HasPrefix(l, "http://") || strings.HasPrefix(l, "https://")
}

func httpTable(_ context.Context, url string, _ Options) (*index.Table, any, error) {
	return nil, nil, notLinked(url)
}

func httpTree(_ context.Context, url string, _ TreeOptions) (*fs.Tree, error) {
	return nil, notLinked(url)
}

func httpSeq(_ context.Context, url string, _ Options) (Seq, error) {
	return Seq{}, notLinked(url)
}
