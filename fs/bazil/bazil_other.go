//go:build !linux

// Package bazil serves an fs.Tree through bazil.org/fuse on Linux. The
// library builds on Linux and FreeBSD only (and FreeBSD not with the
// golang.org/x/sys this module uses), so elsewhere Mount reports
// fs.ErrNotSupported.
package bazil

import "github.com/recfs/recfs/fs"

var _ fs.Mounter = Mount

// Mount reports fs.ErrNotSupported: the bazil backend is Linux-only.
func Mount(dir string, tree *fs.Tree, o fs.MountOptions) (fs.Server, error) {
	return nil, fs.ErrNotSupported
}
