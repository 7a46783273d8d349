//go:build recfs_lean

package open

import "strings"

// The lean link (build tag recfs_lean) leaves the http(s):// source and
// net/http out: its row of the table of kinds (kinds.go) keeps the
// spelling, and its openers fail with ErrNotLinked (lean.go).

// HTTPOptions configure the client of http(s):// targets; the lean link
// has none.
type HTTPOptions struct{}

// isHTTPURL reports whether target is an http:// or https:// URL (as
// source/httprange.IsURL, which is not linked here).
func isHTTPURL(target string) bool {
	l := strings.ToLower(target)
	return strings.HasPrefix(l, "http://") || strings.HasPrefix(l, "https://")
}

var (
	httpTable = notLinkedTable
	httpTree  = notLinkedTree
	httpSeq   = notLinkedSeq
)
