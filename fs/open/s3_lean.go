//go:build recfs_lean

package open

import (
	"context"
	"fmt"
	"strings"

	"github.com/recfs/recfs/fs"
	"github.com/recfs/recfs/index"
)

// The lean link (build tag recfs_lean) leaves the S3 source and its SDK
// out: s3:// targets fail with ErrNotLinked. The recfs command never gets
// here with one — its lean binary hands such command lines to recfs-full.

// SidecarSuffix names the published index of an object (see the full
// build's documentation).
const SidecarSuffix = ".recfs-idx"

// S3Options configure the client of s3:// targets; the lean link has none.
type S3Options struct{}

// s3IsPrefix tells an s3:// URL of a prefix from one of an object.
func s3IsPrefix(url string) bool {
	_, key, _ := strings.Cut(strings.TrimPrefix(url, "s3://"), "/")
	return key == "" || strings.HasSuffix(key, "/")
}

func notLinked(url string) error { return fmt.Errorf("%s: %w", url, ErrNotLinked) }

func s3Table(_ context.Context, url string, _ Options) (*index.Table, any, any, error) {
	return nil, nil, nil, notLinked(url)
}

func s3Seq(_ context.Context, url string, _ Options) (Seq, error) {
	return Seq{}, notLinked(url)
}

func s3ObjectTree(_ context.Context, url string, _ TreeOptions) (*fs.Tree, error) {
	return nil, notLinked(url)
}

func s3PrefixTree(_ context.Context, url string, _ TreeOptions) (*fs.Tree, error) {
	return nil, notLinked(url)
}

// Publish would upload a saved index next to an s3:// object; the lean
// link fails with ErrNotLinked.
func Publish(_ context.Context, url, _ string, _ Options) (int, error) {
	return 0, notLinked(url)
}
