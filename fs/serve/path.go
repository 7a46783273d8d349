package serve

import (
	"context"
	"errors"
	iofs "io/fs"
	"strings"
	"syscall"

	"github.com/recfs/recfs/fs"
)

// ErrBadPath is returned for a request path that names nothing a tree can
// hold: a "." or ".." element, an empty element inside the path, a NUL
// byte or a backslash. Requests are resolved one name at a time from the
// root of the tree, so no path can leave it; such names are refused
// before any lookup.
var ErrBadPath = errors.New("serve: bad path")

// Split splits a slash-separated request path (already unescaped, as
// net/http's URL.Path is) into names below the root. Leading and
// trailing slashes are ignored; "" and "/" are the root.
func Split(p string) ([]string, error) {
	p = strings.Trim(p, "/")
	if p == "" {
		return nil, nil
	}
	names := strings.Split(p, "/")
	for _, n := range names {
		if n == "" || n == "." || n == ".." || strings.ContainsAny(n, "\x00\\") {
			return nil, ErrBadPath
		}
	}
	return names, nil
}

// Walk resolves names from the root of t with the tree's Lookup, one name
// at a time. It returns the node and its parent (the root's parent is
// the root). A missing name gives an error matching io/fs.ErrNotExist.
func Walk(ctx context.Context, t *fs.Tree, names []string) (n, parent fs.Node, err error) {
	n = t.Root()
	parent = n
	for _, name := range names {
		c, err := t.Lookup(ctx, n, name)
		if err != nil {
			return fs.Node{}, fs.Node{}, err
		}
		parent, n = n, c
	}
	return n, parent, nil
}

// Resolve splits the request path p and walks it (see [Split], [Walk]).
func Resolve(ctx context.Context, t *fs.Tree, p string) (n, parent fs.Node, err error) {
	names, err := Split(p)
	if err != nil {
		return fs.Node{}, fs.Node{}, err
	}
	return Walk(ctx, t, names)
}

// NotFound reports whether err means that a path names nothing: a missing
// name, a name below a file, or a bad path.
func NotFound(err error) bool {
	return errors.Is(err, iofs.ErrNotExist) || errors.Is(err, ErrBadPath) || fs.Errno(err) == syscall.ENOTDIR
}
