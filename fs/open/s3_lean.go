//go:build recfs_lean

package open

import (
	"context"
	"strings"
)

// The lean link (build tag recfs_lean) leaves the S3 source and its SDK
// out: its rows of the table of kinds (kinds.go) keep the spelling, and
// their openers fail with ErrNotLinked (lean.go).

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

var (
	s3Table      = notLinkedTable
	s3ObjectTree = notLinkedTree
	s3PrefixTree = notLinkedTree
	s3Seq        = notLinkedSeq
)

// Publish would upload a saved index next to an s3:// object; the lean
// link fails with ErrNotLinked.
func Publish(_ context.Context, url, _ string, _ Options) (int, error) {
	return 0, notLinked(url)
}
